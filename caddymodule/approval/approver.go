// Package approval asks a person before a tool runs, through elicitation
// (README, Approvals). A tool under an approval policy gets the
// endpoint's Approver as its pipeline.Approver:
// after its inputs are validated, the calling client is asked, with a form
// that names the tool and shows the arguments, whether the call may run.
//
//   - Protocol versions with sessions (up to 2025-11-25): mcp-go sends
//     elicitation/create to the client on the call's own stream
//     (MCPServer.RequestElicitation) and the approver waits for the answer,
//     at most approval_timeout.
//   - 2026-07-28 has no server-initiated requests: the call is answered at
//     once with an input_required result carrying the same form and a
//     signed requestState (mcp-go's multi round-trip requests). The client
//     asks its user and calls again with the answer; the approver checks
//     that the state was issued for this tool, these arguments and this
//     caller, not longer ago than approval_timeout, and not answered
//     before (the record of spent answers).
//
// Every decision is one info line on the logger http.handlers.mcp.audit.
package approval

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
)

const (
	defaultApprovalTimeout = 45 * time.Second

	approvalStateContext = "edgemcp approval state v2\x00"
	approvalArgsContext  = "edgemcp approval arguments v1\x00"
	approvalStateVersion = "a2"
	approvalNonceLen     = 16
)

// InputName is the key of the approval question among a 2026-07-28
// call's inputRequests and inputResponses.
const InputName = "edgemcp_approval"

// b64 encodes nonces and tags; strictB64 refuses an encoding whose unused
// low bits are not zero, so that a state has one spelling.
var (
	b64       = base64.RawURLEncoding
	strictB64 = base64.RawURLEncoding.Strict()
)

// The decisions an audit line records.
const (
	decisionApproved    = "approved"
	decisionDeclined    = "declined"
	decisionCancelled   = "cancelled"
	decisionTimeout     = "timeout"
	decisionUnsupported = "unsupported" // the client cannot be asked
	decisionAbandoned   = "abandoned"   // the request ended while waiting
	decisionInvalid     = "invalid"     // a 2026-07-28 answer not issued for this call
	decisionReused      = "reused"      // a 2026-07-28 answer already given once
	decisionFailed      = "failed"      // asking the client failed
)

// Approver implements pipeline.Approver for every tool of one endpoint.
type Approver struct {
	timeout time.Duration
	// keys are the session keys (session.IDs): the first signs 2026-07-28
	// request states, every one verifies them, so a state survives a
	// reload and is accepted by every node that shares session_key.
	keys  [][]byte
	audit *zap.Logger
	now   func() time.Time
	// spent records the 2026-07-28 answers already used.
	spent spentApprovals
}

// Options configure an Approver.
type Options struct {
	// Keys are the session keys: the first signs 2026-07-28 request
	// states, every one verifies them.
	Keys [][]byte
	// Timeout is approval_timeout (0: the default, 45s).
	Timeout time.Duration
	// Audit gets one info line per decision.
	Audit *zap.Logger
	// Shared, when not nil, is the Redis the nodes share the record of
	// spent answers in, under Prefix; nil: this process's memory.
	Shared pipeline.SharedStore
	Prefix string
}

// New returns the approver of one endpoint.
func New(o Options) *Approver {
	if o.Timeout <= 0 {
		o.Timeout = defaultApprovalTimeout
	}
	a := &Approver{timeout: o.Timeout, keys: o.Keys, audit: o.Audit, now: time.Now, spent: spentHere}
	if o.Shared != nil {
		a.spent = sharedSpent{store: o.Shared, prefix: o.Prefix}
	}
	return a
}

// Approve implements pipeline.Approver.
func (a *Approver) Approve(ctx context.Context, call *pipeline.Call) error {
	if server.IsModernRequest(ctx) {
		return a.approveInAnswer(ctx, call)
	}
	return a.approveByRequest(ctx, call)
}

// approveByRequest asks with elicitation/create on the caller's session.
func (a *Approver) approveByRequest(ctx context.Context, call *pipeline.Call) error {
	start := a.now()
	session := server.ClientSessionFromContext(ctx)
	srv := server.ServerFromContext(ctx)
	withInfo, _ := session.(server.SessionWithClientInfo)
	if srv == nil || withInfo == nil {
		return a.decide(ctx, call, start, decisionUnsupported, nil)
	}
	if caps := withInfo.GetClientCapabilities(); !canElicit(&caps) {
		return a.decide(ctx, call, start, decisionUnsupported, nil)
	}
	form, err := approvalForm(call)
	if err != nil {
		return a.decide(ctx, call, start, decisionFailed, err)
	}
	actx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	res, err := srv.RequestElicitation(actx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  form,
	})
	switch {
	case err == nil && res != nil:
		return a.decide(ctx, call, start, answerDecision(res.Action), nil)
	case ctx.Err() != nil:
		return a.decide(ctx, call, start, decisionAbandoned, ctx.Err())
	case errors.Is(err, context.DeadlineExceeded):
		return a.decide(ctx, call, start, decisionTimeout, nil)
	case errors.Is(err, server.ErrElicitationNotSupported):
		return a.decide(ctx, call, start, decisionUnsupported, nil)
	default:
		return a.decide(ctx, call, start, decisionFailed, err)
	}
}

