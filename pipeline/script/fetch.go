package script

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/dop251/goja"

	"github.com/edgemcp/edgemcp/internal/netguard"
	"github.com/edgemcp/edgemcp/pipeline"
)

// fetch exists only when the operator lists hosts (fetch_allow). A request
// runs synchronously inside the call (the call is waiting anyway), bounded
// by its own timeout, the call's deadline and a response size cap; every
// redirect is checked against the allow list too.
//
// An allowed name may still resolve to an address inside the gateway's own
// network (a DNS answer the operator does not control, or a name pointed at
// 169.254.169.254): the connection is checked at dial time, after
// resolution, and loopback, private, link-local, shared (CGNAT),
// unspecified and multicast addresses are refused unless fetch_allow names
// them: by IP, as localhost (loopback), or as a network (10.0.0.0/8).

type hostRule struct {
	host     string // lower case, without "*."
	port     string // "" = any port
	wildcard bool   // "*.example.com": any subdomain, not the apex
	network  netip.Prefix
}

// ParseFetchAllow checks one fetch_allow entry: a host name or IP, an
// optional ":port", "*.domain" for every subdomain of domain, or a network
// (10.0.0.0/8) whose addresses fetch may reach, by IP or by a name listed.
func ParseFetchAllow(entry string) error {
	_, err := parseHostRule(entry)
	return err
}

func parseHostRule(entry string) (hostRule, error) {
	var h hostRule
	e := strings.ToLower(strings.TrimSpace(entry))
	if p, err := netip.ParsePrefix(e); err == nil {
		h.network = p.Masked()
		return h, nil
	}
	if strings.Contains(e, "/") || e == "" {
		return h, fmt.Errorf("fetch_allow %q: want a host, host:port or *.domain (no scheme, no path)", entry)
	}
	if strings.HasPrefix(e, "*.") {
		h.wildcard = true
		e = e[2:]
	}
	if host, port, err := net.SplitHostPort(e); err == nil {
		e, h.port = host, port
	}
	if e == "" || strings.ContainsAny(e, "*?[] ") {
		return h, fmt.Errorf("fetch_allow %q: want a host, host:port or *.domain", entry)
	}
	h.host = strings.Trim(e, "[]")
	return h, nil
}

type fetcher struct {
	rules   []hostRule
	timeout time.Duration
	max     int64
	client  *http.Client
}

func newFetcher(allow []string, timeout time.Duration, max int64) *fetcher {
	f := &fetcher{timeout: timeout, max: max}
	for _, a := range allow {
		if r, err := parseHostRule(a); err == nil {
			f.rules = append(f.rules, r)
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // the allow list names the hosts actually reached
	tr.MaxIdleConnsPerHost = 8
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: f.checkDial}
	tr.DialContext = dialer.DialContext
	f.client = &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			if !f.allowed(req.URL) {
				return fmt.Errorf("redirect to host %q, which is not in fetch_allow", req.URL.Host)
			}
			return nil
		},
	}
	return f
}

func (f *fetcher) allowed(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	ip, ipErr := netip.ParseAddr(host)
	for _, r := range f.rules {
		if r.network.IsValid() {
			if ipErr == nil && r.network.Contains(ip.Unmap()) {
				return true
			}
			continue
		}
		if r.port != "" && r.port != port {
			continue
		}
		if host == r.host && !r.wildcard {
			return true
		}
		if r.wildcard && strings.HasSuffix(host, "."+r.host) {
			return true
		}
	}
	return false
}

// checkDial is the dialer's Control: it sees the address actually dialed,
// after name resolution and for every redirect.
func (f *fetcher) checkDial(_, address string, _ syscall.RawConn) error {
	ip, err := netguard.DialAddr(address)
	if err != nil {
		return err
	}
	if !netguard.Internal(ip) || f.names(ip) {
		return nil
	}
	return fmt.Errorf("%s is an internal address; fetch reaches one only when fetch_allow names it (by IP, as localhost, or its network)", ip)
}

// names reports whether a rule names ip explicitly.
func (f *fetcher) names(ip netip.Addr) bool {
	for _, r := range f.rules {
		switch {
		case r.network.IsValid():
			if r.network.Contains(ip) {
				return true
			}
		case r.host == "localhost":
			if ip.IsLoopback() {
				return true
			}
		default:
			if a, err := netip.ParseAddr(r.host); err == nil && a.Unmap() == ip {
				return true
			}
		}
	}
	return false
}

