CREATE TABLE "abilities" (
	"group" varchar(64) NOT NULL,
	"model" varchar(255) NOT NULL,
	"channel_id" integer NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"priority" bigint DEFAULT 0 NOT NULL,
	"weight" integer DEFAULT 0 NOT NULL,
	"tag" varchar(255),
	CONSTRAINT "abilities_group_model_channel_id_pk" PRIMARY KEY("group","model","channel_id")
);
--> statement-breakpoint
CREATE TABLE "channels" (
	"id" serial PRIMARY KEY NOT NULL,
	"type" integer DEFAULT 0 NOT NULL,
	"key" text NOT NULL,
	"openai_organization" text,
	"test_model" text,
	"status" integer DEFAULT 1 NOT NULL,
	"name" varchar(255) DEFAULT '' NOT NULL,
	"weight" integer DEFAULT 0 NOT NULL,
	"created_time" bigint DEFAULT 0 NOT NULL,
	"test_time" bigint DEFAULT 0 NOT NULL,
	"response_time" integer DEFAULT 0 NOT NULL,
	"base_url" text DEFAULT '' NOT NULL,
	"other" text DEFAULT '' NOT NULL,
	"balance" double precision DEFAULT 0 NOT NULL,
	"balance_updated_time" bigint DEFAULT 0 NOT NULL,
	"models" text DEFAULT '' NOT NULL,
	"group" varchar(255) DEFAULT 'default' NOT NULL,
	"used_quota" bigint DEFAULT 0 NOT NULL,
	"model_mapping" text,
	"status_code_mapping" varchar(1024),
	"priority" bigint DEFAULT 0 NOT NULL,
	"auto_ban" integer DEFAULT 1 NOT NULL,
	"other_info" text,
	"tag" varchar(255),
	"setting" text,
	"param_override" text
);
--> statement-breakpoint
CREATE TABLE "logs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"user_id" integer DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	"type" integer DEFAULT 0 NOT NULL,
	"content" text DEFAULT '' NOT NULL,
	"username" varchar(64) DEFAULT '' NOT NULL,
	"token_name" varchar(64) DEFAULT '' NOT NULL,
	"model_name" varchar(255) DEFAULT '' NOT NULL,
	"quota" bigint DEFAULT 0 NOT NULL,
	"prompt_tokens" integer DEFAULT 0 NOT NULL,
	"completion_tokens" integer DEFAULT 0 NOT NULL,
	"use_time" integer DEFAULT 0 NOT NULL,
	"is_stream" boolean DEFAULT false NOT NULL,
	"channel_id" integer DEFAULT 0 NOT NULL,
	"token_id" integer DEFAULT 0 NOT NULL,
	"group" varchar(64) DEFAULT '' NOT NULL,
	"ip" varchar(64) DEFAULT '' NOT NULL,
	"request_id" varchar(64),
	"other" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "midjourneys" (
	"id" serial PRIMARY KEY NOT NULL,
	"code" integer DEFAULT 0 NOT NULL,
	"user_id" integer DEFAULT 0 NOT NULL,
	"action" varchar(40) DEFAULT '' NOT NULL,
	"mj_id" varchar(191) DEFAULT '' NOT NULL,
	"prompt" text DEFAULT '' NOT NULL,
	"prompt_en" text DEFAULT '' NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"state" text DEFAULT '' NOT NULL,
	"submit_time" bigint DEFAULT 0 NOT NULL,
	"start_time" bigint DEFAULT 0 NOT NULL,
	"finish_time" bigint DEFAULT 0 NOT NULL,
	"image_url" text DEFAULT '' NOT NULL,
	"status" varchar(20) DEFAULT '' NOT NULL,
	"progress" varchar(30) DEFAULT '' NOT NULL,
	"fail_reason" text DEFAULT '' NOT NULL,
	"channel_id" integer DEFAULT 0 NOT NULL,
	"quota" bigint DEFAULT 0 NOT NULL,
	"buttons" text DEFAULT '' NOT NULL,
	"properties" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "options" (
	"key" varchar(255) PRIMARY KEY NOT NULL,
	"value" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "quota_data" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"username" varchar(64) DEFAULT '' NOT NULL,
	"model_name" varchar(255) DEFAULT '' NOT NULL,
	"created_at" bigint NOT NULL,
	"token_used" bigint DEFAULT 0 NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	"quota" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "redemptions" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer DEFAULT 0 NOT NULL,
	"key" varchar(32) NOT NULL,
	"status" integer DEFAULT 1 NOT NULL,
	"name" varchar(255) DEFAULT '' NOT NULL,
	"quota" bigint DEFAULT 100 NOT NULL,
	"created_time" bigint DEFAULT 0 NOT NULL,
	"redeemed_time" bigint DEFAULT 0 NOT NULL,
	"used_user_id" integer DEFAULT 0 NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "redemptions_key_unique" UNIQUE("key")
);
--> statement-breakpoint
CREATE TABLE "setups" (
	"id" serial PRIMARY KEY NOT NULL,
	"version" varchar(50) DEFAULT '' NOT NULL,
	"initialized_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"created_at" bigint DEFAULT 0 NOT NULL,
	"updated_at" bigint DEFAULT 0 NOT NULL,
	"task_id" varchar(191) DEFAULT '' NOT NULL,
	"platform" varchar(30) DEFAULT '' NOT NULL,
	"user_id" integer DEFAULT 0 NOT NULL,
	"channel_id" integer DEFAULT 0 NOT NULL,
	"quota" bigint DEFAULT 0 NOT NULL,
	"action" varchar(40) DEFAULT '' NOT NULL,
	"status" varchar(20) DEFAULT '' NOT NULL,
	"fail_reason" text DEFAULT '' NOT NULL,
	"submit_time" bigint DEFAULT 0 NOT NULL,
	"start_time" bigint DEFAULT 0 NOT NULL,
	"finish_time" bigint DEFAULT 0 NOT NULL,
	"progress" varchar(20) DEFAULT '' NOT NULL,
	"properties" jsonb,
	"data" jsonb
);
--> statement-breakpoint
CREATE TABLE "tokens" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"key" varchar(48) NOT NULL,
	"status" integer DEFAULT 1 NOT NULL,
	"name" varchar(64) DEFAULT '' NOT NULL,
	"created_time" bigint DEFAULT 0 NOT NULL,
	"accessed_time" bigint DEFAULT 0 NOT NULL,
	"expired_time" bigint DEFAULT -1 NOT NULL,
	"remain_quota" bigint DEFAULT 0 NOT NULL,
	"unlimited_quota" boolean DEFAULT false NOT NULL,
	"model_limits_enabled" boolean DEFAULT false NOT NULL,
	"model_limits" text DEFAULT '' NOT NULL,
	"allow_ips" text DEFAULT '' NOT NULL,
	"used_quota" bigint DEFAULT 0 NOT NULL,
	"group" varchar(64) DEFAULT '' NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "tokens_key_unique" UNIQUE("key")
);
--> statement-breakpoint
CREATE TABLE "top_ups" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"amount" integer DEFAULT 0 NOT NULL,
	"money" double precision DEFAULT 0 NOT NULL,
	"trade_no" varchar(255) NOT NULL,
	"payment_method" varchar(50) DEFAULT '' NOT NULL,
	"create_time" bigint DEFAULT 0 NOT NULL,
	"complete_time" bigint DEFAULT 0 NOT NULL,
	"status" varchar(20) DEFAULT 'pending' NOT NULL,
	CONSTRAINT "top_ups_trade_no_unique" UNIQUE("trade_no")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" serial PRIMARY KEY NOT NULL,
	"username" varchar(64) NOT NULL,
	"password" text NOT NULL,
	"display_name" varchar(64) DEFAULT '' NOT NULL,
	"role" integer DEFAULT 1 NOT NULL,
	"status" integer DEFAULT 1 NOT NULL,
	"email" varchar(255) DEFAULT '' NOT NULL,
	"github_id" varchar(255) DEFAULT '' NOT NULL,
	"oidc_id" varchar(255) DEFAULT '' NOT NULL,
	"wechat_id" varchar(255) DEFAULT '' NOT NULL,
	"telegram_id" varchar(255) DEFAULT '' NOT NULL,
	"linux_do_id" varchar(255) DEFAULT '' NOT NULL,
	"access_token" varchar(64),
	"quota" bigint DEFAULT 0 NOT NULL,
	"used_quota" bigint DEFAULT 0 NOT NULL,
	"request_count" integer DEFAULT 0 NOT NULL,
	"group" varchar(64) DEFAULT 'default' NOT NULL,
	"aff_code" varchar(32),
	"aff_count" integer DEFAULT 0 NOT NULL,
	"aff_quota" bigint DEFAULT 0 NOT NULL,
	"aff_history" bigint DEFAULT 0 NOT NULL,
	"inviter_id" integer DEFAULT 0 NOT NULL,
	"setting" text DEFAULT '' NOT NULL,
	"created_time" bigint DEFAULT 0 NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "users_username_unique" UNIQUE("username"),
	CONSTRAINT "users_access_token_unique" UNIQUE("access_token"),
	CONSTRAINT "users_aff_code_unique" UNIQUE("aff_code")
);
--> statement-breakpoint
CREATE INDEX "idx_abilities_channel_id" ON "abilities" USING btree ("channel_id");--> statement-breakpoint
CREATE INDEX "idx_abilities_priority" ON "abilities" USING btree ("priority");--> statement-breakpoint
CREATE INDEX "idx_abilities_weight" ON "abilities" USING btree ("weight");--> statement-breakpoint
CREATE INDEX "idx_abilities_tag" ON "abilities" USING btree ("tag");--> statement-breakpoint
CREATE INDEX "idx_channels_name" ON "channels" USING btree ("name");--> statement-breakpoint
CREATE INDEX "idx_channels_status" ON "channels" USING btree ("status");--> statement-breakpoint
CREATE INDEX "idx_channels_tag" ON "channels" USING btree ("tag");--> statement-breakpoint
CREATE INDEX "idx_logs_created_at_type" ON "logs" USING btree ("created_at","type");--> statement-breakpoint
CREATE INDEX "idx_logs_user_id_created_at" ON "logs" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "idx_logs_username_created_at" ON "logs" USING btree ("username","created_at");--> statement-breakpoint
CREATE INDEX "idx_logs_model_name_created_at" ON "logs" USING btree ("model_name","created_at");--> statement-breakpoint
CREATE INDEX "idx_logs_token_id_created_at" ON "logs" USING btree ("token_id","created_at");--> statement-breakpoint
CREATE INDEX "idx_logs_token_name" ON "logs" USING btree ("token_name");--> statement-breakpoint
CREATE INDEX "idx_logs_channel_id_created_at" ON "logs" USING btree ("channel_id","created_at");--> statement-breakpoint
CREATE INDEX "idx_logs_group_created_at" ON "logs" USING btree ("group","created_at");--> statement-breakpoint
CREATE INDEX "idx_logs_request_id" ON "logs" USING btree ("request_id");--> statement-breakpoint
CREATE INDEX "idx_midjourneys_user_id" ON "midjourneys" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "idx_midjourneys_action" ON "midjourneys" USING btree ("action");--> statement-breakpoint
CREATE INDEX "idx_midjourneys_mj_id" ON "midjourneys" USING btree ("mj_id");--> statement-breakpoint
CREATE INDEX "idx_midjourneys_submit_time" ON "midjourneys" USING btree ("submit_time");--> statement-breakpoint
CREATE INDEX "idx_midjourneys_status" ON "midjourneys" USING btree ("status");--> statement-breakpoint
CREATE INDEX "idx_midjourneys_progress" ON "midjourneys" USING btree ("progress");--> statement-breakpoint
CREATE INDEX "idx_midjourneys_channel_id" ON "midjourneys" USING btree ("channel_id");--> statement-breakpoint
CREATE UNIQUE INDEX "uq_quota_data_user_model_hour" ON "quota_data" USING btree ("user_id","model_name","created_at");--> statement-breakpoint
CREATE INDEX "idx_quota_data_created_at" ON "quota_data" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "idx_quota_data_model_username" ON "quota_data" USING btree ("model_name","username");--> statement-breakpoint
CREATE INDEX "idx_redemptions_name" ON "redemptions" USING btree ("name");--> statement-breakpoint
CREATE INDEX "idx_redemptions_deleted_at" ON "redemptions" USING btree ("deleted_at");--> statement-breakpoint
CREATE INDEX "idx_tasks_created_at" ON "tasks" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "idx_tasks_task_id" ON "tasks" USING btree ("task_id");--> statement-breakpoint
CREATE INDEX "idx_tasks_user_id" ON "tasks" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "idx_tasks_channel_id" ON "tasks" USING btree ("channel_id");--> statement-breakpoint
CREATE INDEX "idx_tasks_status" ON "tasks" USING btree ("status");--> statement-breakpoint
CREATE INDEX "idx_tasks_submit_time" ON "tasks" USING btree ("submit_time");--> statement-breakpoint
CREATE INDEX "idx_tasks_progress" ON "tasks" USING btree ("progress");--> statement-breakpoint
CREATE INDEX "idx_tokens_user_id" ON "tokens" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "idx_tokens_name" ON "tokens" USING btree ("name");--> statement-breakpoint
CREATE INDEX "idx_tokens_deleted_at" ON "tokens" USING btree ("deleted_at");--> statement-breakpoint
CREATE INDEX "idx_top_ups_user_id" ON "top_ups" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "idx_users_display_name" ON "users" USING btree ("display_name");--> statement-breakpoint
CREATE INDEX "idx_users_email" ON "users" USING btree ("email");--> statement-breakpoint
CREATE INDEX "idx_users_inviter_id" ON "users" USING btree ("inviter_id");--> statement-breakpoint
CREATE INDEX "idx_users_deleted_at" ON "users" USING btree ("deleted_at");--> statement-breakpoint
CREATE INDEX "idx_users_github_id" ON "users" USING btree ("github_id");--> statement-breakpoint
CREATE INDEX "idx_users_oidc_id" ON "users" USING btree ("oidc_id");--> statement-breakpoint
CREATE INDEX "idx_users_wechat_id" ON "users" USING btree ("wechat_id");--> statement-breakpoint
CREATE INDEX "idx_users_telegram_id" ON "users" USING btree ("telegram_id");--> statement-breakpoint
CREATE INDEX "idx_users_linux_do_id" ON "users" USING btree ("linux_do_id");