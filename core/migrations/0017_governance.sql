CREATE TABLE "audit_logs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"created_at" bigint NOT NULL,
	"actor_type" varchar(16) NOT NULL,
	"actor_id" integer DEFAULT 0 NOT NULL,
	"actor_name" varchar(128) DEFAULT '' NOT NULL,
	"kind" varchar(32) NOT NULL,
	"action" varchar(64) NOT NULL,
	"target_ids" text DEFAULT '' NOT NULL,
	"outcome" varchar(16) NOT NULL,
	"message" text DEFAULT '' NOT NULL,
	"source" varchar(255) DEFAULT '' NOT NULL,
	"ip" varchar(64) DEFAULT '' NOT NULL,
	"user_agent" varchar(255) DEFAULT '' NOT NULL,
	"request_id" varchar(64) DEFAULT '' NOT NULL,
	"before" text DEFAULT '' NOT NULL,
	"after" text DEFAULT '' NOT NULL,
	"request" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "checkins" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"checkin_date" varchar(10) NOT NULL,
	"quota_awarded" bigint NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "content_log_tokens" (
	"token_id" integer PRIMARY KEY NOT NULL,
	"enabled_by" integer NOT NULL,
	"enabled_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "content_logs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"request_id" varchar(64) NOT NULL,
	"user_id" integer NOT NULL,
	"token_id" integer DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	"model_name" varchar(255) DEFAULT '' NOT NULL,
	"prompt" text DEFAULT '' NOT NULL,
	"answer" text DEFAULT '' NOT NULL,
	"truncated" boolean DEFAULT false NOT NULL,
	"redactions" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX "idx_audit_logs_created_at" ON "audit_logs" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "idx_audit_logs_actor_created_at" ON "audit_logs" USING btree ("actor_id","created_at");--> statement-breakpoint
CREATE INDEX "idx_audit_logs_kind_created_at" ON "audit_logs" USING btree ("kind","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "idx_user_checkin_date" ON "checkins" USING btree ("user_id","checkin_date");--> statement-breakpoint
CREATE INDEX "idx_content_logs_request_id" ON "content_logs" USING btree ("request_id");--> statement-breakpoint
CREATE INDEX "idx_content_logs_created_at" ON "content_logs" USING btree ("created_at");