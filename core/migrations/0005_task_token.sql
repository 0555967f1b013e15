ALTER TABLE "midjourneys" ADD COLUMN "token_id" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "token_id" integer DEFAULT 0 NOT NULL;