// Package graphql turns a GraphQL endpoint into tools: one tool per root
// query field (and mutation field, unless mutations are off) and a raw
// query tool, whose calls the gateway validates against the schema and
// sends upstream with the credentials the operator configured (README,
// Sources: GraphQL; docs/graphql-source.md).
//
// Schemas are parsed and documents validated by vektah/gqlparser. It is
// Caddy-free but for module.go. The files, in the order a schema is used:
//
//	introspect.go  the schema from the endpoint's introspection, as SDL
//	load.go        the schema from an SDL file or from introspection
//	repeated.go    definitions an SDL file repeats alike, read once
//	pending.go     introspection retried in the background (not required)
//	inputs.go      field arguments as JSON Schema for tools/list
//	selection.go   the generated selection set (depth, cycles cut, union
//	               members' conflicting fields aliased and given back)
//	document.go    one call as a validated document, within the limits
//	fixed.go       `set` arguments bound on every field of every document
//	limits.go      max_depth and max_fields
//	executor.go    sending it and turning the response into a result
//	tools.go       the tools of a schema
//	module.go      the Caddy module mcp.sources.graphql
package graphql
