package caddymodule

import (
	"net/http"
)

// The declared resources and prompts on the catalog page (catalog.go) and
// in `caddy mcp tools` (command_tools.go): what resources/list,
// resources/templates/list and prompts/list publish, never statements.

type catalogResource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MimeType    string
	Auth        bool
	Inputs      []catalogInput // the template's variables
}

type catalogPrompt struct {
	Name        string
	Title       string
	Description string
	Auth        bool
	Inputs      []catalogInput // the arguments
}

// catalogResourcesAndPrompts are those the request's caller may use, by
// the checks of the lists (resourceAllowed, promptFilter).
func (h *Handler) catalogResourcesAndPrompts(r *http.Request) ([]catalogResource, []catalogPrompt) {
	var res []catalogResource
	for _, dr := range h.resources.All() {
		if !h.resources.Readable(r.Context(), dr) {
			continue
		}
		cr := catalogResource{URI: dr.URI, Name: dr.Name, Title: dr.Title, Description: dr.Description,
			MimeType: dr.Mime(), Auth: dr.Tool.Auth != nil}
		if dr.Template {
			cr.Inputs = catalogInputs(dr.Tool)
		}
		res = append(res, cr)
	}
	var prompts []catalogPrompt
	for _, p := range h.prompts.All() {
		if !h.prompts.Readable(r.Context(), p) {
			continue
		}
		cp := catalogPrompt{Name: p.Name, Title: p.Title, Description: p.Description, Auth: p.Auth != nil}
		for _, a := range p.Arguments {
			cp.Inputs = append(cp.Inputs, catalogInput{Name: a.Name, Type: "string", Required: a.Required, Enum: a.Enum, Description: a.Description})
		}
		prompts = append(prompts, cp)
	}
	return res, prompts
}
