-- one-api's tables as GORM's AutoMigrate creates them on Postgres, derived by hand from the models of
-- github.com/songquanpeng/one-api at commit 8df4a2670b98266bd287c698243fff327d9748cf:
-- model/user.go, token.go, channel.go, option.go, redemption.go, ability.go, log.go.
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
  "wechat_id" text,
  "lark_id" text,
  "oidc_id" text,
  "access_token" char(32),
  "quota" bigint DEFAULT 0,
  "used_quota" bigint DEFAULT 0,
  "request_count" int DEFAULT 0,
  "group" varchar(32) DEFAULT 'default',
  "aff_code" varchar(32),
  "inviter_id" int,
  PRIMARY KEY ("id")
);
CREATE TABLE "tokens" (
  "id" bigserial,
  "user_id" bigint,
  "key" char(48),
  "status" bigint DEFAULT 1,
  "name" text,
  "created_time" bigint,
  "accessed_time" bigint,
  "expired_time" bigint DEFAULT -1,
  "remain_quota" bigint DEFAULT 0,
  "unlimited_quota" boolean DEFAULT false,
  "used_quota" bigint DEFAULT 0,
  "models" text,
  "subnet" text DEFAULT '',
  PRIMARY KEY ("id")
);
CREATE TABLE "channels" (
  "id" bigserial,
  "type" bigint DEFAULT 0,
  "key" text,
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
  "group" varchar(32) DEFAULT 'default',
  "used_quota" bigint DEFAULT 0,
  "model_mapping" varchar(1024) DEFAULT '',
  "priority" bigint DEFAULT 0,
  "config" text,
  "system_prompt" text,
  PRIMARY KEY ("id")
);
CREATE TABLE "options" (
  "key" text,
  "value" text,
  PRIMARY KEY ("key")
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
  PRIMARY KEY ("id")
);
CREATE TABLE "abilities" (
  "group" varchar(32),
  "model" text,
  "channel_id" bigint,
  "enabled" boolean,
  "priority" bigint DEFAULT 0,
  PRIMARY KEY ("group","model","channel_id")
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
  "channel_id" bigint,
  "request_id" text DEFAULT '',
  "elapsed_time" bigint DEFAULT 0,
  "is_stream" boolean DEFAULT false,
  "system_prompt_reset" boolean DEFAULT false,
  PRIMARY KEY ("id")
);
