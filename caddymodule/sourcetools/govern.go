package sourcetools

import (
	"strings"

	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/pin"
)

// Held is a source's tool its pins keep out of the registry: not listed,
// not callable, on any path.
type Held struct {
	Source string
	pin.Held
}

// Govern applies the operator's governance to the source's upstream
// tools (Upstream), in the order docs/governance.md gives: the pin check
// on the upstream's definitions, then the overrides on what is served.
// held are the tools the pins keep out. Each change of what is held,
// unpinned, gone or unused is logged once (a refresh that changes nothing
// logs nothing); a held tool's warning names it and carries its short
// diff. An override that cannot apply is an error: serving the tool
// without the operator's narrowing would serve more than they allowed.
func (s *Source) Govern(tools []*pipeline.Tool, log *zap.Logger) (served []*pipeline.Tool, held []Held, err error) {
	served = tools
	now := map[string]string{}
	if s.Pins != nil {
		v := pin.Check(s.Pins, tools, s.AllowNew)
		served = v.Served
		for _, h := range v.Held {
			held = append(held, Held{Source: s.Name, Held: h})
			now[h.Key] = "held " + string(h.Reason) + " " + h.Current
			if s.reported[h.Key] != now[h.Key] && log != nil {
				log.Warn("tool held: "+h.Message(), zap.String("source", s.Name), zap.String("tool", h.Tool.Name),
					zap.String("reason", string(h.Reason)), zap.String("pinned", h.Pinned), zap.String("current", h.Current),
					zap.String("diff", strings.Join(h.Changes, "; ")))
			}
		}
		for _, key := range v.Unpinned {
			now[key] = "unpinned"
			if s.reported[key] != now[key] && log != nil {
				log.Info("tool served without a pin (pin new allow)", zap.String("source", s.Name), zap.String("tool", key))
			}
		}
		for _, key := range v.Gone {
			now[key] = "gone"
			if s.reported[key] != now[key] && log != nil {
				log.Info("pinned tool is gone from the source", zap.String("source", s.Name), zap.String("tool", key))
			}
		}
		for key, was := range s.reported {
			if strings.HasPrefix(was, "held ") && now[key] == "" && log != nil {
				log.Info("tool no longer held", zap.String("source", s.Name), zap.String("tool", key))
			}
		}
	}
	if s.Overrides != nil {
		var unused []string
		served, unused, err = s.Overrides.Apply(served)
		if err != nil {
			return nil, nil, err
		}
		for _, name := range unused {
			now["override "+name] = "unused"
			if s.reported["override "+name] != "unused" && log != nil {
				log.Warn("override names no tool the source serves now", zap.String("source", s.Name), zap.String("tool", name))
			}
		}
	}
	s.reported = now
	return served, held, nil
}
