-- one-api's tables as GORM's AutoMigrate creates them on MySQL/MariaDB, derived by hand from the models of
-- github.com/songquanpeng/one-api at commit 8df4a2670b98266bd287c698243fff327d9748cf:
-- model/user.go, token.go, channel.go, option.go, redemption.go, ability.go, log.go.
-- GORM's MySQL/MariaDB type rules applied: Go int/int64 -> bigint (AUTO_INCREMENT on the primary key), uint -> bigint unsigned,
-- string -> varchar(191) when it has an index, a default or is a key, else longtext; bool -> boolean,
-- float64 -> double, gorm.DeletedAt -> datetime(3) NULL; `type:` as written, `size:n` -> varchar(n).
-- Indexes are left out: the import reads columns, not indexes.

CREATE TABLE `users` (
  `id` bigint AUTO_INCREMENT,
  `username` varchar(191),
  `password` longtext NOT NULL,
  `display_name` varchar(191),
  `role` int DEFAULT 1,
  `status` int DEFAULT 1,
  `email` varchar(191),
  `github_id` varchar(191),
  `wechat_id` varchar(191),
  `lark_id` varchar(191),
  `oidc_id` varchar(191),
  `access_token` char(32),
  `quota` bigint DEFAULT 0,
  `used_quota` bigint DEFAULT 0,
  `request_count` int DEFAULT 0,
  `group` varchar(32) DEFAULT 'default',
  `aff_code` varchar(32),
  `inviter_id` int,
  PRIMARY KEY (`id`)
);
CREATE TABLE `tokens` (
  `id` bigint AUTO_INCREMENT,
  `user_id` bigint,
  `key` char(48),
  `status` bigint DEFAULT 1,
  `name` varchar(191),
  `created_time` bigint,
  `accessed_time` bigint,
  `expired_time` bigint DEFAULT -1,
  `remain_quota` bigint DEFAULT 0,
  `unlimited_quota` boolean DEFAULT false,
  `used_quota` bigint DEFAULT 0,
  `models` text,
  `subnet` varchar(191) DEFAULT '',
  PRIMARY KEY (`id`)
);
CREATE TABLE `channels` (
  `id` bigint AUTO_INCREMENT,
  `type` bigint DEFAULT 0,
  `key` text,
  `status` bigint DEFAULT 1,
  `name` varchar(191),
  `weight` bigint unsigned DEFAULT 0,
  `created_time` bigint,
  `test_time` bigint,
  `response_time` bigint,
  `base_url` varchar(191) DEFAULT '',
  `other` longtext,
  `balance` double,
  `balance_updated_time` bigint,
  `models` longtext,
  `group` varchar(32) DEFAULT 'default',
  `used_quota` bigint DEFAULT 0,
  `model_mapping` varchar(1024) DEFAULT '',
  `priority` bigint DEFAULT 0,
  `config` longtext,
  `system_prompt` text,
  PRIMARY KEY (`id`)
);
CREATE TABLE `options` (
  `key` varchar(191),
  `value` longtext,
  PRIMARY KEY (`key`)
);
CREATE TABLE `redemptions` (
  `id` bigint AUTO_INCREMENT,
  `user_id` bigint,
  `key` char(32),
  `status` bigint DEFAULT 1,
  `name` varchar(191),
  `quota` bigint DEFAULT 100,
  `created_time` bigint,
  `redeemed_time` bigint,
  PRIMARY KEY (`id`)
);
CREATE TABLE `abilities` (
  `group` varchar(32),
  `model` varchar(191),
  `channel_id` bigint,
  `enabled` boolean,
  `priority` bigint DEFAULT 0,
  PRIMARY KEY (`group`,`model`,`channel_id`)
);
CREATE TABLE `logs` (
  `id` bigint AUTO_INCREMENT,
  `user_id` bigint,
  `created_at` bigint,
  `type` bigint,
  `content` longtext,
  `username` varchar(191) DEFAULT '',
  `token_name` varchar(191) DEFAULT '',
  `model_name` varchar(191) DEFAULT '',
  `quota` bigint DEFAULT 0,
  `prompt_tokens` bigint DEFAULT 0,
  `completion_tokens` bigint DEFAULT 0,
  `channel_id` bigint,
  `request_id` varchar(191) DEFAULT '',
  `elapsed_time` bigint DEFAULT 0,
  `is_stream` boolean DEFAULT false,
  `system_prompt_reset` boolean DEFAULT false,
  PRIMARY KEY (`id`)
);
