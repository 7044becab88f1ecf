// Package auth holds edgemcp's built-in authentication providers, Caddy guest
// modules in the namespace mcp.auth: api_key, jwt, basic and script. Each implements
// pipeline.AuthProvider; a third-party provider is written the same way and
// added with `xcaddy --with`.
//
// Rules every provider here follows: credentials are compared in constant
// time, never logged and never part of an error message; every outbound
// request (JWKS) has a timeout and a size bound.
package auth
