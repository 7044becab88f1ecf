package openapi

import "github.com/edgemcp/edgemcp/sources/upstream"

// ArgumentsMakeNames implements upstream.NamesFromArguments: an exploded
// object, a raw Cookie header or a body field makes names on the wire, so
// an argument is fixed here with the source's own `set`, which guards them
// (protectedNames), never by a FixedArgs wrapped around it.
func (*Executor) ArgumentsMakeNames() {}

var _ upstream.NamesFromArguments = (*Executor)(nil)
