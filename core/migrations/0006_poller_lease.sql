CREATE TABLE "leases" (
	"name" varchar(64) PRIMARY KEY NOT NULL,
	"holder" varchar(64) NOT NULL,
	"expires_at" bigint NOT NULL
);
