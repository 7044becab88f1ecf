package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// Source is a backend that brings its own tools (README, Sources): an
// OpenAPI document, a GraphQL schema, an MCP server. Its Caddy module
// provisions it; the gateway publishes its tools beside the declared ones.
type Source interface {
	// Tools returns the source's tools, named into the namespace (see
	// ToolName), each with its own executor and raw JSON Schemas.
	Tools(namespace string) ([]*Tool, error)
}

// ChangeNotifier is implemented by sources whose tools can change while the
// gateway runs (a document refreshed on an interval). The gateway calls
// OnChange once; the source calls changed after each change, and the
// gateway then asks it for Tools again.
type ChangeNotifier interface {
	OnChange(changed func())
}

// VerifiedCallersKey marks the context a source is provisioned in when
// the endpoint verifies every caller (default_auth): a source that can keep
// its upstream state apart per caller does so by default then (an MCP
// source's session per_caller; docs/sources.md, MCP servers).
type VerifiedCallersKey struct{}

// CallersVerified reports whether ctx carries VerifiedCallersKey.
func CallersVerified(ctx context.Context) bool {
	v, _ := ctx.Value(VerifiedCallersKey{}).(bool)
	return v
}

// StateSharer is implemented by a source whose upstream keeps state for
// its clients (an MCP server's session): StateSharing says who shares that
// state, given whether the endpoint verifies every caller (default_auth),
// for `caddy mcp tools`, which reads the source's JSON and provisions
// nothing.
type StateSharer interface {
	StateSharing(callersVerified bool) string
}

// SelectsTools is implemented by a source whose own block reads include
// and exclude, with patterns richer than tool names (OpenAPI: tags, methods,
// paths); the gateway then leaves those sub-directives to it and reads only
// prefix and disable (README, Sources).
type SelectsTools interface {
	SelectsTools()
}

// unsafeNameRun is a run of characters a tool name may not hold; runs of
// "_" collapse with them.
var unsafeNameRun = regexp.MustCompile(`[^a-zA-Z0-9-]+`)

// ToolName is the name a source's tool gets in a namespace: namespace_base
// with every run of characters outside [a-zA-Z0-9-] made one "_", and,
// when that is longer than 64 characters, cut and ended with a hash of the
// whole, so that it still matches ToolNamePattern, stays unique and is the
// same on every node and every load.
func ToolName(namespace, base string) string {
	full := base
	if namespace != "" {
		full = namespace + "_" + base
	}
	name := strings.Trim(unsafeNameRun.ReplaceAllString(full, "_"), "_")
	if name == "" {
		name = "tool"
	}
	if len(name) > 64 {
		sum := sha256.Sum256([]byte(full))
		name = strings.TrimRight(name[:55], "_-") + "_" + hex.EncodeToString(sum[:4])
	}
	return name
}

// ToolOverrides are the operator's changes to a source's tools (rename,
// describe, hide with set, annotate), a guest module mcp.overrides.*: the
// gateway applies them to the tools a source gives, after checking the
// source's pins, before it builds the registry. out holds each tool as
// overridden; unused names the overrides that met no tool (a source may
// bring it later); an override that cannot apply is an error naming the
// tool.
type ToolOverrides interface {
	Apply(tools []*Tool) (out []*Tool, unused []string, err error)
}
