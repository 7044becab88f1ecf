package sqltemplate

import (
	"fmt"
	"strings"
)

// Load-time safety checks (issue 6). They read the same tokens the
// compiler does, so text in strings and comments never triggers them and
// nothing can hide from them in a comment either. They catch at load what
// the database would refuse (or should never be asked) at run time; the
// database's own READ ONLY transaction stays the guard for what no lexer
// can see, such as a write inside a function.

// Rules are the safety checks of a statement beyond compiling it.
type Rules struct {
	// OneStatement refuses more than one statement (a ";" followed by
	// anything but another ";"). Tools set it always: drivers differ in
	// what they do with a second statement, none of it wanted.
	OneStatement bool
	// ReadOnly refuses anything but a query: a statement that does not
	// start with SELECT, WITH, VALUES, TABLE, SHOW, EXPLAIN or DESCRIBE, a
	// write inside one (a data-modifying WITH, SELECT ... INTO, FOR
	// UPDATE/SHARE, EXPLAIN ANALYZE of a write).
	ReadOnly bool
	// BlockFunctions are function names (case-insensitive, unqualified)
	// whose calls are refused whatever schema qualifies them. A name
	// ending in "*" stands for every name it prefixes (lo_*).
	BlockFunctions []string
	// DefaultBlocked are further names refused the same way, with a
	// message saying they are refused by default: a read_only connector
	// gets ReadOnlyBlockList unless its operator drops it.
	DefaultBlocked []string
}

// ReadOnlyBlockList is the default block list of a read_only connector
// (README "Database safety"): functions that the database runs inside a
// READ ONLY transaction although their effect outlives it or reaches
// outside it (a committed large object, a setting or a lock kept by the
// pooled session, a notification, a file read, another session ended),
// that run SQL given as a string where no load check can read it, or that
// hold a connection for as long as a caller likes. Writes the database
// itself refuses in READ ONLY (nextval, setval, NEXTVAL(seq)) are not
// listed.
func ReadOnlyBlockList(d Dialect) []string {
	switch d {
	case Postgres:
		return []string{
			// Large objects: lo_from_bytea, lo_create, lo_put, lo_unlink,
			// lo_import/lo_export (server files) ... commit in READ ONLY.
			"lo_*", "loread", "lowrite",
			// Session state: a setting or session lock kept by the pool.
			"set_config", "pg_advisory_*", "pg_try_advisory_*",
			"pg_notify",
			// SQL in a string (no load check reads it), other databases.
			"query_to_xml*", "ts_stat", "ts_rewrite", "dblink*",
			"pg_sleep*",
			// Server files.
			"pg_read_file", "pg_read_binary_file", "pg_ls_*", "pg_stat_file", "pg_file_*",
			// Other sessions and the server.
			"pg_cancel_backend", "pg_terminate_backend", "pg_reload_conf", "pg_rotate_logfile",
			"pg_switch_wal", "pg_create_restore_point", "pg_promote", "pg_wal_replay_*",
			"pg_backup_*", "pg_stat_reset*", "pg_log_backend_memory_contexts",
			"pg_import_system_collations", "pg_logical_emit_message",
			"pg_create_*_replication_slot", "pg_drop_replication_slot",
			"pg_copy_*_replication_slot", "pg_replication_slot_advance",
			"pg_logical_slot_get_*", "pg_replication_origin_*",
			// An xid assigned, and burnt, by a query.
			"txid_current", "pg_current_xact_id",
		}
	case MySQL:
		return []string{
			// Named locks outlive the transaction on the pooled session.
			"get_lock", "release_lock", "release_all_locks",
			// Server files, time.
			"load_file", "sleep", "benchmark",
			// Replication waits.
			"master_pos_wait", "master_gtid_wait", "source_pos_wait",
			"wait_for_executed_gtid_set", "wait_until_sql_thread_after_gtids",
		}
	case SQLite:
		// The pure Go driver refuses it ("not authorized") and has no
		// file functions (readfile, writefile); listed in case a build
		// enables extensions.
		return []string{"load_extension"}
	}
	return nil
}

// Check applies the rules to an operator-written statement without compiling it: templates in code
// are lexed as Placeholder tokens. `caddy adapt` uses it; Compile applies
// the same checks to the expanded text through Options.Safety. A statement
// that does not lex is not refused here: Compile reports it.
func Check(src string, d Dialect, r Rules) error {
	toks, spans, lerr := lex(src, d)
	if lerr != nil {
		return nil
	}
	if off, msg := checkSafety(src, toks, spans, d, r, nil); msg != "" {
		return errorAt(src, off, msg)
	}
	return nil
}

// queryVerbs start a statement a read_only connector runs.
var queryVerbs = wordSet(`SELECT WITH VALUES TABLE SHOW EXPLAIN DESCRIBE DESC`)

// dmlVerbs write when they start a statement or a sub-statement (a
// data-modifying WITH, the statement after a WITH list, EXPLAIN ANALYZE).
var dmlVerbs = wordSet(`INSERT UPDATE DELETE MERGE REPLACE UPSERT`)

