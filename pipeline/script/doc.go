// Package script runs the JavaScript and TypeScript of mappers and
// handlers (docs/architecture.md, Scripts) in goja, and is the runtime any other part of the
// gateway can use to call a script function.
//
// At configuration load a file is bundled once with esbuild (ESM or
// CommonJS, .js or .ts, local imports and node_modules packages beside it
// inlined, no import left for run time), compiled once, and its export
// checked; syntax errors name file:line:column. At call time a runtime is
// taken from the script's bounded pool, the function is called with the
// argument converted to plain JavaScript data, a returned promise is
// settled, and the value is written back as JSON.
//
// The Go API, for mappers, handlers and any other caller (an auth plugin
// calling a function with {headers, tool, remote_addr}, for instance):
//
//	s, err := script.Load("./auth/check.ts#verify", script.Options{
//		Name:    "auth keys",        // shown with console output
//		Timeout: 500 * time.Millisecond,
//		Logger:  ctx.Slogger(),
//	})
//	v, err := s.CallValue(ctx, map[string]any{"headers": h, "tool": name})
//	// v is JSON-like Go data (map[string]any, []any, string, bool, nil,
//	// json.Number); s.Call returns the same as ordered JSON text.
//	// err is a *script.Error: Kind, Message (the thrown message or the
//	// limit hit, safe to show), Stack (debug logs only).
//
// Limits per call (Options): a time limit (default 1s) at which the call
// returns whatever the script does (goja's Interrupt stops JavaScript; a
// native operation it cannot reach runs on in an abandoned runtime,
// bounded by MaxAbandoned and counted by AbandonStats), a call-stack depth
// (1000 frames), input and output caps (1 MiB of JSON each), a memory
// budget charged by the allocating built-ins (MaxMemory, installLimits), at
// most MaxRuntimes calls at once per script. A runtime that failed (other
// than by a plain throw) or was interrupted is dropped, never reused. The
// global object and the built-ins are frozen once the module has loaded
// (lockdownProgram), so nothing one call stores there reaches the next. There
// is no filesystem, no require, no timers; console.* goes to the logger;
// fetch exists only with FetchAllow.
package script
