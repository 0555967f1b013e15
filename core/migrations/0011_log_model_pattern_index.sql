DROP INDEX "idx_logs_model_name_created_at";--> statement-breakpoint
CREATE INDEX "idx_logs_model_name_pattern_created_at" ON "logs" USING btree ("model_name" varchar_pattern_ops,"created_at");