// explainOptions are the words between EXPLAIN and the explained statement.
var explainOptions = wordSet(`ANALYZE ANALYSE VERBOSE FORMAT EXTENDED PARTITIONS JSON TEXT XML YAML TREE TRADITIONAL`)

// checkSafety returns the offset and message of the first violation, or "".
// enum, when set, gives the allow-list behind a Placeholder token (an enum
// input in identifier position), so that a blocked function cannot be
// chosen at run time either.
func checkSafety(src string, toks []Token, spans []span, d Dialect, r Rules, enum func(Token) []string) (int, string) {
	if off, msg := executableComment(src, spans, d); msg != "" {
		return off, msg
	}
	if r.OneStatement {
		if off, msg := secondStatement(toks); msg != "" {
			return off, msg
		}
	}
	if len(r.BlockFunctions) > 0 {
		if off, name := blockedCall(toks, d, r.BlockFunctions, enum); name != "" {
			return off, fmt.Sprintf("calls %s(), which block_functions refuses on this connector", name)
		}
	}
	if len(r.DefaultBlocked) > 0 {
		if off, name := blockedCall(toks, d, r.DefaultBlocked, enum); name != "" {
			return off, fmt.Sprintf("calls %s(), which a read_only connector refuses by default: its effect outlives the READ ONLY transaction or reaches outside it (block_functions none or only <names> drops the default list)", name)
		}
	}
	if r.ReadOnly {
		return writeIn(toks, d, readOnlyHint)
	}
	return 0, ""
}

// executableComment finds a MySQL executable comment, which the server
// runs as SQL although every lexer reads it as a comment.
func executableComment(src string, spans []span, d Dialect) (int, string) {
	if d != MySQL {
		return 0, ""
	}
	for _, s := range spans {
		if s.kind != inComment {
			continue
		}
		if c := src[s.start:s.end]; strings.HasPrefix(c, "/*!") || strings.HasPrefix(c, "/*M!") {
			return s.start, "MySQL executable comment " + c[:min(len(c), 4)] + " ... */: the server runs its content, so it cannot be checked; write the SQL outside the comment"
		}
	}
	return 0, ""
}

// secondStatement finds a token after a ";" other than another ";".
func secondStatement(toks []Token) (int, string) {
	for i, t := range toks {
		if !t.IsPunct(";") {
			continue
		}
		for _, u := range toks[i+1:] {
			if !u.IsPunct(";") {
				return u.Offset, fmt.Sprintf("more than one statement (%q follows a \";\"): a tool runs exactly one statement", u.Text)
			}
		}
	}
	return 0, ""
}

const readOnlyHint = "a read_only connector runs only queries (SELECT, WITH, VALUES, TABLE, SHOW, EXPLAIN)"

// writeIn finds what makes a statement a write, or anything but a query;
// hint ends each message, saying what runs instead.
func writeIn(toks []Token, d Dialect, hint string) (int, string) {
	if d == MySQL {
		for _, t := range toks {
			if t.Kind == Operator && t.Text == ":=" {
				return t.Offset, ":= assigns a user variable, which outlives the call on the pooled connection: " + hint
			}
		}
	}
	first := 0
	for first < len(toks) && toks[first].IsPunct("(") {
		first++
	}
	if first == len(toks) {
		return 0, ""
	}
	lead := toks[first]
	verb := upperWord(lead)
	if !queryVerbs[verb] {
		what := lead.Text
		if verb != "" {
			what = verb
		}
		return lead.Offset, fmt.Sprintf("%s is not a query; %s", what, hint)
	}
	if verb == "EXPLAIN" || verb == "DESCRIBE" || verb == "DESC" {
		// The explained statement: EXPLAIN ANALYZE runs it.
		for _, t := range toks[first+1:] {
			w := upperWord(t)
			if w == "" || explainOptions[w] {
				continue
			}
			if !queryVerbs[w] && (dmlVerbs[w] || keywords[w]) {
				return t.Offset, fmt.Sprintf("%s %s explains a write: %s", verb, w, hint)
			}
			break
		}
	}
	for i, t := range toks {
		w := upperWord(t)
		if w == "" {
			continue
		}
		next := Token{}
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		switch {
		case dmlVerbs[w] && i > 0 && (toks[i-1].IsPunct("(") || toks[i-1].IsPunct(")")) && !next.IsPunct("("):
			// WITH x AS (DELETE ...) or WITH x AS (...) INSERT ...; a
			// word followed by "(" is a function (MySQL's INSERT(),
			// REPLACE()).
			return t.Offset, fmt.Sprintf("%s inside the statement writes (a data-modifying WITH or sub-statement): %s", w, hint)
		case w == "INTO":
			return t.Offset, "SELECT ... INTO writes (it creates a table or assigns variables): " + hint
		case w == "FOR" && forLock(toks[i+1:]) != "":
			return t.Offset, fmt.Sprintf("FOR %s locks rows, which needs write access: %s", forLock(toks[i+1:]), hint)
		case w == "LOCK" && upperWord(next) == "IN":
			return t.Offset, "LOCK IN SHARE MODE locks rows, which needs write access: " + hint
		}
	}
	return 0, ""
}

