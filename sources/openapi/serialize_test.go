package openapi

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func boolPtr(b bool) *bool { return &b }

// join renders an encoded value as one string, for comparison with the
// specification's examples: query pairs and cookie pairs joined with "&" (the
// table writes both that way).
func join(in string, e encoded) string {
	switch in {
	case "path":
		return e.Path
	case "query":
		return strings.Join(e.Query, "&")
	case "header":
		return e.Header
	default:
		return strings.Join(e.Cookie, "&")
	}
}

// na marks a cell that must be refused with an error.
const na = "n/a"

// TestStyleExamples reproduces the specification's "Style Examples" table
// (OpenAPI 3.1.0, with the 3.1.1 corrections noted) for color = empty (nil),
// "blue", ["blue","black","brown"] and {"R":100,"G":200,"B":150}.
//
// Differences from the printed table, each deliberate:
//   - object keys come out sorted, so the table's R,G,B order reads B,G,R here;
//   - query and cookie cells include "color=" for spaceDelimited and
//     pipeDelimited (3.1.0 shows only the value; 3.1.1 adds the name too);
//   - the "empty" cell (nil) of the path styles is refused: a path parameter is
//     required, and label's "." would be a dot segment (table: ";color", ".");
//   - label with explode=false joins with ',' (".blue,black,brown"), as RFC
//     6570's {.list} does and as 3.1.1 corrected the row (3.1.0 printed
//     ".blue.black.brown", the same as explode=true);
//   - simple's empty cell ("n/a" in 3.1.0, "empty" in 3.1.1) is "" in a
//     header; the path location refuses it (an empty segment);
//   - pipeDelimited's "|" and deepObject's brackets are written literally, as
//     in the 3.1.0 table (3.1.1 writes %7C, %5B, %5D; see pipeDelimiter).
func TestStyleExamples(t *testing.T) {
	str := "blue"
	arr := []any{"blue", "black", "brown"}
	obj := map[string]any{"R": float64(100), "G": float64(200), "B": float64(150)}

	rows := []struct {
		style, in            string
		explode              bool
		empty, str, arr, obj string
	}{
		{"matrix", "path", false, na, ";color=blue", ";color=blue,black,brown", ";color=B,150,G,200,R,100"},
		{"matrix", "path", true, na, ";color=blue", ";color=blue;color=black;color=brown", ";B=150;G=200;R=100"},
		{"label", "path", false, na, ".blue", ".blue,black,brown", ".B,150,G,200,R,100"},
		{"label", "path", true, na, ".blue", ".blue.black.brown", ".B=150.G=200.R=100"},
		{"form", "query", false, "color=", "color=blue", "color=blue,black,brown", "color=B,150,G,200,R,100"},
		{"form", "query", true, "color=", "color=blue", "color=blue&color=black&color=brown", "B=150&G=200&R=100"},
		{"form", "cookie", false, "color=", "color=blue", "color=blue,black,brown", "color=B,150,G,200,R,100"},
		{"form", "cookie", true, "color=", "color=blue", "color=blue&color=black&color=brown", "B=150&G=200&R=100"},
		{"simple", "path", false, na, "blue", "blue,black,brown", "B,150,G,200,R,100"},
		{"simple", "path", true, na, "blue", "blue,black,brown", "B=150,G=200,R=100"},
		{"simple", "header", false, "", "blue", "blue,black,brown", "B,150,G,200,R,100"},
		{"simple", "header", true, "", "blue", "blue,black,brown", "B=150,G=200,R=100"},
		{"spaceDelimited", "query", false, na, na, "color=blue%20black%20brown", "color=B%20150%20G%20200%20R%20100"},
		{"pipeDelimited", "query", false, na, na, "color=blue|black|brown", "color=B|150|G|200|R|100"},
		{"deepObject", "query", true, na, na, na, "color[B]=150&color[G]=200&color[R]=100"},
	}
	for _, r := range rows {
		p := paramSpec{Name: "color", In: r.in, Style: r.style, Explode: boolPtr(r.explode)}
		cells := []struct {
			label string
			value any
			want  string
		}{{"empty", nil, r.empty}, {"string", str, r.str}, {"array", arr, r.arr}, {"object", obj, r.obj}}
		for _, c := range cells {
			got, err := p.encode(c.value)
			switch {
			case c.want == na && err == nil:
				t.Errorf("%s/%s explode=%v %s: want an error, got %q", r.style, r.in, r.explode, c.label, join(r.in, got))
			case c.want != na && err != nil:
				t.Errorf("%s/%s explode=%v %s: %v", r.style, r.in, r.explode, c.label, err)
			case c.want != na && join(r.in, got) != c.want:
				t.Errorf("%s/%s explode=%v %s: got %q, want %q", r.style, r.in, r.explode, c.label, join(r.in, got), c.want)
			}
		}
	}
}

