-- The database of examples/sql-agent (see README.md here): a shop whose
-- rows belong to tenants, a read-only role for the agent, and row-level
-- security by the caller's verified claims. Run it as a superuser on the
-- database the gateway uses:
--
--   psql "$ADMIN_DATABASE_URL" -f examples/sql-agent/schema.sql

CREATE SCHEMA sql_agent_demo;
COMMENT ON SCHEMA sql_agent_demo IS 'A small shop';

CREATE TABLE sql_agent_demo.customers (
	id     int PRIMARY KEY,
	tenant text NOT NULL,
	name   text NOT NULL,
	email  text NOT NULL
);
COMMENT ON TABLE sql_agent_demo.customers IS 'The people who buy';

CREATE TABLE sql_agent_demo.orders (
	id          int PRIMARY KEY,
	tenant      text NOT NULL,
	customer_id int NOT NULL REFERENCES sql_agent_demo.customers,
	total       numeric(10, 2) NOT NULL,
	ordered_at  date NOT NULL
);
CREATE INDEX orders_customer ON sql_agent_demo.orders (customer_id);
COMMENT ON TABLE sql_agent_demo.orders IS 'What they bought, one row per order';

-- Who changed what: not for the agent (sql_tools exclude, and no grant).
CREATE TABLE sql_agent_demo.audit_log (
	id   int PRIMARY KEY,
	what text NOT NULL
);

INSERT INTO sql_agent_demo.customers VALUES
	(1, 'acme',   'Ada Lovelace',   'ada@acme.example'),
	(2, 'acme',   'Grace Hopper',   'grace@acme.example'),
	(3, 'globex', 'Alan Turing',    'alan@globex.example');
INSERT INTO sql_agent_demo.orders VALUES
	(10, 'acme',   1, 120.00, '2026-01-05'),
	(11, 'acme',   1,  35.50, '2026-02-11'),
	(12, 'acme',   2,  80.00, '2026-02-12'),
	(13, 'globex', 3, 999.99, '2026-03-01');
INSERT INTO sql_agent_demo.audit_log VALUES (1, 'created the shop');

-- Each statement of the gateway runs in a transaction that first sets
-- request.jwt.claims to the caller's verified claims (connector
-- claims_setting): the policies read the tenant from there, whatever SQL
-- the agent writes. With no claims the setting is NULL and no row matches.
ALTER TABLE sql_agent_demo.customers ENABLE ROW LEVEL SECURITY;
ALTER TABLE sql_agent_demo.orders ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON sql_agent_demo.customers
	USING (tenant = current_setting('request.jwt.claims', true)::json->>'tenant');
CREATE POLICY tenant_isolation ON sql_agent_demo.orders
	USING (tenant = current_setting('request.jwt.claims', true)::json->>'tenant');

-- sql_agent_reader is the role the agent's statements run as (sql_tools
-- role): it can read the two tables and nothing else, and cannot log in.
-- sql_agent_gateway is the gateway's database user: a member of the
-- reader (so SET LOCAL ROLE may switch to it), not the tables' owner, no
-- BYPASSRLS. Give it a password, or trust on loopback, as your
-- pg_hba.conf requires.
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'sql_agent_reader') THEN
		CREATE ROLE sql_agent_reader NOLOGIN NOSUPERUSER NOBYPASSRLS;
	END IF;
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'sql_agent_gateway') THEN
		CREATE ROLE sql_agent_gateway LOGIN NOSUPERUSER NOBYPASSRLS;
	END IF;
END
$$;
GRANT sql_agent_reader TO sql_agent_gateway;
GRANT USAGE ON SCHEMA sql_agent_demo TO sql_agent_reader;
GRANT SELECT ON sql_agent_demo.customers, sql_agent_demo.orders TO sql_agent_reader;
