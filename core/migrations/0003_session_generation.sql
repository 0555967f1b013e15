ALTER TABLE "users" ADD COLUMN "session_generation" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "ended_sessions" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
-- A changed password, role or status, or a deletion, ends every session of the user (docs/adr/0020): whatever
-- path makes the change (the console, a password reset, the operator, an administrator's SQL).
CREATE FUNCTION "users_end_sessions"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.session_generation := OLD.session_generation + 1;
  NEW.ended_sessions := '[]'::jsonb;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER "users_end_sessions" BEFORE UPDATE OF "password", "role", "status", "deleted_at" ON "users"
FOR EACH ROW WHEN (
  NEW.password IS DISTINCT FROM OLD.password
  OR NEW.role IS DISTINCT FROM OLD.role
  OR NEW.status IS DISTINCT FROM OLD.status
  OR NEW.deleted_at IS DISTINCT FROM OLD.deleted_at
) EXECUTE FUNCTION "users_end_sessions"();
