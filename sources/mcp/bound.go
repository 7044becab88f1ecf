package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Bounded answers (README, Sources: MCP servers: max_response_size). No
// message of the server is held whole beyond the bound, and one that
// exceeds it costs the caller its answer, not the session:
//   - a stdio child's line and an SSE event (the stdio transport, the SSE
//     streams of an HTTP server) pass through framedBound, which cuts the
//     message at the bound, drops the rest as it arrives and, when it was
//     the answer to a request, hands the transport a JSON-RPC error for
//     that request instead;
//   - any other HTTP body (a JSON answer to a POST) is read through
//     http.MaxBytesReader, whose error fails that request alone.
//
// Either way the request fails with tooLarge's error, and the next request
// goes on the same child or session.

// defaultMaxResponseSize is max_response_size when the source sets none,
// as for OpenAPI and GraphQL sources.
const defaultMaxResponseSize = 8 << 20

// tooLarge is the error of a request whose answer exceeded max bytes: an
// answer for the caller, as the server's own errors are (-32000 for a
// tool, the code for resources/read and prompts/get).
func tooLarge(max int64) *rpcError {
	return &rpcError{code: pipeline.CodeStageFailed, message: fmt.Sprintf("the MCP server's answer is larger than max_response_size (%d bytes)", max)}
}

// boundedBodies bounds the bodies of an HTTP server's answers.
type boundedBodies struct {
	base http.RoundTripper
	max  int64
	log  *zap.Logger
}

func (t *boundedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "text/event-stream" {
		res.Body = struct {
			io.Reader
			io.Closer
		}{newFramedBound(res.Body, t.max, true, t.log), res.Body}
	} else {
		res.Body = http.MaxBytesReader(nil, res.Body, t.max)
	}
	return res, nil
}

// framedBound passes on a stream of JSON-RPC messages, each a line (stdio)
// or an SSE event (sse: the payloads of its data lines are the message),
// as long as a message stays within max bytes. A longer one is cut: the
// part passed on is ended there (an incomplete JSON object, which the
// transports skip), the rest is read and dropped, and when its end has
// come, an error answer to the request it answered takes its place.
// What it answered is read on the way (topLevel), so memory stays
// constant whatever the size.
type framedBound struct {
	src *bufio.Reader
	max int64
	sse bool
	log *zap.Logger
	// ended, when set, is called once the stream has ended (or failed).
	ended func()

	out []byte // what Read hands out next: a slice of src's buffer, or own
	own []byte
	err error // src's, returned once out is empty

	size       int64 // bytes of the current message read so far
	inLine     bool  // the current line has begun
	passedPart bool  // part of the current line was passed on
	data       bool  // sse: the current line is a data line
	dataLines  int   // sse: data lines of the current event
	cut        bool
	scan       topLevel
}

// framedChunk is how much of a message framedBound reads at a time: one
// is made for each SSE answer to a POST, so it stays small.
const framedChunk = 16 << 10

func newFramedBound(r io.Reader, max int64, sse bool, log *zap.Logger) *framedBound {
	return &framedBound{src: bufio.NewReaderSize(r, framedChunk), max: max, sse: sse, log: log}
}