// TestDefaults checks the style and explode each location uses when the
// spec leaves them out.
func TestDefaults(t *testing.T) {
	arr := []any{"a", "b"}
	cases := []struct {
		in, want string
	}{
		{"path", "a,b"},       // simple, explode=false
		{"query", "x=a&x=b"},  // form, explode=true
		{"header", "a,b"},     // simple, explode=false
		{"cookie", "x=a&x=b"}, // form, explode=true
	}
	for _, c := range cases {
		got, err := paramSpec{Name: "x", In: c.in}.encode(arr)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if join(c.in, got) != c.want {
			t.Errorf("%s: got %q, want %q", c.in, join(c.in, got), c.want)
		}
	}
}

// TestScalars: numbers render as JSON does, booleans as true/false.
func TestScalars(t *testing.T) {
	cases := []struct {
		value any
		want  string
	}{
		{float64(100), "100"},
		{1.5, "1.5"},
		{-0.25, "-0.25"},
		{1e21, "1e+21"},
		{float64(1 << 53), "9007199254740992"},
		{int(-7), "-7"},
		{int64(math.MaxInt64), "9223372036854775807"},
		{json.Number("12345678901234567890123"), "12345678901234567890123"},
		{json.Number("1.0e3"), "1.0e3"},
		{true, "true"},
		{false, "false"},
	}
	for _, c := range cases {
		got, err := paramSpec{Name: "n", In: "path"}.encode(c.value)
		if err != nil {
			t.Fatalf("%#v: %v", c.value, err)
		}
		// '+' is escaped in a path value: it is not unreserved.
		want := strings.ReplaceAll(c.want, "+", "%2B")
		if got.Path != want {
			t.Errorf("%#v: got %q, want %q", c.value, got.Path, want)
		}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), json.Number("1x"), float32(1), struct{}{}, []string{"a"}} {
		if _, err := (paramSpec{Name: "n", In: "query"}).encode(bad); err == nil {
			t.Errorf("%#v: want an error", bad)
		}
	}
}

// TestUnrepresentable: values these styles cannot carry are refused, not
// flattened in some guessed way.
func TestUnrepresentable(t *testing.T) {
	cases := []struct {
		name  string
		p     paramSpec
		value any
		msg   string
	}{
		{"array in array", paramSpec{Name: "c", In: "query"}, []any{[]any{"a"}}, "nested"},
		{"object in array", paramSpec{Name: "c", In: "path"}, []any{map[string]any{"a": "b"}}, "nested"},
		{"object in object", paramSpec{Name: "c", In: "header"}, map[string]any{"a": map[string]any{}}, "nested"},
		{"nested deepObject", paramSpec{Name: "c", In: "query", Style: "deepObject"}, map[string]any{"a": map[string]any{"b": "c"}}, "nested"},
		{"null in array", paramSpec{Name: "c", In: "cookie"}, []any{nil}, "null"},
		{"deepObject array", paramSpec{Name: "c", In: "query", Style: "deepObject"}, []any{"a"}, "objects only"},
		{"empty key", paramSpec{Name: "c", In: "query", Style: "deepObject"}, map[string]any{"": "x"}, "empty"},
		{"empty cookie key", paramSpec{Name: "c", In: "cookie"}, map[string]any{"": "x"}, "empty"},
		{"deepObject bracket key", paramSpec{Name: "c", In: "query", Style: "deepObject"}, map[string]any{"a][b": "x"}, "'['"},
		{"pipe scalar", paramSpec{Name: "c", In: "query", Style: "pipeDelimited"}, "a", "arrays and objects only"},
		{"space in spaceDelimited item", paramSpec{Name: "c", In: "query", Style: "spaceDelimited"}, []any{"a b", "c"}, "space"},
		{"exploded pipe object", paramSpec{Name: "c", In: "query", Style: "pipeDelimited", Explode: boolPtr(true)}, map[string]any{"a": "b"}, "objects"},
	}
	for _, c := range cases {
		_, err := c.p.encode(c.value)
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), `"c"`) {
			t.Errorf("%s: got error %v, want one naming \"c\" and containing %q", c.name, err, c.msg)
		}
	}
}

