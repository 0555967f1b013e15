-- Kling channels take the reference's type number (50) instead of 61, so the reference's scripts and imports name
-- them as they always have (issue 31). The channel table is the only one keeping a channel type.
UPDATE "channels" SET "type" = 50 WHERE "type" = 61;
