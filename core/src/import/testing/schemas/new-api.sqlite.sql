-- new-api's tables as GORM's AutoMigrate creates them on SQLite, derived by hand from the models of
-- github.com/QuantumNous/new-api (each file as stored at the commit named):
--   model/user.go, model/topup.go   0089a12fdcafe8ba57a961f31ce8929f47e22270
--   model/token.go                  0067bd93739dbf07a62b656afe48d71ddcefae4f
--   model/channel.go                0102ffab86da3461be812c605d92800649e6eb06
--   model/redemption.go             03f1eccae6b39bd33e755eff91af58f1e5104355
--   model/midjourney.go             515769c43c9ca0bf495397eb7dfed68aedf345be
--   model/task.go                   01d7dcfdab0e1a735a74d30249215974e7c86895
--   model/log.go                    00423442d4ccdcc68fc962809e2623b1ee13b63e
--   model/usedata.go (QuotaData, the shape without use_group/token_id/channel_id/node_name)
--   model/ability.go                004a70dc87e9cf29738688547039e930cfba324c
--   model/option.go                 014c3ef97ced08e3d63662d2b81d818280b21563
--   model/twofa.go                  0417e0b950d9015a8976b53aba77a6d9ad9874e4
--   model/passkey.go                2499e4f0ac966318b9092a4a255cbcb0fc7b6c0d
--   model/checkin.go                22ad944242cbd6fe74dac8b507e09bef0bbab34e
--   model/setup.go (Setup: id, version varchar(50) not null, initialized_at bigint not null; as stored in the index)
-- GORM's SQLite type rules applied: Go int/int64 -> integer, the int primary key -> integer PRIMARY KEY AUTOINCREMENT,
-- string -> text, bool -> numeric, float64 -> real, gorm.DeletedAt -> datetime; `type:`/`size:` as written (size -> text).
-- Indexes are left out: the import reads columns, not indexes.

CREATE TABLE "users" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "username" text,
  "password" text NOT NULL,
  "display_name" text,
  "role" int DEFAULT 1,
  "status" int DEFAULT 1,
  "email" text,
  "github_id" text,
  "discord_id" text,
  "oidc_id" text,
  "wechat_id" text,
  "telegram_id" text,
  "access_token" char(32),
  "quota" int DEFAULT 0,
  "used_quota" int DEFAULT 0,
  "request_count" int DEFAULT 0,
  "group" varchar(64) DEFAULT 'default',
  "aff_code" varchar(32),
  "aff_count" int DEFAULT 0,
  "aff_quota" int DEFAULT 0,
  "aff_history" int DEFAULT 0,
  "inviter_id" int,
  "invite_rebate_eligible" numeric DEFAULT false,
  "deleted_at" datetime,
  "linux_do_id" text,
  "setting" text,
  "remark" varchar(255),
  "stripe_customer" varchar(64),
  "created_at" integer,
  "last_login_at" integer DEFAULT 0,
  "auth_version" bigint NOT NULL DEFAULT 1
);
CREATE TABLE "tokens" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "user_id" integer,
  "key" varchar(128),
  "status" integer DEFAULT 1,
  "name" text,
  "created_time" integer,
  "accessed_time" integer,
  "expired_time" integer DEFAULT -1,
  "remain_quota" integer DEFAULT 0,
  "unlimited_quota" numeric,
  "model_limits_enabled" numeric,
  "model_limits" text,
  "allow_ips" text DEFAULT '',
  "used_quota" integer DEFAULT 0,
  "group" text DEFAULT '',
  "cross_group_retry" numeric,
  "billing_type" integer DEFAULT 0,
  "deleted_at" datetime
);
CREATE TABLE "channels" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "type" integer DEFAULT 0,
  "key" text NOT NULL,
  "openai_organization" text,
  "test_model" text,
  "status" integer DEFAULT 1,
  "name" text,
  "weight" integer DEFAULT 0,
  "created_time" integer,
  "test_time" integer,
  "response_time" integer,
  "base_url" text DEFAULT '',
  "other" text,
  "balance" real,
  "balance_updated_time" integer,
  "models" text,
  "group" varchar(64) DEFAULT 'default',
  "used_quota" integer DEFAULT 0,
  "model_mapping" text,
  "status_code_mapping" varchar(1024) DEFAULT '',
  "priority" integer DEFAULT 0,
  "auto_ban" integer DEFAULT 1,
  "need_reconcile" integer DEFAULT 0,
  "other_info" text,
  "tag" text,
  "setting" text,
  "param_override" text,
  "header_override" text,
  "remark" varchar(255),
  "channel_info" json,
  "settings" text
);
CREATE TABLE "redemptions" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "user_id" integer,
  "key" char(32),
  "status" integer DEFAULT 1,
  "name" text,
  "quota" integer DEFAULT 100,
  "created_time" integer,
  "redeemed_time" integer,
  "used_user_id" integer,
  "deleted_at" datetime,
  "expired_time" integer
);
CREATE TABLE "top_ups" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "user_id" integer,
  "amount" integer,
  "money" real,
  "trade_no" varchar(255),
  "payment_method" varchar(50),
  "payment_provider" varchar(50) DEFAULT '',
  "create_time" integer,
  "complete_time" integer,
  "status" text
);
CREATE TABLE "midjourneys" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "code" integer,
  "user_id" integer,
  "action" varchar(40),
  "mj_id" text,
  "prompt" text,
  "prompt_en" text,
  "description" text,
  "state" text,
  "submit_time" integer,
  "start_time" integer,
  "finish_time" integer,
  "image_url" text,
  "video_url" text,
  "video_urls" text,
  "status" varchar(20),
  "progress" varchar(30),
  "fail_reason" text,
  "channel_id" integer,
  "quota" integer,
  "token_id" integer DEFAULT 0,
  "billing_channel_id" integer DEFAULT 0,
  "buttons" text,
  "properties" text
);
CREATE TABLE "tasks" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "created_at" integer,
  "updated_at" integer,
  "task_id" varchar(191),
  "platform" varchar(30),
  "user_id" integer,
  "group" varchar(50),
  "channel_id" integer,
  "quota" integer,
  "action" varchar(40),
  "status" varchar(20),
  "fail_reason" text,
  "submit_time" integer,
  "start_time" integer,
  "finish_time" integer,
  "progress" varchar(20),
  "properties" json,
  "private_data" json,
  "data" json
);
CREATE TABLE "logs" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "user_id" integer,
  "created_at" integer,
  "type" integer,
  "content" text,
  "username" text DEFAULT '',
  "token_name" text DEFAULT '',
  "model_name" text DEFAULT '',
  "quota" integer DEFAULT 0,
  "prompt_tokens" integer DEFAULT 0,
  "completion_tokens" integer DEFAULT 0,
  "use_time" integer DEFAULT 0,
  "is_stream" numeric,
  "channel_id" integer,
  "token_id" integer DEFAULT 0,
  "group" text,
  "ip" text DEFAULT '',
  "other" text
);
CREATE TABLE "quota_data" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "user_id" integer,
  "username" text DEFAULT '',
  "model_name" text DEFAULT '',
  "created_at" integer,
  "token_used" integer DEFAULT 0,
  "count" integer DEFAULT 0,
  "quota" integer DEFAULT 0
);
CREATE TABLE "options" (
  "key" text,
  "value" text,
  PRIMARY KEY ("key")
);
CREATE TABLE "setups" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "version" varchar(50) NOT NULL,
  "initialized_at" integer NOT NULL
);
CREATE TABLE "abilities" (
  "group" varchar(64),
  "model" varchar(255),
  "channel_id" integer,
  "enabled" numeric,
  "priority" integer DEFAULT 0,
  "weight" integer DEFAULT 0,
  "tag" text,
  PRIMARY KEY ("group","model","channel_id")
);
CREATE TABLE "two_fas" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "user_id" integer NOT NULL UNIQUE,
  "secret" varchar(255) NOT NULL,
  "is_enabled" numeric,
  "failed_attempts" integer DEFAULT 0,
  "locked_until" datetime,
  "last_used_at" datetime,
  "created_at" datetime,
  "updated_at" datetime,
  "deleted_at" datetime
);