// TestPathAttacks: no value can leave its path segment or become a dot
// segment, in any path style.
func TestPathAttacks(t *testing.T) {
	cases := []struct{ value, want string }{
		{"../admin", "..%2Fadmin"},
		{"..", "%2E%2E"},
		{".", "%2E"},
		{"...", "%2E%2E%2E"},
		{"a/b", "a%2Fb"},
		{"%2F", "%252F"},
		{"a?x=1", "a%3Fx%3D1"},
		{"a#f", "a%23f"},
		{"a;b", "a%3Bb"},
		{"a,b", "a%2Cb"},
		{"%00", "%2500"},
		{"\x00", "%00"},
		{"\\..\\", "%5C..%5C"},
		{"ünï", "%C3%BCn%C3%AF"},
		{"a b", "a%20b"},
		{"file.txt", "file.txt"},
	}
	for _, c := range cases {
		got, err := paramSpec{Name: "id", In: "path"}.encode(c.value)
		if err != nil {
			t.Fatalf("%q: %v", c.value, err)
		}
		if got.Path != c.want {
			t.Errorf("simple %q: got %q, want %q", c.value, got.Path, c.want)
		}
		for _, style := range []string{"simple", "label", "matrix"} {
			for _, explode := range []bool{false, true} {
				p := paramSpec{Name: "id", In: "path", Style: style, Explode: boolPtr(explode)}
				for _, v := range []any{c.value, []any{c.value, c.value}, map[string]any{c.value: c.value}} {
					e, err := p.encode(v)
					if err != nil {
						t.Fatalf("%s explode=%v %#v: %v", style, explode, v, err)
					}
					if strings.ContainsAny(e.Path, "/?#") || strings.Trim(e.Path, ".") == "" {
						t.Errorf("%s explode=%v %#v: %q can leave its segment", style, explode, v, e.Path)
					}
				}
			}
		}
	}
	// Exploded label joins items with '.', so dots inside items are escaped
	// there (".a%2Eb.c" is two items, not three).
	e, err := paramSpec{Name: "id", In: "path", Style: "label", Explode: boolPtr(true)}.encode([]any{"a.b", "c"})
	if err != nil || e.Path != ".a%2Eb.c" {
		t.Errorf("label dots: got %q, %v", e.Path, err)
	}
	// Empty values and outputs that would be empty or only dots are refused.
	for _, c := range []struct {
		style   string
		explode bool
		value   any
	}{
		{"simple", false, nil}, {"simple", false, ""}, {"simple", false, []any{}},
		{"simple", false, map[string]any{}}, {"simple", false, []any{""}},
		{"label", false, ""}, {"label", false, []any{""}}, {"label", true, []any{"", ""}},
		{"matrix", false, nil}, {"matrix", true, ""},
	} {
		_, err := paramSpec{Name: "id", In: "path", Style: c.style, Explode: boolPtr(c.explode)}.encode(c.value)
		if err == nil || !strings.Contains(err.Error(), `path parameter "id"`) {
			t.Errorf("%s explode=%v %#v: got %v, want a path parameter error", c.style, c.explode, c.value, err)
		}
	}
}

