package pipeline

// Payload is the object scripts receive (docs/architecture.md, Stages): {<key>: value, tool,
// auth}, auth null until an auth stage identified the caller. Handlers use
// it with key "inputs", as the engine does for the mappers.
func Payload(call *Call, key string, value any) map[string]any { return payload(call, key, value) }
