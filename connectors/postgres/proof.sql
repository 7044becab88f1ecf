-- What a statement can run, read from the catalog (proof.go). $1 names a
-- temporary view of the statement. The walk starts at the view's query tree
-- and follows everything that reading it can execute; each row it returns
-- is a reason the statement may change its session. No row: it cannot.
--
-- Kinds of item: t a query or expression tree (its text); o an object a
-- tree names, of any catalog, whose function would be called with the
-- statement's own values; f a function the server calls for a type or an
-- operator; r a relation; y a type of a user's; x a reason.
WITH RECURSIVE item(kind, id, body) AS (
	SELECT 't'::text, 0::pg_catalog.oid, ev_action::text
	FROM pg_catalog.pg_rewrite WHERE ev_class = $1::text::pg_catalog.regclass
UNION
	SELECT n.kind, n.id, n.body FROM item i CROSS JOIN LATERAL (
		-- A tree: every number that may be an object's oid (fields known to
		-- hold something else are skipped; a number taken for an oid by
		-- mistake can only add a reason).
		SELECT 'o', d[1]::pg_catalog.int8::pg_catalog.oid, NULL
		FROM pg_catalog.regexp_matches(i.body, ':([A-Za-z_]+) ([0-9]{1,10}|\(o[ 0-9]*\))', 'g') m,
			pg_catalog.regexp_matches(m[2], '[0-9]+', 'g') d
		WHERE i.kind = 't' AND d[1]::pg_catalog.int8 BETWEEN 1 AND 4294967295
			AND m[1] <> ALL ('{location,stmt_location,stmt_len,varno,varattno,varlevelsup,varnosyn,varattnosyn,
				vartypmod,consttypmod,constlen,resno,ressortgroupref,resorigcol,tleSortGroupRef,rtindex,rellockmode,
				requiredPerms,commandType,querySource,resultRelation,funcformat,limitOption,override,rtekind,jointype,
				paramid,paramkind,paramtypmod,typmod,resulttypmod,agglevelsup,aggno,aggtransno,aggsplit,winref,
				ctelevelsup,cterefcount,levelsup,subLinkType,subLinkId,coerceformat,relabelformat,convertformat,
				nulltesttype,booltesttype,op,xmloption,cursorOptions,ctematerialized,checkAsUser,constvalue,rti,strength,
				waitPolicy,row_format,rctype,kind,funccolcount,frameOptions,perminfoindex,format_type,encoding}'::text[])
	UNION ALL
		-- A function the statement calls: built in, not volatile, and not one
		-- that runs what a value names (a type's input function, a table's
		-- query, a type name given as text).
		SELECT 'x', p.oid, 'calls ' || p.oid::pg_catalog.regprocedure::text
		FROM pg_catalog.pg_proc p
		WHERE i.kind = 'o' AND p.oid = i.id AND NOT (p.oid < 16384 AND p.provolatile <> 'v'
			AND NOT (p.proargtypes::pg_catalog.oid[] OPERATOR(pg_catalog.&&) '{2275,2281}'::pg_catalog.oid[])
			AND p.proname !~ '^((table|schema|database)_to_xml|pg_input_)')
	UNION ALL
		-- A function the server calls (a type's input or output, an
		-- operator's estimator, a cast a function applies): built in and not
		-- volatile.
		SELECT 'x', p.oid, 'calls ' || p.oid::pg_catalog.regprocedure::text
		FROM pg_catalog.pg_proc p
		WHERE i.kind = 'f' AND p.oid = i.id AND NOT (p.oid < 16384 AND p.provolatile <> 'v')
	UNION ALL
		-- An operator: its function, its estimators; one of a user's in an
		-- operator family (sorting, hashing call the family's functions).
		SELECT k, f, NULL
		FROM pg_catalog.pg_operator o,
			LATERAL (VALUES ('o', o.oprcode::pg_catalog.oid), ('f', o.oprrest::pg_catalog.oid), ('f', o.oprjoin::pg_catalog.oid)) v(k, f)
		WHERE i.kind = 'o' AND o.oid = i.id AND f <> 0
	UNION ALL
		SELECT 'x', o.oid, 'operator ' || o.oid::pg_catalog.regoperator::text || ' of an operator family'
		FROM pg_catalog.pg_operator o
		WHERE i.kind = 'o' AND o.oid = i.id AND o.oid >= 16384 AND EXISTS (SELECT FROM pg_catalog.pg_amop a WHERE a.amopopr = o.oid)
	UNION ALL
		SELECT 'r', c.oid, NULL FROM pg_catalog.pg_class c WHERE i.kind = 'o' AND c.oid = i.id
	UNION ALL
		SELECT 'y', t.oid, NULL FROM pg_catalog.pg_type t WHERE i.kind = 'o' AND t.oid = i.id AND t.oid >= 16384
	UNION ALL
		SELECT 'x', c.oid, 'operator class ' || c.opcname FROM pg_catalog.pg_opclass c
		WHERE i.kind = 'o' AND c.oid = i.id AND c.oid >= 16384
	UNION ALL
		-- A relation: a foreign table, or a table access method of a user's.
		SELECT 'x', c.oid, 'reads ' || c.oid::pg_catalog.regclass::text
		FROM pg_catalog.pg_class c
		WHERE i.kind = 'r' AND c.oid = i.id AND (c.relkind = 'f' OR c.relam >= 16384)
	UNION ALL
		-- What reading it runs: its SELECT rule (a view), every row
		-- security policy on it, its indexes' and partition key's
		-- expressions; its children (inheritance, partitions), its columns'
		-- types.
		SELECT 't', 0, ev_action::text FROM pg_catalog.pg_rewrite
		WHERE i.kind = 'r' AND ev_class = i.id AND ev_type = '1'
	UNION ALL
		SELECT 't', 0, q FROM pg_catalog.pg_policy, LATERAL pg_catalog.unnest(ARRAY[polqual::text, polwithcheck::text]) q
		WHERE i.kind = 'r' AND polrelid = i.id AND q IS NOT NULL
	UNION ALL
		SELECT 't', 0, q FROM pg_catalog.pg_index, LATERAL pg_catalog.unnest(ARRAY[indexprs::text, indpred::text]) q
		WHERE i.kind = 'r' AND indrelid = i.id AND q IS NOT NULL
	UNION ALL
		SELECT 't', 0, partexprs::text FROM pg_catalog.pg_partitioned_table
		WHERE i.kind = 'r' AND partrelid = i.id AND partexprs IS NOT NULL
	UNION ALL
		SELECT 'x', x.indexrelid, 'reads ' || i.id::pg_catalog.regclass::text || ', whose index ' ||
			x.indexrelid::pg_catalog.regclass::text || ' has an access method or operator class of a user''s'
		FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class ic ON ic.oid = x.indexrelid
		WHERE i.kind = 'r' AND x.indrelid = i.id
			AND (ic.relam >= 16384 OR EXISTS (SELECT FROM pg_catalog.unnest(x.indclass::pg_catalog.oid[]) k WHERE k >= 16384))
	UNION ALL
		SELECT 'x', partrelid, 'reads ' || partrelid::pg_catalog.regclass::text || ', whose partition key has an operator class of a user''s'
		FROM pg_catalog.pg_partitioned_table
		WHERE i.kind = 'r' AND partrelid = i.id AND EXISTS (SELECT FROM pg_catalog.unnest(partclass::pg_catalog.oid[]) k WHERE k >= 16384)
	UNION ALL
		SELECT 'r', inhrelid, NULL FROM pg_catalog.pg_inherits WHERE i.kind = 'r' AND inhparent = i.id
	UNION ALL
		SELECT 'o', atttypid, NULL FROM pg_catalog.pg_attribute
		WHERE i.kind = 'r' AND attrelid = i.id AND attnum > 0 AND NOT attisdropped
	UNION ALL
		-- A user's type: the functions that read, write, compare, hash and
		-- cast it, what it is made of, its domain constraints and default.
		SELECT 'f', f, NULL FROM pg_catalog.pg_type t,
			LATERAL pg_catalog.unnest(ARRAY[t.typinput::pg_catalog.oid, t.typoutput, t.typreceive, t.typsend,
				t.typmodin, t.typmodout, t.typanalyze, t.typsubscript]) f
		WHERE i.kind = 'y' AND t.oid = i.id AND f <> 0
	UNION ALL
		SELECT 'o', f, NULL FROM pg_catalog.pg_type t, LATERAL pg_catalog.unnest(ARRAY[t.typelem, t.typbasetype]) f
		WHERE i.kind = 'y' AND t.oid = i.id AND f <> 0
	UNION ALL
		SELECT 'r', typrelid, NULL FROM pg_catalog.pg_type WHERE i.kind = 'y' AND oid = i.id AND typrelid <> 0
	UNION ALL
		SELECT 't', 0, typdefaultbin::text FROM pg_catalog.pg_type
		WHERE i.kind = 'y' AND oid = i.id AND typdefaultbin IS NOT NULL
	UNION ALL
		SELECT 't', 0, conbin::text FROM pg_catalog.pg_constraint WHERE i.kind = 'y' AND contypid = i.id AND conbin IS NOT NULL
	UNION ALL
		SELECT k, f, NULL FROM pg_catalog.pg_range,
			LATERAL (VALUES ('o', rngsubtype::pg_catalog.oid), ('f', rngcanonical::pg_catalog.oid), ('f', rngsubdiff::pg_catalog.oid),
				('o', rngsubopc)) v(k, f)
		WHERE i.kind = 'y' AND (rngtypid = i.id OR rngmultitypid = i.id) AND f <> 0
	UNION ALL
		SELECT 'f', castfunc, NULL FROM pg_catalog.pg_cast
		WHERE i.kind = 'y' AND (castsource = i.id OR casttarget = i.id) AND castfunc <> 0
	UNION ALL
		SELECT 'f', amproc, NULL FROM pg_catalog.pg_amproc
		WHERE i.kind = 'y' AND (amproclefttype = i.id OR amprocrighttype = i.id)
	UNION ALL
		SELECT 'o', amopopr, NULL FROM pg_catalog.pg_amop
		WHERE i.kind = 'y' AND (amoplefttype = i.id OR amoprighttype = i.id)
	UNION ALL
		SELECT 'o', oid, NULL FROM pg_catalog.pg_opclass WHERE i.kind = 'y' AND opcintype = i.id
	) n(kind, id, body)
)
SELECT DISTINCT body FROM item WHERE kind = 'x' ORDER BY body