// TestQueryEscaping: keys and values are percent-encoded outside the
// unreserved set; allowReserved keeps the reserved characters that do not
// carry query structure.
func TestQueryEscaping(t *testing.T) {
	nasty := "a b&c=d#e+f;g%h/i?j:k@l,m[n]o!p$q'r(s)t*u~v\"w<x>y|z\\é\x00\n"
	strict := "a%20b%26c%3Dd%23e%2Bf%3Bg%25h%2Fi%3Fj%3Ak%40l%2Cm%5Bn%5Do%21p%24q%27r%28s%29t%2Au~v%22w%3Cx%3Ey%7Cz%5C%C3%A9%00%0A"
	reserved := "a%20b%26c%3Dd%23e%2Bf%3Bg%25h/i?j:k@l,m[n]o!p$q'r(s)t*u~v%22w%3Cx%3Ey%7Cz%5C%C3%A9%00%0A"
	cases := []struct {
		name  string
		p     paramSpec
		value any
		want  []string
	}{
		{"strict", paramSpec{Name: "q", In: "query"}, nasty, []string{"q=" + strict}},
		{"allowReserved", paramSpec{Name: "q", In: "query", AllowReserved: true}, nasty, []string{"q=" + reserved}},
		{"allowReserved url", paramSpec{Name: "next", In: "query", AllowReserved: true}, "https://x.test/p?a=1&b=2#top",
			[]string{"next=https://x.test/p?a%3D1%26b%3D2%23top"}},
		{"name escaped", paramSpec{Name: "a b[]", In: "query"}, "v", []string{"a%20b%5B%5D=v"}},
		// allowReserved does not let ',' split a non-exploded item.
		{"allowReserved list", paramSpec{Name: "q", In: "query", Explode: boolPtr(false), AllowReserved: true}, []any{"a,b", "c/d"},
			[]string{"q=a%2Cb,c/d"}},
		{"exploded object keys", paramSpec{Name: "q", In: "query"}, map[string]any{"x&admin=1": "v"}, []string{"x%26admin%3D1=v"}},
		{"deepObject keys", paramSpec{Name: "f", In: "query", Style: "deepObject"}, map[string]any{"a&b=c": "1 2", "z": true},
			[]string{"f[a%26b%3Dc]=1%202", "f[z]=true"}},
		{"pipe items", paramSpec{Name: "q", In: "query", Style: "pipeDelimited"}, []any{"a|b", "c"}, []string{"q=a%7Cb|c"}},
		{"exploded pipe array", paramSpec{Name: "q", In: "query", Style: "pipeDelimited", Explode: boolPtr(true)}, []any{"a", "b"},
			[]string{"q=a", "q=b"}},
		{"empty exploded array", paramSpec{Name: "q", In: "query"}, []any{}, []string{}},
		{"empty list", paramSpec{Name: "q", In: "query", Explode: boolPtr(false)}, []any{}, []string{"q="}},
		{"empty deepObject", paramSpec{Name: "q", In: "query", Style: "deepObject"}, map[string]any{}, []string{}},
	}
	for _, c := range cases {
		got, err := c.p.encode(c.value)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(got.Query, c.want) && !(len(got.Query) == 0 && len(c.want) == 0) {
			t.Errorf("%s: got %q, want %q", c.name, got.Query, c.want)
		}
	}
	// Every pair, allowReserved or not, parses back to the value with Go's
	// strict decoder (which refuses a literal ';').
	for _, ar := range []bool{false, true} {
		e, err := paramSpec{Name: "q", In: "query", AllowReserved: ar}.encode(nasty)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := url.ParseQuery(e.Query[0])
		if err != nil || len(vals) != 1 || vals.Get("q") != nasty {
			t.Errorf("allowReserved=%v: %q parses to %v, %v", ar, e.Query[0], vals, err)
		}
	}
}

func TestHeaderValues(t *testing.T) {
	p := paramSpec{Name: "X-Color", In: "header"}
	for _, bad := range []any{"a\r\nX-Admin: 1", "a\nb", "a\rb", "a\x00b", "a\x7fb", []any{"ok", "a\nb"}, map[string]any{"k\r\n": "v"}} {
		_, err := p.encode(bad)
		if err == nil || !strings.Contains(err.Error(), `header parameter "X-Color"`) || strings.Contains(err.Error(), "X-Admin") {
			t.Errorf("%q: got %v, want an error naming the parameter but not the value", bad, err)
		}
	}
	// Header values are not percent-encoded; tab and non-ASCII pass.
	got, err := p.encode("a b\t%2F;é")
	if err != nil || got.Header != "a b\t%2F;é" {
		t.Errorf("got %q, %v", got.Header, err)
	}
}

