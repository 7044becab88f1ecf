// Package openapi turns an OpenAPI document into tools: one tool per
// operation, whose calls the gateway sends upstream with the credentials
// the operator configured (README, Sources: OpenAPI).
//
// The document is parsed and its $refs resolved by getkin/kin-openapi
// (OpenAPI 3.0, 3.1 and 3.2; Swagger 2.0 documents are converted to 3.0 by
// its openapi2conv). It is Caddy-free: the source module wires it into the
// gateway. The parts, in the order a document is used:
//
//	Load                 reading a document from a file or a URL, bounded
//	Operations           choosing the operations and naming their tools
//	jsonSchema           OpenAPI schemas as JSON Schema for tools/list
//	paramSpec.encode     parameter values on the wire (style and explode)
//	Operation.newRequest one call as an HTTP request
//	protectedNames       the names only the gateway sends, which no argument may make
//	upstream.Credential  what the gateway injects (never the caller)
//	Executor             sending it and turning the response into a result
package openapi
