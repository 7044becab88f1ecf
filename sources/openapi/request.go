package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/edgemcp/edgemcp/pipeline"
)

// checkArgs validates a call's arguments against the operation before
// anything is sent: no unknown argument (a caller cannot reach a request
// part the tool does not offer), every required one present, and each
// value valid for its schema.
func (o *Operation) checkArgs(args map[string]any) error {
	for _, p := range o.Params {
		if p.Fixed != nil {
			continue
		}
		if _, ok := args[p.Property]; !ok && p.Required {
			return fmt.Errorf("input %q is required", p.Property)
		}
	}
	if o.Body != nil {
		if _, ok := args[bodyProperty]; !ok && o.Body.Required {
			return fmt.Errorf("input %q is required", bodyProperty)
		}
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		schema, ok := o.inputs[k]
		if !ok {
			return fmt.Errorf("unknown input %q", k)
		}
		if schema == nil || schema.Value == nil {
			continue
		}
		if err := schema.Value.VisitJSON(plainJSON(args[k]), o.validate...); err != nil {
			return fmt.Errorf("input %q: %s", k, schemaErrorText(err))
		}
	}
	return nil
}

// schemaErrorText is the first lines of a schema validation error: kin's
// messages end with the whole schema and value, too much for a caller.
func schemaErrorText(err error) string {
	var me openapi3.MultiError
	if errors.As(err, &me) && len(me) > 0 {
		err = me[0]
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		msg := se.Reason
		if p := se.JSONPointer(); len(p) > 0 {
			msg = "/" + strings.Join(p, "/") + ": " + msg
		}
		return msg
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

// plainJSON copies v with json.Number as float64, which the schema
// validator expects (the values sent keep their exact digits).
func plainJSON(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		return f
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = plainJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = plainJSON(e)
		}
		return s
	}
	return v
}

// newRequest builds the HTTP request of one call: the path with its
// parameters (each confined to its segment), the query, headers, cookies
// and body. base is the server URL the path is appended to. Every name an
// argument puts on the wire passes o.protected: a call that would send one
// the gateway sets fails here, before anything is sent.
func (o *Operation) newRequest(ctx context.Context, base *url.URL, call *pipeline.Call) (*http.Request, error) {
	args := call.Inputs
	p, tq := o.target, o.query
	var query, cookies []string
	header := http.Header{}
	for _, prm := range o.Params {
		var v any
		if prm.Fixed != nil {
			fv, err := prm.Fixed.Value(call)
			if err != nil {
				return nil, err
			}
			v = fv
		} else {
			var ok bool
			if v, ok = args[prm.Property]; !ok {
				continue
			}
		}
		enc, err := prm.encode(v)
		if err != nil {
			return nil, fmt.Errorf("input %q: %v", prm.Property, err)
		}
		if prm.Fixed == nil {
			if err := o.protected.refuse(prm, enc); err != nil {
				return nil, err
			}
		}
		switch prm.In {
		case openapi3.ParameterInPath:
			p = strings.ReplaceAll(p, "{"+prm.Name+"}", enc.Path)
			tq = strings.ReplaceAll(tq, "{"+prm.Name+"}", enc.Path)
		case openapi3.ParameterInQuery:
			query = append(query, enc.Query...)
		case openapi3.ParameterInHeader:
			header.Set(prm.Name, enc.Header)
		case openapi3.ParameterInCookie:
			cookies = append(cookies, enc.Cookie...)
		}
	}
	u := *base
	u.RawPath = ""
	u.Path = ""
	u.RawPath = strings.TrimRight(base.EscapedPath(), "/") + p
	if dec, err := url.PathUnescape(u.RawPath); err == nil {
		u.Path = dec
	}
	if tq != "" {
		if err := o.refuseTemplate(tq); err != nil {
			return nil, err
		}
		query = append([]string{tq}, query...)
	}
	u.RawQuery = strings.Join(query, "&")
	u.Fragment = ""

	var body io.Reader
	contentType := ""
	if o.Body != nil {
		if v, ok := args[bodyProperty]; ok {
			enc, err := o.Body.encode(v)
			if err != nil {
				return nil, fmt.Errorf("input %q: %v", bodyProperty, err)
			}
			if err := o.protected.refuseBody(o.Body.Kind, v, enc); err != nil {
				return nil, err
			}
			body, contentType = bytes.NewReader(enc.data), enc.contentType
		}
	}
	req, err := http.NewRequestWithContext(ctx, o.Method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if len(cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json, */*;q=0.8")
	return req, nil
}