func (f *framedBound) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		chunk, err := f.src.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull {
			f.err = err
			if f.ended != nil {
				f.ended()
			}
		}
		f.own = f.own[:0]
		f.out = nil
		if len(chunk) > 0 {
			f.take(chunk)
		}
		if f.err != nil && f.cut { // a message cut off by the stream's end
			f.answerCut()
			f.out = f.own
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

var (
	dataField = []byte("data:")
	newline   = []byte("\n")
)

// take handles the next chunk of the stream: a line, or part of one.
func (f *framedBound) take(chunk []byte) {
	ends := chunk[len(chunk)-1] == '\n'
	if f.sse && !f.inLine && len(bytes.TrimRight(chunk, "\r\n")) == 0 { // an event ends
		if f.cut {
			f.answerCut()
			f.out = f.own
		} else {
			f.out = chunk
		}
		f.nextMessage()
		return
	}
	payload := chunk
	if !f.inLine {
		f.inLine = true
		if f.sse {
			var rest []byte
			if rest, f.data = bytes.CutPrefix(chunk, dataField); f.data {
				payload = bytes.TrimPrefix(rest, []byte(" "))
				if f.dataLines > 0 { // SSE joins data lines with a newline
					f.scan.write(newline)
				}
				f.dataLines++
			}
		}
	}
	if !f.sse || f.data {
		f.scan.write(payload)
	}
	f.size += int64(len(chunk))
	switch {
	case f.cut: // dropped
	case f.size > f.max:
		f.cut = true
		if f.passedPart {
			f.own = append(f.own, '\n')
		}
		if f.sse { // dispatches what was passed of the event
			f.own = append(f.own, '\n')
		}
		f.out = f.own
	default:
		f.out = chunk
		f.passedPart = !ends
	}
	if ends {
		f.inLine, f.passedPart = false, false
		if !f.sse { // a line is a message
			if f.cut {
				f.answerCut()
				f.out = f.own
			}
			f.nextMessage()
		}
	}
}

// answerCut logs the cut message and, when it answered a request, adds
// the error answer for that request to own.
func (f *framedBound) answerCut() {
	id, answered := f.scan.answered()
	f.log.Warn("MCP server's message is larger than max_response_size: dropped",
		zap.Int64("max_response_size", f.max), zap.Int64("bytes", f.size), zap.Bool("answer", answered))
	f.cut = false
	if !answered {
		return // a request or notification of the server: nobody waits for it
	}
	if f.sse {
		f.own = append(f.own, dataField...)
		f.own = append(f.own, ' ')
	}
	e := tooLarge(f.max)
	f.own = append(f.own, `{"jsonrpc":"2.0","id":`...)
	f.own = append(f.own, id...)
	f.own = fmt.Appendf(f.own, `,"error":{"code":%d,"message":`, e.code)
	f.own = pipeline.AppendJSONString(f.own, e.message, false)
	f.own = append(f.own, "}}\n"...)
	if f.sse {
		f.own = append(f.own, '\n')
	}
}

func (f *framedBound) nextMessage() {
	f.size, f.cut, f.data, f.dataLines = 0, false, false, 0
	f.scan.reset()
}

// topLevel follows a JSON object through its bytes as they pass, for what
// it says at its top level: its "id", and whether it has a "method" (then
// it is a request or a notification, not an answer). Only the top-level
// keys and the id are kept, each up to keepMax bytes. It stops reading as
// soon as it knows: an encoder that writes the id first (mcp-go, the Python
// SDK) costs a few bytes of reading, one that writes it last (the
// TypeScript SDK) the whole message.
type topLevel struct {
	depth    int
	inString bool
	escaped  bool
	wantKey  bool // at depth 1, the next string is a key
	inKey    bool
	inID     bool // the top-level value of "id" is being read
	kept     []byte
	id       []byte
	method   bool
	answer   bool // a top-level "result" or "error"
	done     bool // the id is read, and whether the message is an answer
}

const keepMax = 256

func (s *topLevel) reset() {
	kept, id := s.kept[:0], s.id[:0]
	*s = topLevel{kept: kept, id: id}
}

// answered is the message's id, when it has one and no method.
func (s *topLevel) answered() (json.RawMessage, bool) {
	var id mcp.RequestId
	if s.method || len(s.id) == 0 || id.UnmarshalJSON(s.id) != nil || id.IsNil() {
		return nil, false
	}
	return s.id, true
}

func (s *topLevel) keeping() bool { return s.inKey || (s.inID && s.depth == 1) }

func (s *topLevel) keep(c byte) {
	if s.keeping() && len(s.kept) <= keepMax {
		s.kept = append(s.kept, c)
	}
}

func (s *topLevel) write(b []byte) {
	for i := 0; i < len(b) && !s.done; i++ {
		if s.inString && !s.keeping() { // most of a large message is string content
			end, escaped := stringEnd(b[i:], s.escaped)
			if end < 0 {
				s.escaped = escaped
				return
			}
			i += end
			s.inString, s.escaped = false, false
			continue
		}
		if s.inString {
			c := b[i]
			s.keep(c)
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
				if s.inKey {
					s.inKey = false
					var key string
					_ = json.Unmarshal(s.kept, &key)
					s.method = s.method || key == "method"
					s.answer = s.answer || key == "result" || key == "error"
					s.done = len(s.id) > 0 && (s.method || s.answer)
					s.inID = key == "id" // from the colon on
					s.kept = s.kept[:0]
				}
			}
			continue
		}
		switch c := b[i]; c {
		case '"':
			s.inString = true
			s.inKey = s.depth == 1 && s.wantKey
			s.keep(c)
		case '{', '[':
			s.depth++
			if s.depth == 1 {
				s.wantKey = c == '{'
			}
		case '}', ']':
			if s.depth == 1 {
				s.endValue()
			}
			s.depth--
		case ':':
			if s.depth == 1 {
				s.wantKey = false
				s.kept = s.kept[:0]
			}
		case ',':
			if s.depth == 1 {
				s.endValue()
				s.wantKey = true
			}
		case ' ', '\t', '\r', '\n':
		default:
			s.keep(c)
		}
	}
}

// stringEnd finds the quote that ends a JSON string in b, which continues
// one (escaped: an unpaired backslash ended the bytes before b). It returns
// the quote's index, or -1 and whether b ends in an unpaired backslash. A
// quote is the string's end when the run of backslashes before it is even.
func stringEnd(b []byte, escaped bool) (int, bool) {
	from := 0
	for {
		q := bytes.IndexByte(b[from:], '"')
		if q < 0 {
			return -1, unpaired(b[from:], escaped && from == 0)
		}
		q += from
		if !unpaired(b[from:q], escaped && from == 0) {
			return q, false
		}
		from = q + 1 // an escaped quote
	}
}

// unpaired reports whether b ends in an odd run of backslashes, counting
// an unpaired one before b (escaped) when the run is all of b.
func unpaired(b []byte, escaped bool) bool {
	n := len(b) - len(bytes.TrimRight(b, "\\"))
	if n == len(b) && escaped {
		n++
	}
	return n%2 == 1
}

// endValue ends a top-level value: the id's is kept.
func (s *topLevel) endValue() {
	if s.inID && len(s.kept) <= keepMax {
		s.id = append(s.id[:0], s.kept...)
		s.done = len(s.id) > 0 && (s.method || s.answer)
	}
	s.inID = false
	s.kept = s.kept[:0]
}