// approveInAnswer is the 2026-07-28 exchange: ask in the result, decide on
// the retry that carries the answer.
func (a *Approver) approveInAnswer(ctx context.Context, call *pipeline.Call) error {
	now := a.now()
	info := server.RequestProtocolInfoFromContext(ctx)
	if info == nil || !canElicit(info.ClientCapabilities) {
		return a.decide(ctx, call, now, decisionUnsupported, nil)
	}
	rt, _ := ctx.Value(roundTripKey{}).(mcp.MultiRoundTripParams)
	answer := server.ElicitationResponse(rt.InputResponses, InputName)
	if answer == nil {
		form, err := approvalForm(call)
		if err != nil {
			return a.decide(ctx, call, now, decisionFailed, err)
		}
		state, err := a.sign(call, now)
		if err != nil {
			return a.decide(ctx, call, now, decisionFailed, err)
		}
		res := server.NewInputRequestBuilder(state).Elicit(InputName, form).ToolResult()
		raw, err := json.Marshal(res)
		if err != nil {
			return a.decide(ctx, call, now, decisionFailed, err)
		}
		return &pipeline.AskClient{Native: raw}
	}
	issued, nonce, ok := a.verify(rt.RequestState, call)
	if !ok {
		return a.decide(ctx, call, now, decisionInvalid, nil)
	}
	if now.Sub(issued) > a.timeout {
		return a.decide(ctx, call, issued, decisionTimeout, nil)
	}
	// One question, one answer: whatever it says, a state is spent the
	// first time it comes back.
	first, err := a.spent.spend(ctx, nonce, a.timeout+approvalClockSkew)
	switch {
	case err != nil:
		a.auditLine(ctx, call, decisionFailed, a.now().Sub(issued))
		return pipeline.Fail(pipeline.StageApproval, err, "the answer could not be checked against earlier use: try again")
	case !first:
		return a.decide(ctx, call, issued, decisionReused, nil)
	}
	return a.decide(ctx, call, issued, answerDecision(answer.Action), nil)
}

// canElicit: the client declared elicitation with form mode (an empty
// elicitation object means form, as before modes existed).
func canElicit(c *mcp.ClientCapabilities) bool {
	if c == nil || c.Elicitation == nil {
		return false
	}
	return c.Elicitation.Form != nil || c.Elicitation.URL == nil
}

func answerDecision(action mcp.ElicitationResponseAction) string {
	switch action {
	case mcp.ElicitationResponseActionAccept:
		return decisionApproved
	case mcp.ElicitationResponseActionCancel:
		return decisionCancelled
	default: // decline, and anything a client makes up
		return decisionDeclined
	}
}

