CREATE TABLE "stored_responses" (
	"id" varchar(128) PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"token_id" integer DEFAULT 0 NOT NULL,
	"channel_id" integer DEFAULT 0 NOT NULL,
	"is_upstream_held" boolean DEFAULT false NOT NULL,
	"model" varchar(255) DEFAULT '' NOT NULL,
	"previous_response_id" varchar(128),
	"input" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"response" jsonb NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "idx_stored_responses_expires_at" ON "stored_responses" USING btree ("expires_at");