CREATE TABLE "subscription_orders" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"plan_id" integer NOT NULL,
	"money" double precision DEFAULT 0 NOT NULL,
	"currency" varchar(8) DEFAULT 'USD' NOT NULL,
	"trade_no" varchar(255) NOT NULL,
	"payment_method" varchar(50) DEFAULT '' NOT NULL,
	"status" varchar(20) DEFAULT 'pending' NOT NULL,
	"create_time" bigint DEFAULT 0 NOT NULL,
	"complete_time" bigint DEFAULT 0 NOT NULL,
	"provider_ref" varchar(255) DEFAULT '' NOT NULL,
	"user_subscription_id" integer DEFAULT 0 NOT NULL,
	"provider_payload" text DEFAULT '' NOT NULL,
	CONSTRAINT "subscription_orders_trade_no_unique" UNIQUE("trade_no")
);
--> statement-breakpoint
CREATE TABLE "subscription_plans" (
	"id" serial PRIMARY KEY NOT NULL,
	"title" varchar(128) NOT NULL,
	"subtitle" varchar(255) DEFAULT '' NOT NULL,
	"price_amount" double precision DEFAULT 0 NOT NULL,
	"currency" varchar(8) DEFAULT 'USD' NOT NULL,
	"duration_unit" varchar(16) DEFAULT 'month' NOT NULL,
	"duration_value" integer DEFAULT 1 NOT NULL,
	"custom_seconds" bigint DEFAULT 0 NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"sort_order" integer DEFAULT 0 NOT NULL,
	"stripe_price_id" varchar(128) DEFAULT '' NOT NULL,
	"creem_product_id" varchar(128) DEFAULT '' NOT NULL,
	"max_purchase_per_user" integer DEFAULT 0 NOT NULL,
	"upgrade_group" varchar(64) DEFAULT '' NOT NULL,
	"total_amount" bigint DEFAULT 0 NOT NULL,
	"quota_reset_period" varchar(16) DEFAULT 'never' NOT NULL,
	"quota_reset_custom_seconds" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT 0 NOT NULL,
	"updated_at" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "user_subscriptions" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"plan_id" integer NOT NULL,
	"amount_total" bigint DEFAULT 0 NOT NULL,
	"quota_reset_period" varchar(16) DEFAULT 'never' NOT NULL,
	"quota_reset_custom_seconds" bigint DEFAULT 0 NOT NULL,
	"start_time" bigint DEFAULT 0 NOT NULL,
	"end_time" bigint DEFAULT 0 NOT NULL,
	"status" varchar(32) DEFAULT 'active' NOT NULL,
	"source" varchar(32) DEFAULT 'order' NOT NULL,
	"upgrade_group" varchar(64) DEFAULT '' NOT NULL,
	"prev_user_group" varchar(64) DEFAULT '' NOT NULL,
	"created_at" bigint DEFAULT 0 NOT NULL,
	"updated_at" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX "idx_subscription_orders_user_id" ON "subscription_orders" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "idx_user_subscriptions_user_id" ON "user_subscriptions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "idx_user_subscriptions_status_end" ON "user_subscriptions" USING btree ("status","end_time");