func TestCookieValues(t *testing.T) {
	p := paramSpec{Name: "sid", In: "cookie"}
	cases := []struct {
		value any
		want  []string
	}{
		{"a; admin=1", []string{"sid=a%3B%20admin=1"}},
		{"a,b\"c\\d\x01e%f", []string{"sid=a%2Cb%22c%5Cd%01e%25f"}},
		{"é", []string{"sid=%C3%A9"}},
		{[]any{"a,b", "c"}, []string{"sid=a%2Cb", "sid=c"}},
		{map[string]any{"x=y; z": "1"}, []string{"x%3Dy%3B%20z=1"}},
	}
	for _, c := range cases {
		got, err := p.encode(c.value)
		if err != nil || !slices.Equal(got.Cookie, c.want) {
			t.Errorf("%#v: got %q, %v; want %q", c.value, got.Cookie, err, c.want)
		}
	}
	got, err := paramSpec{Name: "sid", In: "cookie", Explode: boolPtr(false)}.encode([]any{"a,b", "c"})
	if err != nil || !slices.Equal(got.Cookie, []string{"sid=a%2Cb,c"}) {
		t.Errorf("non-exploded: got %q, %v", got.Cookie, err)
	}
}

// TestValidate: style/location combinations the specification does not
// allow fail with a message naming the parameter, its location and style.
func TestValidate(t *testing.T) {
	bad := []struct {
		p    paramSpec
		want []string
	}{
		{paramSpec{Name: "f", In: "path", Style: "deepObject"}, []string{`"f"`, "path", `"deepObject"`}},
		{paramSpec{Name: "f", In: "header", Style: "deepObject"}, []string{`"f"`, "header", `"deepObject"`}},
		{paramSpec{Name: "f", In: "cookie", Style: "deepObject"}, []string{`"f"`, "cookie", `"deepObject"`}},
		{paramSpec{Name: "m", In: "query", Style: "matrix"}, []string{`"m"`, "query", `"matrix"`}},
		{paramSpec{Name: "l", In: "query", Style: "label"}, []string{`"l"`, "query", `"label"`}},
		{paramSpec{Name: "s", In: "query", Style: "simple"}, []string{`"s"`, "query", `"simple"`}},
		{paramSpec{Name: "s", In: "path", Style: "spaceDelimited"}, []string{`"s"`, "path", `"spaceDelimited"`}},
		{paramSpec{Name: "p", In: "header", Style: "pipeDelimited"}, []string{`"p"`, "header", `"pipeDelimited"`}},
		{paramSpec{Name: "h", In: "header", Style: "form"}, []string{`"h"`, "header", `"form"`}},
		{paramSpec{Name: "c", In: "cookie", Style: "simple"}, []string{`"c"`, "cookie", `"simple"`}},
		{paramSpec{Name: "u", In: "query", Style: "csv"}, []string{`"u"`, "query", `unknown style "csv"`}},
		{paramSpec{Name: "u", In: "body"}, []string{`"u"`, `unknown location "body"`}},
		{paramSpec{In: "query"}, []string{"no name"}},
		{paramSpec{Name: "X Bad", In: "header"}, []string{`"X Bad"`, "header", "token"}},
		{paramSpec{Name: "a;b", In: "cookie"}, []string{`"a;b"`, "cookie", "token"}},
	}
	for _, c := range bad {
		err := c.p.validate()
		if err == nil {
			t.Errorf("%+v: want an error", c.p)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q does not contain %q", c.p, err, w)
			}
		}
		if _, err2 := c.p.encode("x"); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%+v: encode does not refuse it the same way: %v", c.p, err2)
		}
	}
	for in, styles := range stylesByLocation {
		for _, s := range append([]string{""}, styles...) {
			if err := (paramSpec{Name: "ok", In: in, Style: s}).validate(); err != nil {
				t.Errorf("%s/%q: %v", in, s, err)
			}
		}
	}
}

// seen is what the test server reports about one request.
type seen struct {
	Route       string
	ID          string
	EscapedPath string
	RawQuery    string
	Query       url.Values
	Header      string
	Cookies     map[string]string
}

