-- Row-level security driven by the caller's verified claims: the schema of
-- examples/rls (see README.md here). Run it as a superuser on the
-- database the gateway uses:
--
--   psql "$ADMIN_DATABASE_URL" -f examples/rls/schema.sql

CREATE SCHEMA rls_demo;

CREATE TABLE rls_demo.notes (
	id     int PRIMARY KEY,
	tenant text NOT NULL,
	author text NOT NULL,
	body   text NOT NULL
);

INSERT INTO rls_demo.notes VALUES
	(1, 'acme',   'alice', 'Acme: renew the TLS certificates'),
	(2, 'acme',   'carol', 'Acme: quarterly report due Friday'),
	(3, 'globex', 'bob',   'Globex: migrate the billing database');

-- Each statement of the gateway runs after
--   SELECT set_config('request.jwt.claims', '<the verified claims as JSON>', true)
-- in its own transaction (connector claims_setting): the policy reads the
-- tenant claim from there. With no claims the setting is NULL and no row
-- matches.
ALTER TABLE rls_demo.notes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON rls_demo.notes
	USING (tenant = current_setting('request.jwt.claims', true)::json->>'tenant');

-- The gateway's database user: it does not own the table and has no
-- BYPASSRLS, so the policy applies to it (a superuser or the owner would
-- see every row). Give it a password, or trust on loopback, as your
-- pg_hba.conf requires.
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'rls_demo_gateway') THEN
		CREATE ROLE rls_demo_gateway LOGIN NOSUPERUSER NOBYPASSRLS;
	END IF;
END
$$;
GRANT USAGE ON SCHEMA rls_demo TO rls_demo_gateway;
GRANT SELECT ON rls_demo.notes TO rls_demo_gateway;