// approvalForm is the question: the tool by name, the arguments it will
// run with, accept or decline. The form asks for no fields; the answer is
// the action itself.
func approvalForm(call *pipeline.Call) (mcp.ElicitationParams, error) {
	args, err := json.MarshalIndent(call.Inputs, "", "  ")
	if err != nil {
		return mcp.ElicitationParams{}, fmt.Errorf("arguments cannot be shown: %w", err)
	}
	if call.Inputs == nil {
		args = []byte("{}")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Allow the tool %q to run?\n", call.Tool.Name)
	if call.Tool.Source != "" {
		fmt.Fprintf(&b, "It belongs to %q.\n", call.Tool.Source)
	}
	fmt.Fprintf(&b, "\nArguments:\n%s\n\nAccept to run it once with these arguments; decline to refuse.", args)
	return mcp.ElicitationParams{
		Message:         b.String(),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}, nil
}

// decide writes the audit line and turns a decision into the call's
// outcome: nil for approved, else the approval stage's -32000.
func (a *Approver) decide(ctx context.Context, call *pipeline.Call, start time.Time, decision string, cause error) error {
	a.auditLine(ctx, call, decision, a.now().Sub(start))
	switch decision {
	case decisionApproved:
		return nil
	case decisionDeclined:
		return pipeline.Fail(pipeline.StageApproval, nil, "declined")
	case decisionCancelled:
		return pipeline.Fail(pipeline.StageApproval, nil, "declined (cancelled)")
	case decisionTimeout:
		return pipeline.Fail(pipeline.StageApproval, nil, "no answer within %s", a.timeout)
	case decisionUnsupported:
		return pipeline.Fail(pipeline.StageApproval, nil,
			"tool %q needs approval through elicitation: call it from an elicitation-capable client (one that declares the elicitation capability)", call.Tool.Name)
	case decisionInvalid:
		return pipeline.Fail(pipeline.StageApproval, nil,
			"the answer was not asked for this call (tool, arguments or caller differ): call again without it")
	case decisionReused:
		return pipeline.Fail(pipeline.StageApproval, nil,
			"the answer was already used for a call: call again without it to be asked again")
	case decisionAbandoned:
		return pipeline.Fail(pipeline.StageApproval, cause, "the request ended before an answer")
	default:
		return pipeline.Fail(pipeline.StageApproval, cause, "the client could not be asked")
	}
}

// auditLine is the one line a decision leaves: who, which tool, a keyed
// hash of the arguments (never the arguments: they may hold personal data
// or secrets; equal arguments give equal hashes on every node sharing
// session_key), the decision and how long it took.
func (a *Approver) auditLine(ctx context.Context, call *pipeline.Call, decision string, latency time.Duration) {
	subject, provider := "", ""
	if call.Identity != nil {
		subject, provider = call.Identity.Subject, call.Identity.Provider
	}
	fields := []zap.Field{
		zap.String("tool", call.Tool.Name),
		zap.String("subject", subject),
		zap.String("args_hash", a.argsHash(call.Inputs)),
		zap.String("decision", decision),
		zap.Duration("latency", latency),
	}
	if provider != "" {
		fields = append(fields, zap.String("provider", provider))
	}
	if id := telemetry.RequestID(ctx); id != "" {
		fields = append(fields, zap.String("request_id", id))
	}
	a.audit.Info("approval", fields...)
}

// argsHash is HMAC-SHA256 of the arguments' JSON (map keys sorted, numbers
// as sent), first 16 bytes in hex, under a key derived from the session
// key: a plain hash of a short value could be reversed by guessing.
func (a *Approver) argsHash(args map[string]any) string {
	canon, err := json.Marshal(args)
	if err != nil {
		return ""
	}
	mac := hmac.New(sha256.New, a.keys[0])
	mac.Write([]byte(approvalArgsContext))
	mac.Write(canon)
	return hex.EncodeToString(mac.Sum(nil)[:16])
}

// The requestState of a 2026-07-28 approval question is
//
//	a2.<issued, unix ms>.<nonce>.<tag>
//
// with a random 16-byte nonce and tag = HMAC-SHA256(key, context, issued,
// nonce, tool, caller, arguments), both base64url. The retry proves the
// question was asked for the same tool, arguments and caller, and when;
// the nonce is what spentApprovals records, so that it proves so once.
func (a *Approver) sign(call *pipeline.Call, issued time.Time) (string, error) {
	var n [approvalNonceLen]byte
	if _, err := rand.Read(n[:]); err != nil {
		return "", err
	}
	ms := strconv.FormatInt(issued.UnixMilli(), 10)
	nonce := b64.EncodeToString(n[:])
	return approvalStateVersion + "." + ms + "." + nonce + "." + b64.EncodeToString(a.stateTag(a.keys[0], ms, nonce, call)), nil
}

// verify returns when the state was issued and its nonce, if it was signed
// for call.
func (a *Approver) verify(state string, call *pipeline.Call) (time.Time, string, bool) {
	parts := strings.Split(state, ".")
	if len(parts) != 4 || parts[0] != approvalStateVersion || len(parts[2]) != b64.EncodedLen(approvalNonceLen) {
		return time.Time{}, "", false
	}
	ms, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return time.Time{}, "", false
	}
	// Strictly decoded, so that a spent nonce has no second spelling.
	if _, err := strictB64.DecodeString(parts[2]); err != nil {
		return time.Time{}, "", false
	}
	tag, err := strictB64.DecodeString(parts[3])
	if err != nil {
		return time.Time{}, "", false
	}
	valid := false
	for _, k := range a.keys {
		if hmac.Equal(tag, a.stateTag(k, parts[1], parts[2], call)) {
			valid = true
		}
	}
	if !valid {
		return time.Time{}, "", false
	}
	return time.UnixMilli(ms), parts[2], true
}

func (a *Approver) stateTag(key []byte, issued, nonce string, call *pipeline.Call) []byte {
	args, _ := json.Marshal(call.Inputs)
	sum := sha256.Sum256(args)
	provider, subject := "", ""
	if call.Identity != nil {
		provider, subject = call.Identity.Provider, call.Identity.Subject
	}
	mac := hmac.New(sha256.New, key)
	for _, part := range []string{approvalStateContext, issued, nonce, call.Tool.Name, provider, subject, string(sum[:])} {
		// Length-prefixed, so that no two different tuples meet.
		mac.Write([]byte(strconv.Itoa(len(part)) + ":"))
		mac.Write([]byte(part))
	}
	return mac.Sum(nil)
}

// roundTripKey carries a 2026-07-28 call's inputResponses and requestState
// from mcp-go's request to the approver.
type roundTripKey struct{}

// WithRoundTrip is the mcp-go tool middleware that does so, for every tool
// handler the server has (meta-tools too).
func WithRoundTrip(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if rt := req.Params.MultiRoundTripParams; len(rt.InputResponses) > 0 || rt.RequestState != "" {
			ctx = WithAnswers(ctx, rt)
		}
		return next(ctx, req)
	}
}

// WithAnswers is ctx carrying a 2026-07-28 call's inputResponses and
// requestState for the approver, for a call mcp-go does not run (the fast
// path's tasks).
func WithAnswers(ctx context.Context, rt mcp.MultiRoundTripParams) context.Context {
	return context.WithValue(ctx, roundTripKey{}, rt)
}