// TestEndToEnd sends real requests built from encode's outputs to a real
// net/http server and checks what it receives: the routed path, the decoded
// path value, the raw and decoded query, the header and the cookies.
func TestEndToEnd(t *testing.T) {
	mux := http.NewServeMux()
	report := func(route string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			s := seen{Route: route, ID: r.PathValue("id"), EscapedPath: r.URL.EscapedPath(),
				RawQuery: r.URL.RawQuery, Query: r.URL.Query(), Header: r.Header.Get("X-Color"), Cookies: map[string]string{}}
			for _, c := range r.Cookies() {
				s.Cookies[c.Name] = c.Value
			}
			json.NewEncoder(w).Encode(s)
		}
	}
	mux.HandleFunc("GET /items/{id}", report("items"))
	mux.HandleFunc("GET /items/{id}/", report("items-sub"))
	mux.HandleFunc("GET /admin", report("admin"))
	mux.HandleFunc("/", report("other"))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	get := func(t *testing.T, path string, query []string, header string, cookies []string) seen {
		t.Helper()
		u := srv.URL + path
		if len(query) > 0 {
			u += "?" + strings.Join(query, "&")
		}
		req, err := http.NewRequest("GET", u, nil)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if header != "" {
			req.Header.Set("X-Color", header)
		}
		if len(cookies) > 0 {
			req.Header.Set("Cookie", strings.Join(cookies, "; "))
		}
		// No redirects: a server that cleaned the path would answer 301, and
		// following it would hide that.
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d (location %q)", u, resp.StatusCode, resp.Header.Get("Location"))
		}
		var s seen
		if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	t.Run("path", func(t *testing.T) {
		for _, v := range []string{"../admin", "..", ".", "a/b", "%2F", "a?x=1", "a#f", "a;b", "%00", "\x00",
			"ünï", "a b", "../../admin/", "..%2Fadmin", "/admin", "file.txt"} {
			e, err := paramSpec{Name: "id", In: "path"}.encode(v)
			if err != nil {
				t.Fatalf("%q: %v", v, err)
			}
			s := get(t, strings.Replace("/items/{id}", "{id}", e.Path, 1), nil, "", nil)
			if s.Route != "items" || s.ID != v || s.EscapedPath != "/items/"+e.Path {
				t.Errorf("%q: server saw route %q, id %q, path %q; want items, %q, %q", v, s.Route, s.ID, s.EscapedPath, v, "/items/"+e.Path)
			}
		}
		// Label and matrix prefixes stay inside the segment too.
		for _, style := range []string{"label", "matrix"} {
			e, err := paramSpec{Name: "id", In: "path", Style: style}.encode([]any{"..", "../admin"})
			if err != nil {
				t.Fatal(err)
			}
			s := get(t, "/items/"+e.Path, nil, "", nil)
			if s.Route != "items" || s.EscapedPath != "/items/"+e.Path {
				t.Errorf("%s: server saw route %q, path %q", style, s.Route, s.EscapedPath)
			}
		}
	})

	t.Run("query", func(t *testing.T) {
		nasty := "a&b=c#d +e;f%g/h?i[j]é"
		// want is what r.URL.Query() decodes. Non-exploded lists arrive as
		// one value: the upstream splits on the literal ',' in the raw query
		// ("a%2Cb,c"), then decodes each item, so "a,b" stays one item.
		cases := []struct {
			p     paramSpec
			value any
			want  url.Values
		}{
			{paramSpec{Name: "q", In: "query"}, nasty, url.Values{"q": {nasty}}},
			{paramSpec{Name: "q", In: "query", AllowReserved: true}, nasty, url.Values{"q": {nasty}}},
			{paramSpec{Name: "q", In: "query"}, []any{nasty, "x"}, url.Values{"q": {nasty, "x"}}},
			{paramSpec{Name: "q", In: "query", Explode: boolPtr(false)}, []any{"a,b", "c"}, url.Values{"q": {"a,b,c"}}},
			{paramSpec{Name: "q", In: "query", Style: "pipeDelimited"}, []any{"a|b", "c"}, url.Values{"q": {"a|b|c"}}},
			{paramSpec{Name: "q", In: "query", Style: "spaceDelimited"}, []any{"a", "b"}, url.Values{"q": {"a b"}}},
			{paramSpec{Name: "f", In: "query", Style: "deepObject"}, map[string]any{"a&admin=1": nasty, "n": float64(2)},
				url.Values{"f[a&admin=1]": {nasty}, "f[n]": {"2"}}},
			{paramSpec{Name: "q", In: "query"}, map[string]any{"x&admin=1": "v"}, url.Values{"x&admin=1": {"v"}}},
		}
		for _, c := range cases {
			e, err := c.p.encode(c.value)
			if err != nil {
				t.Fatalf("%#v: %v", c.value, err)
			}
			s := get(t, "/items/1", e.Query, "", nil)
			if s.RawQuery != strings.Join(e.Query, "&") {
				t.Errorf("%#v: raw query %q, sent %q", c.value, s.RawQuery, strings.Join(e.Query, "&"))
			}
			if !equalValues(s.Query, c.want) {
				t.Errorf("%#v: server decoded %v, want %v", c.value, s.Query, c.want)
			}
		}
	})

	t.Run("header and cookie", func(t *testing.T) {
		h, err := paramSpec{Name: "X-Color", In: "header"}.encode(map[string]any{"R": float64(100), "G": "a;b"})
		if err != nil {
			t.Fatal(err)
		}
		v := "a; admin=1, \"q\" \\ é"
		c, err := paramSpec{Name: "sid", In: "cookie"}.encode(v)
		if err != nil {
			t.Fatal(err)
		}
		s := get(t, "/items/1", nil, h.Header, c.Cookie)
		if s.Header != "G,a;b,R,100" {
			t.Errorf("header: %q", s.Header)
		}
		if len(s.Cookies) != 1 {
			t.Errorf("cookies: %v, want only sid", s.Cookies)
		}
		if got, err := url.PathUnescape(s.Cookies["sid"]); err != nil || got != v {
			t.Errorf("cookie sid %q decodes to %q, %v; want %q", s.Cookies["sid"], got, err, v)
		}
	})
}

