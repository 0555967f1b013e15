-- Issue 28, the console at scale (docs/adr/0031). The indexes on logs are IF NOT EXISTS so an operator with a large
-- table can build them beforehand with CREATE INDEX CONCURRENTLY under the same names and skip the long lock here.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE TABLE "log_days" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"username" varchar(64) NOT NULL,
	"model_name" varchar(255) NOT NULL,
	"token_name" varchar(64) NOT NULL,
	"channel_id" integer NOT NULL,
	"group" varchar(64) NOT NULL,
	"created_at" bigint NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	"quota" bigint DEFAULT 0 NOT NULL,
	"tokens" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "log_hours" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"username" varchar(64) NOT NULL,
	"model_name" varchar(255) NOT NULL,
	"created_at" bigint NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	"quota" bigint DEFAULT 0 NOT NULL,
	"tokens" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
DROP INDEX IF EXISTS "idx_logs_token_name";--> statement-breakpoint
CREATE UNIQUE INDEX "uq_log_days_key" ON "log_days" USING btree ("user_id","username","model_name","token_name","channel_id","group","created_at");--> statement-breakpoint
CREATE INDEX "idx_log_days_username_created_at" ON "log_days" USING btree ("username","created_at");--> statement-breakpoint
CREATE INDEX "idx_log_days_model_name_created_at" ON "log_days" USING btree ("model_name" varchar_pattern_ops,"created_at");--> statement-breakpoint
CREATE INDEX "idx_log_days_channel_id_created_at" ON "log_days" USING btree ("channel_id","created_at");--> statement-breakpoint
CREATE INDEX "idx_log_days_created_at" ON "log_days" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "uq_log_hours_user_name_model_hour" ON "log_hours" USING btree ("user_id","username","model_name","created_at");--> statement-breakpoint
CREATE INDEX "idx_log_hours_created_at" ON "log_hours" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "idx_logs_type_created_at" ON "logs" USING btree ("type","created_at");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "idx_logs_token_name_created_at" ON "logs" USING btree ("token_name","created_at");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "idx_logs_search_trgm" ON "logs" USING gin (("content" || chr(1) || "model_name" || chr(1) || "token_name" || chr(1) || "username") gin_trgm_ops);--> statement-breakpoint
-- log_hours and log_days follow the consume logs (type 2) in the statement that changes them: one aggregated upsert
-- per table and statement (transition tables), keys in a fixed order so two writers' batches lock shared rows in the
-- same order. A row whose logs are all gone is deleted.
CREATE FUNCTION "log_sums_follow"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE "log_hours" AS h
      SET "count" = h."count" - g."count", "quota" = h."quota" - g."quota", "tokens" = h."tokens" - g."tokens"
      FROM (
        SELECT "user_id", "username", "model_name", "created_at" - "created_at" % 3600 AS "start",
          count(*) AS "count", sum("quota") AS "quota", sum("prompt_tokens"::bigint + "completion_tokens") AS "tokens"
        FROM "removed" WHERE "type" = 2 GROUP BY 1, 2, 3, 4
      ) AS g
      WHERE h."user_id" = g."user_id" AND h."username" = g."username" AND h."model_name" = g."model_name"
        AND h."created_at" = g."start";
    DELETE FROM "log_hours" AS h
      USING (SELECT DISTINCT "user_id", "username", "model_name", "created_at" - "created_at" % 3600 AS "start"
        FROM "removed" WHERE "type" = 2) AS g
      WHERE h."user_id" = g."user_id" AND h."username" = g."username" AND h."model_name" = g."model_name"
        AND h."created_at" = g."start" AND h."count" <= 0;
    UPDATE "log_days" AS h
      SET "count" = h."count" - g."count", "quota" = h."quota" - g."quota", "tokens" = h."tokens" - g."tokens"
      FROM (
        SELECT "user_id", "username", "model_name", "token_name", "channel_id", "group", "created_at" - "created_at" % 86400 AS "start",
          count(*) AS "count", sum("quota") AS "quota", sum("prompt_tokens"::bigint + "completion_tokens") AS "tokens"
        FROM "removed" WHERE "type" = 2 GROUP BY 1, 2, 3, 4, 5, 6, 7
      ) AS g
      WHERE h."user_id" = g."user_id" AND h."username" = g."username" AND h."model_name" = g."model_name" AND h."token_name" = g."token_name" AND h."channel_id" = g."channel_id" AND h."group" = g."group"
        AND h."created_at" = g."start";
    DELETE FROM "log_days" AS h
      USING (SELECT DISTINCT "user_id", "username", "model_name", "token_name", "channel_id", "group", "created_at" - "created_at" % 86400 AS "start"
        FROM "removed" WHERE "type" = 2) AS g
      WHERE h."user_id" = g."user_id" AND h."username" = g."username" AND h."model_name" = g."model_name" AND h."token_name" = g."token_name" AND h."channel_id" = g."channel_id" AND h."group" = g."group"
        AND h."created_at" = g."start" AND h."count" <= 0;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO "log_hours" ("user_id", "username", "model_name", "created_at", "count", "quota", "tokens")
      SELECT "user_id", "username", "model_name", "created_at" - "created_at" % 3600, count(*), sum("quota"),
        sum("prompt_tokens"::bigint + "completion_tokens")
      FROM "added" WHERE "type" = 2 GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
      ON CONFLICT ("user_id", "username", "model_name", "created_at") DO UPDATE
        SET "count" = "log_hours"."count" + excluded."count", "quota" = "log_hours"."quota" + excluded."quota",
          "tokens" = "log_hours"."tokens" + excluded."tokens";
    INSERT INTO "log_days" ("user_id", "username", "model_name", "token_name", "channel_id", "group", "created_at", "count", "quota", "tokens")
      SELECT "user_id", "username", "model_name", "token_name", "channel_id", "group", "created_at" - "created_at" % 86400, count(*), sum("quota"),
        sum("prompt_tokens"::bigint + "completion_tokens")
      FROM "added" WHERE "type" = 2 GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
      ON CONFLICT ("user_id", "username", "model_name", "token_name", "channel_id", "group", "created_at") DO UPDATE
        SET "count" = "log_days"."count" + excluded."count", "quota" = "log_days"."quota" + excluded."quota",
          "tokens" = "log_days"."tokens" + excluded."tokens";
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE FUNCTION "log_sums_clear"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "log_hours";
  DELETE FROM "log_days";
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "logs_sums_insert" AFTER INSERT ON "logs" REFERENCING NEW TABLE AS "added"
  FOR EACH STATEMENT EXECUTE FUNCTION "log_sums_follow"();--> statement-breakpoint
