CREATE TABLE "settlement_marks" (
	"journal" varchar(64) PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
