-- new-api's tables as GORM's AutoMigrate creates them on Postgres, derived by hand from the models of
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
-- GORM's Postgres type rules applied: Go int/int64/uint -> bigint (bigserial on the primary key), string -> text,
-- bool -> boolean, float64 -> decimal, gorm.DeletedAt -> timestamptz; `type:` as written, `size:n` -> varchar(n).
-- Indexes are left out: the import reads columns, not indexes.

CREATE TABLE "users" (
  "id" bigserial,
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
  "invite_rebate_eligible" boolean DEFAULT false,
  "deleted_at" timestamptz,
  "linux_do_id" text,
  "setting" text,
  "remark" varchar(255),
  "stripe_customer" varchar(64),
  "created_at" bigint,
  "last_login_at" bigint DEFAULT 0,
  "auth_version" bigint NOT NULL DEFAULT 1,
  PRIMARY KEY ("id")
);
CREATE TABLE "tokens" (
  "id" bigserial,
  "user_id" bigint,
  "key" varchar(128),
  "status" bigint DEFAULT 1,
  "name" text,
  "created_time" bigint,
  "accessed_time" bigint,
  "expired_time" bigint DEFAULT -1,
  "remain_quota" bigint DEFAULT 0,
  "unlimited_quota" boolean,
  "model_limits_enabled" boolean,
  "model_limits" text,
  "allow_ips" text DEFAULT '',
  "used_quota" bigint DEFAULT 0,
  "group" text DEFAULT '',
  "cross_group_retry" boolean,
  "billing_type" bigint DEFAULT 0,
  "deleted_at" timestamptz,
  PRIMARY KEY ("id")
);
CREATE TABLE "channels" (
  "id" bigserial,
  "type" bigint DEFAULT 0,
  "key" text NOT NULL,
  "openai_organization" text,
  "test_model" text,
  "status" bigint DEFAULT 1,
  "name" text,
  "weight" bigint DEFAULT 0,
  "created_time" bigint,
  "test_time" bigint,
  "response_time" bigint,
  "base_url" text DEFAULT '',
  "other" text,
  "balance" decimal,
  "balance_updated_time" bigint,
  "models" text,
  "group" varchar(64) DEFAULT 'default',
  "used_quota" bigint DEFAULT 0,
  "model_mapping" text,
  "status_code_mapping" varchar(1024) DEFAULT '',
  "priority" bigint DEFAULT 0,
  "auto_ban" bigint DEFAULT 1,
  "need_reconcile" bigint DEFAULT 0,
  "other_info" text,
  "tag" text,
  "setting" text,
  "param_override" text,
  "header_override" text,
  "remark" varchar(255),
  "channel_info" json,
  "settings" text,
  PRIMARY KEY ("id")
);
CREATE TABLE "redemptions" (
  "id" bigserial,
  "user_id" bigint,
  "key" char(32),
  "status" bigint DEFAULT 1,
  "name" text,
  "quota" bigint DEFAULT 100,
  "created_time" bigint,
  "redeemed_time" bigint,
  "used_user_id" bigint,
  "deleted_at" timestamptz,
  "expired_time" bigint,
  PRIMARY KEY ("id")
);
CREATE TABLE "top_ups" (
  "id" bigserial,
  "user_id" bigint,
  "amount" bigint,
  "money" decimal,
  "trade_no" varchar(255),
  "payment_method" varchar(50),
  "payment_provider" varchar(50) DEFAULT '',
  "create_time" bigint,
  "complete_time" bigint,
  "status" text,
  PRIMARY KEY ("id")
);
CREATE TABLE "midjourneys" (
  "id" bigserial,
  "code" bigint,
  "user_id" bigint,
  "action" varchar(40),
  "mj_id" text,
  "prompt" text,
  "prompt_en" text,
  "description" text,
  "state" text,
  "submit_time" bigint,
  "start_time" bigint,
  "finish_time" bigint,
  "image_url" text,
  "video_url" text,
  "video_urls" text,
  "status" varchar(20),
  "progress" varchar(30),
  "fail_reason" text,
  "channel_id" bigint,
  "quota" bigint,
  "token_id" bigint DEFAULT 0,
  "billing_channel_id" bigint DEFAULT 0,
  "buttons" text,
  "properties" text,
  PRIMARY KEY ("id")
);
CREATE TABLE "tasks" (
  "id" bigserial,
  "created_at" bigint,
  "updated_at" bigint,
  "task_id" varchar(191),
  "platform" varchar(30),
  "user_id" bigint,
  "group" varchar(50),
  "channel_id" bigint,
  "quota" bigint,
  "action" varchar(40),
  "status" varchar(20),
  "fail_reason" text,
  "submit_time" bigint,
  "start_time" bigint,
  "finish_time" bigint,
  "progress" varchar(20),
  "properties" json,
  "private_data" json,
  "data" json,
  PRIMARY KEY ("id")
);
CREATE TABLE "logs" (
  "id" bigserial,
  "user_id" bigint,
  "created_at" bigint,
  "type" bigint,
  "content" text,
  "username" text DEFAULT '',
  "token_name" text DEFAULT '',
  "model_name" text DEFAULT '',
  "quota" bigint DEFAULT 0,
  "prompt_tokens" bigint DEFAULT 0,
  "completion_tokens" bigint DEFAULT 0,
  "use_time" bigint DEFAULT 0,
  "is_stream" boolean,
  "channel_id" bigint,
  "token_id" bigint DEFAULT 0,
  "group" text,
  "ip" text DEFAULT '',
  "other" text,
  PRIMARY KEY ("id")
);
CREATE TABLE "quota_data" (
  "id" bigserial,
  "user_id" bigint,
  "username" varchar(64) DEFAULT '',
  "model_name" varchar(64) DEFAULT '',
  "created_at" bigint,
  "token_used" bigint DEFAULT 0,
  "count" bigint DEFAULT 0,
  "quota" bigint DEFAULT 0,
  PRIMARY KEY ("id")
);
CREATE TABLE "options" (
  "key" text,
  "value" text,
  PRIMARY KEY ("key")
);
CREATE TABLE "setups" (
  "id" bigserial,
  "version" varchar(50) NOT NULL,
  "initialized_at" bigint NOT NULL,
  PRIMARY KEY ("id")
);
CREATE TABLE "abilities" (
  "group" varchar(64),
  "model" varchar(255),
  "channel_id" bigint,
  "enabled" boolean,
  "priority" bigint DEFAULT 0,
  "weight" bigint DEFAULT 0,
  "tag" text,
  PRIMARY KEY ("group","model","channel_id")
);
CREATE TABLE "two_fas" (
  "id" bigserial,
  "user_id" bigint NOT NULL UNIQUE,
  "secret" varchar(255) NOT NULL,
  "is_enabled" boolean,
  "failed_attempts" bigint DEFAULT 0,
  "locked_until" timestamptz,
  "last_used_at" timestamptz,
  "created_at" timestamptz,
  "updated_at" timestamptz,
  "deleted_at" timestamptz,
  PRIMARY KEY ("id")
);

