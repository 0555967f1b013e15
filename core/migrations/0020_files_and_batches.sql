CREATE TABLE "batch_results" (
	"batch_id" varchar(64) NOT NULL,
	"line" integer NOT NULL,
	"custom_id" varchar(191) NOT NULL,
	"served" integer NOT NULL,
	"output" jsonb NOT NULL,
	"quota" bigint DEFAULT 0 NOT NULL,
	"prompt_tokens" integer DEFAULT 0 NOT NULL,
	"completion_tokens" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "batch_results_batch_id_line_pk" PRIMARY KEY("batch_id","line")
);
--> statement-breakpoint
CREATE TABLE "batches" (
	"id" varchar(64) PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"token_id" integer NOT NULL,
	"token_limited" integer DEFAULT 0 NOT NULL,
	"channel_id" integer NOT NULL,
	"mode" varchar(16) NOT NULL,
	"model" varchar(191) NOT NULL,
	"endpoint" varchar(64) NOT NULL,
	"status" varchar(16) NOT NULL,
	"input_file_id" varchar(64) NOT NULL,
	"output_file_id" varchar(64),
	"error_file_id" varchar(64),
	"completion_window" varchar(16) DEFAULT '24h' NOT NULL,
	"upstream_id" varchar(191) DEFAULT '' NOT NULL,
	"upstream_file_id" varchar(191) DEFAULT '' NOT NULL,
	"total" integer NOT NULL,
	"completed" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"held" bigint NOT NULL,
	"charged" bigint DEFAULT 0 NOT NULL,
	"pricing" jsonb NOT NULL,
	"username" varchar(64) DEFAULT '' NOT NULL,
	"token_name" varchar(64) DEFAULT '' NOT NULL,
	"group" varchar(64) DEFAULT '' NOT NULL,
	"metadata" jsonb,
	"errors" jsonb,
	"created_at" bigint NOT NULL,
	"in_progress_at" bigint,
	"finalizing_at" bigint,
	"completed_at" bigint,
	"failed_at" bigint,
	"expired_at" bigint,
	"cancelling_at" bigint,
	"cancelled_at" bigint,
	"expires_at" bigint NOT NULL,
	"settled_at" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "file_contents" (
	"file_id" varchar(64) PRIMARY KEY NOT NULL,
	"content" "bytea" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "files" (
	"id" varchar(64) PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"token_id" integer DEFAULT 0 NOT NULL,
	"purpose" varchar(32) NOT NULL,
	"filename" varchar(255) NOT NULL,
	"bytes" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint DEFAULT 0 NOT NULL,
	"storage" varchar(16) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "fine_tuning_jobs" (
	"id" varchar(64) PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"token_id" integer NOT NULL,
	"token_limited" integer DEFAULT 0 NOT NULL,
	"channel_id" integer NOT NULL,
	"upstream_id" varchar(191) DEFAULT '' NOT NULL,
	"model" varchar(191) NOT NULL,
	"training_file" varchar(64) NOT NULL,
	"validation_file" varchar(64),
	"status" varchar(32) NOT NULL,
	"job" jsonb,
	"usd_per_million" jsonb NOT NULL,
	"held" bigint NOT NULL,
	"charged" bigint DEFAULT 0 NOT NULL,
	"username" varchar(64) DEFAULT '' NOT NULL,
	"token_name" varchar(64) DEFAULT '' NOT NULL,
	"group" varchar(64) DEFAULT '' NOT NULL,
	"created_at" bigint NOT NULL,
	"settled_at" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX "idx_batches_user_id" ON "batches" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "idx_batches_settled_at" ON "batches" USING btree ("settled_at");--> statement-breakpoint
CREATE INDEX "idx_files_user_id" ON "files" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "idx_fine_tuning_jobs_user_id" ON "fine_tuning_jobs" USING btree ("user_id","created_at");