// installFetch defines fetch(url, init) → Promise<Response>.
func (r *runner) installFetch() {
	_ = r.vm.Set("fetch", func(call goja.FunctionCall) goja.Value {
		p, resolve, reject := r.vm.NewPromise()
		res, err := r.doFetch(call.Argument(0), call.Argument(1))
		if err != nil {
			_ = reject(r.vm.NewTypeError("fetch: " + err.Error()))
		} else {
			_ = resolve(res)
		}
		return r.vm.ToValue(p)
	})
}

func (r *runner) doFetch(target, init goja.Value) (goja.Value, error) {
	f := r.s.fetch
	u, err := url.Parse(target.String())
	if err != nil || u.Host == "" {
		return nil, errors.New("invalid URL (want an absolute http:// or https:// URL)")
	}
	if !f.allowed(u) {
		return nil, fmt.Errorf("host %q is not in fetch_allow", u.Host)
	}
	method, body, header, err := r.fetchInit(init)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header = header
	resp, err := f.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s %s: timed out", method, shown(u))
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%s %s: %v", method, shown(u), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, f.max+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the response: %v", method, shown(u), err)
	}
	if int64(len(data)) > f.max {
		return nil, fmt.Errorf("%s %s: response body larger than %s", method, shown(u), pipeline.SizeText(f.max))
	}
	return r.response(resp, string(data)), nil
}

// shown is the URL as errors may show it: no user info, no query (either
// may carry a credential).
func shown(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// fetchInit reads the init object: method, headers (a plain object) and a
// string body.
func (r *runner) fetchInit(init goja.Value) (string, io.Reader, http.Header, error) {
	method, header := http.MethodGet, http.Header{}
	var body io.Reader
	obj, ok := init.(*goja.Object)
	if !ok {
		return method, nil, header, nil
	}
	if m := obj.Get("method"); m != nil && !goja.IsUndefined(m) {
		method = strings.ToUpper(m.String())
	}
	if h, ok := obj.Get("headers").(*goja.Object); ok {
		for _, k := range h.Keys() {
			header.Set(k, h.Get(k).String())
		}
	}
	if b := obj.Get("body"); b != nil && !goja.IsUndefined(b) && !goja.IsNull(b) {
		s, ok := b.Export().(string)
		if !ok {
			return "", nil, nil, errors.New("body must be a string (use JSON.stringify)")
		}
		if len(s) > r.s.opts.MaxInput {
			return "", nil, nil, fmt.Errorf("request body larger than %s", pipeline.SizeText(int64(r.s.opts.MaxInput)))
		}
		body = strings.NewReader(s)
	}
	return method, body, header, nil
}

// response builds the subset of the Fetch API Response scripts use:
// status, ok, statusText, url, headers.get/has, text(), json().
func (r *runner) response(resp *http.Response, body string) goja.Value {
	vm := r.vm
	obj := vm.NewObject()
	_ = obj.Set("status", resp.StatusCode)
	_ = obj.Set("ok", resp.StatusCode >= 200 && resp.StatusCode < 300)
	_ = obj.Set("statusText", strings.TrimSpace(strings.TrimPrefix(resp.Status, fmt.Sprint(resp.StatusCode))))
	_ = obj.Set("url", resp.Request.URL.String())
	headers := vm.NewObject()
	_ = headers.Set("get", func(name string) goja.Value {
		if v := resp.Header.Values(name); len(v) > 0 {
			return vm.ToValue(strings.Join(v, ", "))
		}
		return goja.Null()
	})
	_ = headers.Set("has", func(name string) bool { return len(resp.Header.Values(name)) > 0 })
	_ = obj.Set("headers", headers)
	settled := func(v goja.Value, failure *goja.Object) goja.Value {
		p, resolve, reject := vm.NewPromise()
		if failure != nil {
			_ = reject(failure)
		} else {
			_ = resolve(v)
		}
		return vm.ToValue(p)
	}
	_ = obj.Set("text", func() goja.Value { return settled(vm.ToValue(body), nil) })
	_ = obj.Set("json", func() goja.Value {
		parse, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
		v, err := parse(goja.Undefined(), vm.ToValue(body))
		if err != nil {
			var ex *goja.Exception
			if errors.As(err, &ex) {
				return settled(nil, vm.NewTypeError("fetch: response is not JSON: "+ex.Value().String()))
			}
			panic(err) // an interrupt: let the runtime unwind
		}
		return settled(v, nil)
	})
	return obj
}
