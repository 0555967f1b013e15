-- Issue 28, what a consume log costs to write (docs/adr/0031 "What a log costs to write"). The type index keeps the
-- types other than consume only (a consume filter reads (created_at, type), where consume logs are nearly every
-- entry), and the request id loses its index (nothing looks a log up by it). IF NOT EXISTS / IF EXISTS like 0012: on a
-- large table an operator can build the new index beforehand with CREATE INDEX CONCURRENTLY under the same name.
CREATE INDEX IF NOT EXISTS "idx_logs_other_types_created_at" ON "logs" USING btree ("type","created_at") WHERE "logs"."type" <> 2;--> statement-breakpoint
DROP INDEX IF EXISTS "idx_logs_type_created_at";--> statement-breakpoint
DROP INDEX IF EXISTS "idx_logs_request_id";
