CREATE TABLE "option_sources" (
	"option_key" varchar(255) NOT NULL,
	"entry" varchar(255) DEFAULT '' NOT NULL,
	"source_kind" varchar(63) NOT NULL,
	"source_namespace" varchar(253) NOT NULL,
	"source_name" varchar(253) NOT NULL,
	"source_generation" bigint NOT NULL,
	CONSTRAINT "option_sources_option_key_entry_pk" PRIMARY KEY("option_key","entry")
);
--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "source_kind" varchar(63);--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "source_namespace" varchar(253);--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "source_name" varchar(253);--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "source_generation" bigint;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "source_index" integer;--> statement-breakpoint
CREATE INDEX "idx_option_sources_source" ON "option_sources" USING btree ("source_kind","source_namespace","source_name");--> statement-breakpoint
CREATE INDEX "idx_channels_source" ON "channels" USING btree ("source_kind","source_namespace","source_name");