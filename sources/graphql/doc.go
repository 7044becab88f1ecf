// Package graphql turns a GraphQL endpoint into tools: one tool per root
// query field (and mutation field, unless mutations are off) and a raw
// query tool, whose calls the gateway validates against the schema and
// sends upstream with the credentials the operator configured (README,
// Sources: GraphQL; docs/graphql-source.md).
//
// Schemas are parsed and documents validated by vektah/gqlparser. It is
// Caddy-free but for Source. The parts, in the order a schema is used:
//
//	sdlFromIntrospection  the schema from the endpoint's introspection, as SDL
//	LoadSDL, Introspector the schema from an SDL file or from introspection
//	keepFirst             definitions an SDL file repeats alike, read once
//	pending               introspection retried in the background (not required)
//	inputSchema           field arguments as JSON Schema for tools/list
//	Selection             the generated selection set (depth, cycles cut, union
//	                      members' conflicting fields aliased and given back)
//	rootField.document    one call as a validated document, within the limits
//	Fixed                 `set` arguments bound on every field of every document
//	Limits                max_depth and max_fields
//	Executor              sending it and turning the response into a result
//	Tools                 the tools of a schema
//	Source                the Caddy module mcp.sources.graphql
package graphql
