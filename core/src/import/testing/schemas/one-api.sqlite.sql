-- one-api's tables as GORM's AutoMigrate creates them on SQLite, derived by hand from the models of
-- github.com/songquanpeng/one-api at commit 8df4a2670b98266bd287c698243fff327d9748cf:
-- model/user.go, token.go, channel.go, option.go, redemption.go, ability.go, log.go.
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
  "wechat_id" text,
  "lark_id" text,
  "oidc_id" text,
  "access_token" char(32),
  "quota" integer DEFAULT 0,
  "used_quota" integer DEFAULT 0,
  "request_count" int DEFAULT 0,
  "group" varchar(32) DEFAULT 'default',
  "aff_code" varchar(32),
  "inviter_id" int
);
CREATE TABLE "tokens" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "user_id" integer,
  "key" char(48),
  "status" integer DEFAULT 1,
  "name" text,
  "created_time" integer,
  "accessed_time" integer,
  "expired_time" integer DEFAULT -1,
  "remain_quota" integer DEFAULT 0,
  "unlimited_quota" numeric DEFAULT false,
  "used_quota" integer DEFAULT 0,
  "models" text,
  "subnet" text DEFAULT ''
);
CREATE TABLE "channels" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "type" integer DEFAULT 0,
  "key" text,
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
  "group" varchar(32) DEFAULT 'default',
  "used_quota" integer DEFAULT 0,
  "model_mapping" varchar(1024) DEFAULT '',
  "priority" integer DEFAULT 0,
  "config" text,
  "system_prompt" text
);
CREATE TABLE "options" (
  "key" text,
  "value" text,
  PRIMARY KEY ("key")
);
CREATE TABLE "redemptions" (
  "id" integer PRIMARY KEY AUTOINCREMENT,
  "user_id" integer,
  "key" char(32),
  "status" integer DEFAULT 1,
  "name" text,
  "quota" integer DEFAULT 100,
  "created_time" integer,
  "redeemed_time" integer
);
CREATE TABLE "abilities" (
  "group" varchar(32),
  "model" text,
  "channel_id" integer,
  "enabled" numeric,
  "priority" integer DEFAULT 0,
  PRIMARY KEY ("group","model","channel_id")
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
  "channel_id" integer,
  "request_id" text DEFAULT '',
  "elapsed_time" integer DEFAULT 0,
  "is_stream" numeric DEFAULT false,
  "system_prompt_reset" numeric DEFAULT false
);