CREATE TABLE "two_fa_backup_codes" (
  "id" bigserial,
  "user_id" bigint NOT NULL,
  "code_hash" varchar(255) NOT NULL,
  "is_used" boolean,
  "used_at" timestamptz,
  "created_at" timestamptz,
  "deleted_at" timestamptz,
  PRIMARY KEY ("id")
);
CREATE TABLE "passkey_credentials" (
  "id" bigserial,
  "user_id" bigint NOT NULL,
  "credential_id" varchar(512) NOT NULL UNIQUE,
  "public_key" text NOT NULL,
  "attestation_type" varchar(255),
  "aaguid" varchar(512),
  "sign_count" bigint DEFAULT 0,
  "clone_warning" boolean,
  "user_present" boolean,
  "user_verified" boolean,
  "backup_eligible" boolean,
  "backup_state" boolean,
  "transports" text,
  "attachment" varchar(32),
  "last_used_at" timestamptz,
  "created_at" timestamptz,
  "updated_at" timestamptz,
  "deleted_at" timestamptz,
  PRIMARY KEY ("id")
);
CREATE TABLE "checkins" (
  "id" bigserial,
  "user_id" bigint NOT NULL,
  "checkin_date" varchar(10) NOT NULL,
  "quota_awarded" bigint NOT NULL,
  "created_at" bigint,
  PRIMARY KEY ("id")
);
CREATE TABLE "subscription_plans" (
  "id" bigserial,
  "title" varchar(128) NOT NULL,
  "subtitle" varchar(255) DEFAULT '',
  "price_amount" double precision NOT NULL DEFAULT 0,
  "currency" varchar(8) NOT NULL DEFAULT 'USD',
  "duration_unit" varchar(16) NOT NULL DEFAULT 'month',
  "duration_value" int NOT NULL DEFAULT 1,
  "custom_seconds" bigint NOT NULL DEFAULT 0,
  "enabled" boolean DEFAULT true,
  "sort_order" int DEFAULT 0,
  "allow_balance_pay" boolean DEFAULT true,
  "stripe_price_id" varchar(128) DEFAULT '',
  "creem_product_id" varchar(128) DEFAULT '',
  "max_purchase_per_user" int DEFAULT 0,
  "upgrade_group" varchar(64) DEFAULT '',
  "total_amount" bigint NOT NULL DEFAULT 0,
  "quota_reset_period" varchar(16) DEFAULT 'never',
  "quota_reset_custom_seconds" bigint DEFAULT 0,
  "created_at" bigint,
  "updated_at" bigint,
  PRIMARY KEY ("id")
);
CREATE TABLE "user_subscriptions" (
  "id" bigserial,
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
  "updated_at" bigint,
  PRIMARY KEY ("id")
);
