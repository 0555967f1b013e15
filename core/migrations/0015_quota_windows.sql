CREATE TABLE "quota_window_usage" (
	"window_key" varchar(160) NOT NULL,
	"slot_start" bigint NOT NULL,
	"amount" bigint DEFAULT 0 NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "quota_window_usage_window_key_slot_start_pk" PRIMARY KEY("window_key","slot_start")
);
--> statement-breakpoint
ALTER TABLE "tokens" ADD COLUMN "quota_windows" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "quota_windows" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
CREATE INDEX "idx_quota_window_usage_slot" ON "quota_window_usage" USING btree ("slot_start");