CREATE TRIGGER "logs_sums_delete" AFTER DELETE ON "logs" REFERENCING OLD TABLE AS "removed"
  FOR EACH STATEMENT EXECUTE FUNCTION "log_sums_follow"();--> statement-breakpoint
CREATE TRIGGER "logs_sums_update" AFTER UPDATE ON "logs" REFERENCING OLD TABLE AS "removed" NEW TABLE AS "added"
  FOR EACH STATEMENT EXECUTE FUNCTION "log_sums_follow"();--> statement-breakpoint
CREATE TRIGGER "logs_sums_truncate" AFTER TRUNCATE ON "logs"
  FOR EACH STATEMENT EXECUTE FUNCTION "log_sums_clear"();--> statement-breakpoint
-- The logs already there; the triggers above hold the table's lock from here to the end of the migration.
INSERT INTO "log_hours" ("user_id", "username", "model_name", "created_at", "count", "quota", "tokens")
  SELECT "user_id", "username", "model_name", "created_at" - "created_at" % 3600, count(*), sum("quota"),
    sum("prompt_tokens"::bigint + "completion_tokens")
  FROM "logs" WHERE "type" = 2 GROUP BY 1, 2, 3, 4;--> statement-breakpoint
INSERT INTO "log_days" ("user_id", "username", "model_name", "token_name", "channel_id", "group", "created_at", "count", "quota", "tokens")
  SELECT "user_id", "username", "model_name", "token_name", "channel_id", "group", "created_at" - "created_at" % 86400, count(*), sum("quota"),
    sum("prompt_tokens"::bigint + "completion_tokens")
  FROM "logs" WHERE "type" = 2 GROUP BY 1, 2, 3, 4, 5, 6, 7;
