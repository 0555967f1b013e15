ALTER TABLE "tokens" ADD COLUMN "ledger_version" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "ledger_version" bigint DEFAULT 0 NOT NULL;