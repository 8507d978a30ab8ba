CREATE TABLE "audit_chain_checks" (
	"chain" varchar(64) PRIMARY KEY NOT NULL,
	"checked_at" timestamp with time zone NOT NULL,
	"ok" boolean NOT NULL,
	"report" jsonb NOT NULL
);
