// Package pipeline is the Caddy-free core of edgemcp: the tool model, input
// types and validation, the stage sequence of a tools/call and its error
// codes. It imports neither Caddy nor any database driver: connectors
// implement the small interfaces declared here, and the Caddy module wires
// them together.
package pipeline
