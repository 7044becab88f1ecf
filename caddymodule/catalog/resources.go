package catalog

// The declared resources and prompts on the page: what resources/list,
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

// resourcesAndPrompts are the page's cards of the contents' resources and
// prompts.
func resourcesAndPrompts(contents Contents) ([]catalogResource, []catalogPrompt) {
	var res []catalogResource
	for _, dr := range contents.Resources {
		cr := catalogResource{URI: dr.URI, Name: dr.Name, Title: dr.Title, Description: dr.Description,
			MimeType: dr.MimeType, Auth: dr.Tool.Auth != nil}
		if dr.Template {
			cr.Inputs = catalogInputs(dr.Tool)
		}
		res = append(res, cr)
	}
	var prompts []catalogPrompt
	for _, p := range contents.Prompts {
		cp := catalogPrompt{Name: p.Name, Title: p.Title, Description: p.Description, Auth: p.Auth != nil}
		for _, a := range p.Arguments {
			cp.Inputs = append(cp.Inputs, catalogInput{Name: a.Name, Type: "string", Required: a.Required, Enum: a.Enum, Description: a.Description})
		}
		prompts = append(prompts, cp)
	}
	return res, prompts
}
