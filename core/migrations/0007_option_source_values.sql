ALTER TABLE "option_sources" ADD COLUMN "value" double precision;--> statement-breakpoint
-- Price entries a ModelPrice owns move out of the price maps into their own rows (docs/adr/0017): the option
-- store lays them over the map when it loads, so the map row keeps only what the console set.
UPDATE "option_sources" AS s SET "value" = (o."value"::jsonb ->> s."entry")::double precision FROM "options" AS o WHERE o."key" = s."option_key" AND s."entry" <> '' AND s."option_key" IN ('ModelRatio', 'CompletionRatio', 'CacheRatio', 'ModelPrice');--> statement-breakpoint
DELETE FROM "option_sources" WHERE "entry" <> '' AND "value" IS NULL;--> statement-breakpoint
UPDATE "options" AS o SET "value" = (o."value"::jsonb - ARRAY(SELECT s."entry" FROM "option_sources" AS s WHERE s."option_key" = o."key" AND s."entry" <> ''))::text WHERE o."key" IN ('ModelRatio', 'CompletionRatio', 'CacheRatio', 'ModelPrice') AND EXISTS (SELECT 1 FROM "option_sources" AS s WHERE s."option_key" = o."key" AND s."entry" <> '');
