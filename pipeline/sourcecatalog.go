package pipeline

import (
	"context"
	"encoding/json"
)

// CatalogSource is a Source that also brings resources, resource templates
// and prompts (an upstream MCP server). The gateway serves them beside the
// declared ones: resources under their own URIs, prompts named into the
// source's namespace like its tools (ToolName).
type CatalogSource interface {
	// Catalog is what the source listed last, as the upstream's JSON
	// objects; empty while it has not been reached.
	Catalog() SourceCatalog
	// ReadResource forwards resources/read and returns the upstream's result.
	ReadResource(ctx context.Context, uri string) (json.RawMessage, error)
	// GetPrompt forwards prompts/get under the prompt's original name.
	GetPrompt(ctx context.Context, name string, args map[string]string) (json.RawMessage, error)
	// Complete forwards completion/complete (params with the upstream's
	// own reference) and returns the upstream's result.
	Complete(ctx context.Context, params map[string]any) (json.RawMessage, error)
}

// SourceCatalog is a source's resources, resource templates and prompts,
// every page of each list.
type SourceCatalog struct {
	Resources []json.RawMessage
	Templates []json.RawMessage
	Prompts   []json.RawMessage
}