// forLock returns the locking clause after FOR: UPDATE, SHARE,
// NO KEY UPDATE, KEY SHARE; "" for any other FOR (SUBSTRING(x FROM 1 FOR
// 2), MySQL's FOR SYSTEM_TIME).
func forLock(rest []Token) string {
	var words []string
	for _, t := range rest[:min(len(rest), 3)] {
		words = append(words, upperWord(t))
	}
	for _, lock := range []string{"UPDATE", "SHARE", "NO KEY UPDATE", "KEY SHARE"} {
		n := strings.Count(lock, " ") + 1
		if len(words) >= n && strings.Join(words[:n], " ") == lock {
			return lock
		}
	}
	return ""
}

// blockedCall finds a call of a blocked function: a name followed by "("
// (comments and whitespace between them are not tokens), whatever
// qualifies it (pg_catalog.pg_sleep) and however it is quoted ("pg_sleep",
// `sleep`, U&"pg\005fsleep"). It returns the offset and the lowercased
// name called, or "". A blocked name ending in "*" matches every name it
// prefixes; one with a "*" inside (pg_create_*_replication_slot) matches
// its two ends.
func blockedCall(toks []Token, d Dialect, blocked []string, enum func(Token) []string) (int, string) {
	set := make(map[string]bool, len(blocked))
	var patterns [][2]string
	for _, b := range blocked {
		b = strings.ToLower(b)
		if pre, post, ok := strings.Cut(b, "*"); ok {
			patterns = append(patterns, [2]string{pre, post})
			continue
		}
		set[b] = true
	}
	match := func(n string) bool {
		if set[n] {
			return true
		}
		for _, p := range patterns {
			if len(n) >= len(p[0])+len(p[1]) && strings.HasPrefix(n, p[0]) && strings.HasSuffix(n, p[1]) {
				return true
			}
		}
		return false
	}
	for i, t := range toks {
		j := i + 1
		escape := byte('\\')
		if j+1 < len(toks) && toks[j].IsWord("UESCAPE") && toks[j+1].Kind == String && len(toks[j+1].Text) == 3 {
			escape, j = toks[j+1].Text[1], j+2
		}
		if j >= len(toks) || !toks[j].IsPunct("(") {
			continue
		}
		var names []string
		switch t.Kind {
		case Keyword, Identifier:
			names = []string{t.Text}
		case QuotedIdentifier:
			names = []string{unquoteIdent(t.Text, escape)}
		case String:
			// MySQL with ANSI_QUOTES reads "sleep" as an identifier.
			if d == MySQL && strings.HasPrefix(t.Text, `"`) {
				names = []string{unquoteIdent(t.Text, escape)}
			}
		case Placeholder:
			if enum != nil {
				names = enum(t)
			}
		}
		for _, n := range names {
			if n = strings.ToLower(n); match(n) {
				return t.Offset, n
			}
		}
	}
	return 0, ""
}

// unquoteIdent returns the name a quoted identifier stands for: "a""b", a
// backquoted name (a doubled quote stands for itself), [a], and Postgres
// U&"..." with its escapes (escape is the UESCAPE character, default
// backslash): U&"pg\005fsleep" is pg_sleep. An escape it cannot decode
// yields the raw text; Postgres refuses such an identifier itself.
func unquoteIdent(text string, escape byte) string {
	unicode := false
	if len(text) > 2 && (text[0] == 'U' || text[0] == 'u') && text[1] == '&' {
		text, unicode = text[2:], true
	}
	if len(text) < 2 {
		return text
	}
	q := text[0]
	if q == '[' {
		return text[1 : len(text)-1]
	}
	inner := strings.ReplaceAll(text[1:len(text)-1], string([]byte{q, q}), string(q))
	if !unicode {
		return inner
	}
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c != escape {
			b.WriteByte(c)
			continue
		}
		switch {
		case i+1 < len(inner) && inner[i+1] == escape:
			b.WriteByte(escape)
			i++
		case i+7 < len(inner) && inner[i+1] == '+' && isHex(inner[i+2:i+8]):
			b.WriteRune(hexRune(inner[i+2 : i+8]))
			i += 7
		case i+4 < len(inner) && isHex(inner[i+1:i+5]):
			b.WriteRune(hexRune(inner[i+1 : i+5]))
			i += 4
		default:
			return text
		}
	}
	return b.String()
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !isDigit(s[i]) && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}

func hexRune(s string) rune {
	var r rune
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			r = r<<4 | rune(c-'0')
		default:
			r = r<<4 | rune(c|0x20-'a'+10)
		}
	}
	return r
}

// checkSafety runs the checks on the expanded text; errors point at what
// the operator wrote (or name the env variable whose value is at fault).
func (c *compiler) checkSafety(toks []Token, spans []span) *CompileError {
	enum := func(t Token) []string { return c.opts.Inputs[c.slots[t.Offset].name].Enum }
	if off, msg := checkSafety(c.exp, toks, spans, c.opts.Dialect, c.opts.Safety, enum); msg != "" {
		return c.pos.errorAt(off, msg)
	}
	return nil
}
