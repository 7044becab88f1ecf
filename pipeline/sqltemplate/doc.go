// Package sqltemplate compiles the SQL statements written by operators in the
// Caddyfile into SQL with bound parameters (docs/architecture.md, Templates).
//
// A statement may contain three kinds of template:
//
//	{{ env.NAME }}          operator-controlled, substituted textually at load time
//	{{ inputs.NAME }}       caller-controlled, always a bound parameter
//	{{ auth.subject }}      the verified identity (and {{ auth.claims.a.b }}),
//	                        always a bound parameter, never an identifier
//
// Input values are never spliced into SQL text. The only caller-dependent
// text is an identifier chosen from an enum input's allow-list, written as a
// quoted identifier. Everything the compiler refuses (a template it does not
// understand, an input inside a string or comment, a literal positional
// parameter, a non-enum input in identifier position, a missing environment
// variable) is refused at load time with a *CompileError carrying the line
// and column in the operator's text.
//
// The lexer is exported (Lex, Token) so that later checks on a compiled
// statement (write detection, multiple statements, blocked functions) work on
// the same tokens the compiler decided on, via Statement.Tokens.
package sqltemplate
