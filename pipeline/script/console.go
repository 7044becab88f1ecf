package script

import (
	"context"
	"log/slog"
	"strings"

	"github.com/dop251/goja"
)

// Console limits: a script in a loop must not flood the operator's logs.
const (
	maxConsoleLines = 50   // per call; one more line says the rest was dropped
	maxConsoleLine  = 4096 // bytes per line
	maxConsoleValue = 1024 // bytes of JSON per non-string argument
)

// installConsole gives the runtime console.log/info/debug/warn/error, which
// write to the configured logger with the script's name and file.
func (r *runner) installConsole() {
	console := r.vm.NewObject()
	levels := map[string]slog.Level{
		"log": slog.LevelInfo, "info": slog.LevelInfo, "debug": slog.LevelDebug,
		"warn": slog.LevelWarn, "error": slog.LevelError, "trace": slog.LevelDebug,
	}
	for name, level := range levels {
		_ = console.Set(name, func(call goja.FunctionCall) goja.Value {
			r.log(level, call.Arguments)
			return goja.Undefined()
		})
	}
	_ = r.vm.Set("console", console)
	_, _ = r.vm.RunString(`Object.freeze(console);`)
}

func (r *runner) log(level slog.Level, args []goja.Value) {
	logger := r.s.opts.Logger
	ctx := context.Background()
	if !logger.Enabled(ctx, level) {
		return
	}
	r.logged++
	switch {
	case r.logged == maxConsoleLines+1:
		logger.Warn("script console output limit reached; further lines of this call are dropped",
			slog.String("tool", r.s.opts.Name), slog.String("script", r.s.prog.file), slog.Int("limit", maxConsoleLines))
		return
	case r.logged > maxConsoleLines:
		return
	}
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r.format(a))
		if b.Len() > maxConsoleLine {
			break
		}
	}
	msg := b.String()
	if len(msg) > maxConsoleLine {
		msg = msg[:maxConsoleLine] + "…"
	}
	logger.Log(ctx, level, msg, slog.String("tool", r.s.opts.Name), slog.String("script", r.s.prog.file))
}

// format writes strings as they are and other values as JSON, as a
// developer reading Node's console output would expect.
func (r *runner) format(v goja.Value) (out string) {
	if goja.IsUndefined(v) {
		return "undefined"
	}
	if s, ok := v.Export().(string); ok {
		return s
	}
	if obj, ok := v.(*goja.Object); ok && obj.ClassName() == "Error" {
		return r.thrownMessage(v)
	}
	defer func() {
		if recover() != nil {
			out = v.String()
		}
	}()
	b, err := r.toJSON(v, maxConsoleValue)
	if err != nil {
		return v.String()
	}
	return string(b)
}
