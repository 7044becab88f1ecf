package openapi

import "net/textproto"

// ignoredHeaders are header parameters the OpenAPI specification says to
// ignore (the request's own Accept, Content-Type and Authorization), and
// those that frame the HTTP message, which no argument may set.
var ignoredHeaders = map[string]bool{
	"Accept": true, "Content-Type": true, "Authorization": true,
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true,
	"Te": true, "Trailer": true, "Upgrade": true, "Proxy-Authorization": true, "Keep-Alive": true,
}

func ignoredHeader(name string) bool {
	return ignoredHeaders[textproto.CanonicalMIMEHeaderKey(name)]
}
