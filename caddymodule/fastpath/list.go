package fastpath

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/pipeline"
)

// The direct path answers a plain tools/list too. mcp-go builds that answer
// anew for every request: it sorts the names, copies every tool, filters
// them and encodes the whole list, JSON Schemas included (5.7 MB and about
// 80 ms for GitHub's 1,186 operations). Here each tool is encoded once per
// tool set version (the registry), on the first list, and an answer is the
// encoded tools the caller may see, in mcp-go's order, between the same
// framing. It applies under the conditions of a direct tools/call (a
// session on a protocol version with sessions, a JSON request and answer)
// and only without params but a cursor (no _meta): any page; anything
// else goes to mcp-go. Before later pages were answered here, listing
// 10,000 tools to the end took mcp-go over a second (it sorts and copies
// every tool for each of the 20 pages). The tests compare the bytes of
// both paths.

// encodedTools is a version's tools/list entries, encoded once.
type encodedTools struct {
	once  sync.Once
	tools []*pipeline.Tool // sorted by name, as mcp-go lists them
	enc   [][]byte         // jsonrpc.ToolEntry(tools[i])
	err   error
}

func (e *encodedTools) build(engine *pipeline.Engine) {
	e.tools = slices.Clone(engine.Tools())
	slices.SortFunc(e.tools, func(a, b *pipeline.Tool) int { return strings.Compare(a.Name, b.Name) })
	e.enc = make([][]byte, len(e.tools))
	for i, t := range e.tools {
		if e.enc[i], e.err = jsonrpc.ToolEntry(t); e.err != nil {
			return
		}
	}
}

// encoded is t's tools/list entries, encoded on the first call.
func (t *Tools) encoded() *encodedTools {
	t.list.once.Do(func() { t.list.build(t.Engine) })
	return &t.list
}

// plainIDs are the request ids written back as they were sent: an integer
// or a string of characters JSON encoding leaves alone.
var plainIDs = regexp.MustCompile(`^(-?[0-9]{1,15}|"[A-Za-z0-9 _.:-]{0,64}")$`)

// listCursor reads the params of a tools/list the direct path answers:
// none, or only a cursor mcp-go would read (base64 of the last name of
// the previous page). after is nil for the first page.
func listCursor(params map[string]json.RawMessage) (after *string, ok bool) {
	if len(params) == 0 {
		return nil, true
	}
	raw, ok := params["cursor"]
	if !ok || len(params) != 1 {
		return nil, false
	}
	var cursor string
	if json.Unmarshal(raw, &cursor) != nil {
		return nil, false
	}
	if cursor == "" {
		return nil, true // mcp-go: the first page
	}
	name, err := base64.StdEncoding.DecodeString(cursor)
	if err != nil {
		return nil, false // mcp-go's invalid params error
	}
	s := string(name)
	return &s, true
}

// AnswerList serves a plain tools/list and reports whether it did.
func (s *Server) AnswerList(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if !bytes.Contains(body, []byte(`"tools/list"`)) {
		return false // most requests: no second decoding of their body
	}
	var msg struct {
		JSONRPC string                     `json:"jsonrpc"`
		ID      json.RawMessage            `json:"id"`
		Method  string                     `json:"method"`
		Params  map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/list" || msg.JSONRPC != "2.0" ||
		!plainIDs.Match(msg.ID) {
		return false
	}
	after, ok := listCursor(msg.Params)
	if !ok {
		return false
	}
	if !s.directSession(r) {
		return false
	}
	tools := s.shell.Registry().Tools()
	if tools.searching {
		return false // discovery search lists meta-tools, mcp-go's
	}
	list := tools.encoded()
	if list.err != nil {
		return false
	}
	// The page, as mcp-go's listByPagination cuts it: the caller's visible
	// tools in name order whose name sorts after the cursor's, at most
	// PageSize, and a nextCursor (the last name, base64) whenever the
	// page is full.
	start := 0
	if after != nil {
		start = sort.Search(len(list.tools), func(i int) bool { return list.tools[i].Name > *after })
	}
	page := make([]int, 0, min(len(list.tools)-start, PageSize))
	size := 64
	filter := s.opts.ListFilter // only auth hides a tool
	for i := start; i < len(list.tools); i++ {
		t := list.tools[i]
		if len(page) == PageSize {
			break
		}
		if !filter || s.shell.Listable(r.Context(), t) {
			page = append(page, i)
			size += len(list.enc[i]) + 1
		}
	}
	out := make([]byte, 0, size)
	out = append(append(append(out, `{"jsonrpc":"2.0","id":`...), msg.ID...), `,"result":{`...)
	if len(page) == PageSize {
		cursor := base64.StdEncoding.EncodeToString([]byte(list.tools[page[len(page)-1]].Name))
		out = append(append(append(out, `"nextCursor":"`...), cursor...), `",`...)
	}
	out = append(out, `"tools":[`...)
	for n, i := range page {
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, list.enc[i]...)
	}
	out = append(out, "]}}\n"...)
	s.opts.DirectLists.Inc()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	return true
}