func equalValues(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// FuzzEncodePath: whatever the value, the path text has no '/', '?' or '#',
// is not a dot segment, and decodes back to the value.
func FuzzEncodePath(f *testing.F) {
	for _, s := range []string{"../admin", "..", ".", "a/b", "%2F", "a?x=1", "a#f", "a;b", "%00", "ü", " ", "a.b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, style := range []string{"simple", "label", "matrix"} {
			p := paramSpec{Name: "id", In: "path", Style: style}
			e, err := p.encode(v)
			if v == "" {
				if err == nil {
					t.Fatalf("%s: empty value accepted", style)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %q: %v", style, v, err)
			}
			if strings.ContainsAny(e.Path, "/?#") || strings.Trim(e.Path, ".") == "" {
				t.Fatalf("%s %q: %q leaves its segment", style, v, e.Path)
			}
			text := e.Path
			switch style {
			case "label":
				text = strings.TrimPrefix(text, ".")
			case "matrix":
				text = strings.TrimPrefix(text, ";id=")
			}
			got, err := url.PathUnescape(text)
			if err != nil || got != v {
				t.Fatalf("%s %q: %q decodes to %q, %v", style, v, e.Path, got, err)
			}
		}
	})
}

// FuzzEncodeQuery: with form/explode, each pair parses back with
// url.ParseQuery to the original name and value, allowReserved or not.
func FuzzEncodeQuery(f *testing.F) {
	for _, s := range []string{"a&b=c", "#", "+", ";", "%zz", "a b", "http://x/?y=1", "é"} {
		f.Add("q", s, false)
		f.Add("q", s, true)
	}
	f.Fuzz(func(t *testing.T, name, v string, allowReserved bool) {
		if name == "" {
			return
		}
		p := paramSpec{Name: name, In: "query", AllowReserved: allowReserved}
		e, err := p.encode([]any{v, v + "x"})
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		for i, want := range []string{v, v + "x"} {
			vals, err := url.ParseQuery(e.Query[i])
			if err != nil || len(vals) != 1 || len(vals[name]) != 1 || vals[name][0] != want {
				t.Fatalf("%q: pair %q parses to %v, %v", want, e.Query[i], vals, err)
			}
		}
	})
}