CREATE TABLE "two_fa_backup_codes" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "user_id" integer NOT NULL,
  "code_hash" varchar(255) NOT NULL,
  "is_used" numeric,
  "used_at" datetime,
  "created_at" datetime,
  "deleted_at" datetime
);
CREATE TABLE "passkey_credentials" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "user_id" integer NOT NULL,
  "credential_id" varchar(512) NOT NULL UNIQUE,
  "public_key" text NOT NULL,
  "attestation_type" varchar(255),
  "aaguid" varchar(512),
  "sign_count" integer DEFAULT 0,
  "clone_warning" numeric,
  "user_present" numeric,
  "user_verified" numeric,
  "backup_eligible" numeric,
  "backup_state" numeric,
  "transports" text,
  "attachment" varchar(32),
  "last_used_at" datetime,
  "created_at" datetime,
  "updated_at" datetime,
  "deleted_at" datetime
);
CREATE TABLE "checkins" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "user_id" integer NOT NULL,
  "checkin_date" varchar(10) NOT NULL,
  "quota_awarded" integer NOT NULL,
  "created_at" integer
);
CREATE TABLE "subscription_plans" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "title" varchar(128) NOT NULL,
  "subtitle" varchar(255) DEFAULT '',
  "price_amount" real NOT NULL DEFAULT 0,
  "currency" varchar(8) NOT NULL DEFAULT 'USD',
  "duration_unit" varchar(16) NOT NULL DEFAULT 'month',
  "duration_value" int NOT NULL DEFAULT 1,
  "custom_seconds" bigint NOT NULL DEFAULT 0,
  "enabled" numeric DEFAULT 1,
  "sort_order" int DEFAULT 0,
  "allow_balance_pay" numeric DEFAULT 1,
  "stripe_price_id" varchar(128) DEFAULT '',
  "creem_product_id" varchar(128) DEFAULT '',
  "max_purchase_per_user" int DEFAULT 0,
  "upgrade_group" varchar(64) DEFAULT '',
  "total_amount" bigint NOT NULL DEFAULT 0,
  "quota_reset_period" varchar(16) DEFAULT 'never',
  "quota_reset_custom_seconds" bigint DEFAULT 0,
  "created_at" bigint,
  "updated_at" bigint
);
CREATE TABLE "user_subscriptions" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "user_id" bigint,
  "plan_id" bigint,
  "amount_total" bigint NOT NULL DEFAULT 0,
  "amount_used" bigint NOT NULL DEFAULT 0,
  "start_time" bigint,
  "end_time" bigint,
  "status" varchar(32),
  "source" varchar(32) DEFAULT 'order',
  "last_reset_time" bigint DEFAULT 0,
  "next_reset_time" bigint DEFAULT 0,
  "upgrade_group" varchar(64) DEFAULT '',
  "prev_user_group" varchar(64) DEFAULT '',
  "created_at" bigint,
  "updated_at" bigint
);
