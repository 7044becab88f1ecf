package graphql

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/edgemcp/edgemcp/internal/testservices/graphqllib"
	"github.com/edgemcp/edgemcp/pipeline"
)

// setSource provisions a source over the library server with mutations
// off and the `set` lines given, and returns its tools by name.
func setSource(t *testing.T, set map[string]string) (*graphqllib.Server, map[string]*pipeline.Tool) {
	t.Helper()
	srv := graphqllib.Start(t)
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	off := false
	s := &Source{Endpoint: srv.URL, Set: set, Mutations: &off}
	if err := s.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	tools, err := s.Tools("lib")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*pipeline.Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	return srv, byName
}

// callAs runs a tool for a verified caller with arguments given as JSON.
func callAs(t *testing.T, tl *pipeline.Tool, id *pipeline.Identity, args string) (*pipeline.Result, error) {
	t.Helper()
	return tl.Executor.Execute(context.Background(), &pipeline.Call{Tool: tl, Inputs: numbers(t, args), Identity: id})
}

// tenantsIn lists the tenants of the orders in a result, in order.
func tenantsIn(t *testing.T, r *pipeline.Result) []string {
	t.Helper()
	v := r.Value
	if r.Native != nil {
		v = structured(t, r)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if s, ok := v[k].(string); ok && k == "tenant" {
					out = append(out, s)
				}
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

var acme = &pipeline.Identity{Subject: "acme", Claims: map[string]any{"tenant": "acme"}}

// TestSetHoldsOnRawTool: with `set tenant {{ auth.subject }}`, the raw
// query tool refuses every document that gives tenant a value, however it
// is written (an inline literal, a variable, an alias, a fragment, an
// inline fragment, a second operation), with -32000 naming the argument,
// before anything is sent; a document that leaves it out gets the
// caller's value wherever a field takes it, at the root and nested. The
// caller sees its own tenant's orders and never another's.
func TestSetHoldsOnRawTool(t *testing.T) {
	srv, tools := setSource(t, map[string]string{"tenant": "{{ auth.subject }}"})
	raw := tools["lib_query"]
	if !slices.Contains(raw.FromIdentity, "argument tenant: {{ auth.subject }}") {
		t.Errorf("the raw tool takes nothing from the caller: %q", raw.FromIdentity)
	}
	before := len(srv.Requests())
	for _, tc := range []struct{ name, args string }{
		{"literal", `{"query":"{ orders(tenant: \"globex\") { id tenant } }"}`},
		{"variable", `{"query":"query Q($t: String!) { orders(tenant: $t) { id tenant } }","variables":{"t":"globex"}}`},
		{"alias", `{"query":"{ mine: orders { id } theirs: orders(tenant: \"globex\") { id tenant } }"}`},
		{"fragment", `{"query":"{ customer(id: \"c1\") { ...F } } fragment F on Customer { orders(tenant: \"globex\") { id tenant } }"}`},
		{"inline fragment", `{"query":"{ customer(id: \"c1\") { ... on Customer { orders(tenant: \"globex\") { id tenant } } } }"}`},
		{"nested", `{"query":"query { customer(id: \"c2\") { name orders(tenant: \"globex\") { tenant } } }"}`},
		{"other operation", `{"query":"query A { count } query B { orders(tenant: \"globex\") { tenant } }","operationName":"B"}`},
		{"fragment variable", `{"query":"query Q($t: String) { customer(id: \"c1\") { ...F } } fragment F on Customer { orders(tenant: $t) { tenant } }","variables":{"t":"globex"}}`},
	} {
		_, err := callAs(t, raw, acme, tc.args)
		var pe *pipeline.Error
		if !errors.As(err, &pe) || pe.Code != pipeline.CodeStageFailed || pe.Stage != pipeline.StageValidation ||
			!strings.Contains(pe.Message, `argument "tenant"`) || !strings.Contains(pe.Message, "set by the gateway") {
			t.Errorf("%s: %v, want -32000 naming the argument", tc.name, err)
		}
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("%d refused documents reached the endpoint", n)
	}
	// Left out, the argument is the caller's, at the root (where it is
	// required) and nested (where leaving it out means every tenant's),
	// through a fragment and under an alias.
	for _, tc := range []struct{ name, args string }{
		{"root", `{"query":"{ orders { id tenant } }"}`},
		{"nested", `{"query":"{ customer(id: \"c1\") { orders { tenant } } }"}`},
		{"fragment", `{"query":"query Q { a: customer(id: \"c1\") { ...F } b: customer(id: \"c2\") { ...F } } fragment F on Customer { orders { tenant } }","operationName":"Q"}`},
		{"both", `{"query":"{ orders { tenant } customer(id: \"c1\") { ... on Customer { o: orders { tenant } } } }"}`},
	} {
		r, err := callAs(t, raw, acme, tc.args)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := tenantsIn(t, r)
		if len(got) == 0 || slices.ContainsFunc(got, func(s string) bool { return s != "acme" }) {
			t.Errorf("%s: tenants %v, want acme's orders only", tc.name, got)
		}
		last := srv.Last()
		if last.Variables["tenant"] != "acme" || strings.Contains(last.Query, "globex") {
			t.Errorf("%s: sent %s with %v", tc.name, last.Query, last.Variables)
		}
	}
	// A caller's own variable named like the argument keeps its value; the
	// set value gets another name.
	r, err := callAs(t, raw, acme, `{"query":"query Q($tenant: ID!) { customer(id: $tenant) { name orders { tenant } } }","variables":{"tenant":"c1"}}`)
	if err != nil || !strings.Contains(string(r.Native), "Ada") || !slices.Equal(tenantsIn(t, r), []string{"acme"}) {
		t.Errorf("the caller's $tenant: %v %s", err, r.Native)
	}
	if last := srv.Last(); last.Variables["tenant"] != "c1" || last.Variables["tenant_2"] != "acme" {
		t.Errorf("the caller's $tenant: sent %v", last.Variables)
	}
	// A caller without the value fails authentication, before anything is sent.
	before = len(srv.Requests())
	_, err = callAs(t, raw, nil, `{"query":"{ orders { tenant } }"}`)
	var pe *pipeline.Error
	if !errors.As(err, &pe) || pe.Stage != pipeline.StageAuth || len(srv.Requests()) != before {
		t.Errorf("no caller: %v", err)
	}
	// A document without such a field needs no caller value.
	if r, err := callAs(t, raw, nil, `{"query":"{ count }"}`); err != nil || !strings.Contains(string(r.Native), "3") {
		t.Errorf("count: %v", err)
	}
}

// TestSetHoldsOnFieldTools: a field tool's own argument is not an input,
// and a `select` or the generated selection that reaches a nested field
// taking the argument gets the caller's value there too, or is refused
// when it gives one.
func TestSetHoldsOnFieldTools(t *testing.T) {
	srv, tools := setSource(t, map[string]string{"tenant": "{{ auth.claims.tenant }}"})
	orders, customer := tools["lib_orders"], tools["lib_customer"]
	if strings.Contains(string(orders.InputSchema), "tenant") || strings.Contains(string(customer.InputSchema), "tenant") {
		t.Errorf("tenant is an input: %s %s", orders.InputSchema, customer.InputSchema)
	}
	r, err := callAs(t, orders, acme, `{}`)
	if err != nil || !slices.Equal(tenantsIn(t, r), []string{"acme"}) {
		t.Errorf("orders: %v %v", err, r)
	}
	// The generated selection of customer holds orders, which takes tenant.
	r, err = callAs(t, customer, acme, `{"id":"c1"}`)
	if err != nil || !slices.Equal(tenantsIn(t, r), []string{"acme"}) {
		t.Errorf("customer, generated: %v %+v", err, r)
	}
	r, err = callAs(t, customer, acme, `{"id":"c1","select":"{ name o: orders { tenant item } }"}`)
	if err != nil || !slices.Equal(tenantsIn(t, r), []string{"acme"}) {
		t.Errorf("customer, select: %v %+v", err, r)
	}
	before := len(srv.Requests())
	for _, args := range []string{
		`{"tenant":"globex"}`,
	} {
		if _, err := callAs(t, orders, acme, args); err == nil || !strings.Contains(err.Error(), `unknown input "tenant"`) {
			t.Errorf("orders %s: %v", args, err)
		}
	}
	for _, sel := range []string{
		`{ orders(tenant: \"globex\") { tenant } }`,
		`{ ... on Customer { orders(tenant: \"globex\") { tenant } } }`,
	} {
		_, err := callAs(t, customer, acme, `{"id":"c1","select":"`+sel+`"}`)
		if err == nil || !strings.Contains(err.Error(), `argument "tenant" of field Customer.orders is set by the gateway`) {
			t.Errorf("select %s: %v", sel, err)
		}
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("%d refused calls reached the endpoint", n)
	}
}

// TestSetLiteralOnRawTool: a literal `set` holds on the raw tool as an
// identity value does, and a literal for an Int argument is sent as a
// number.
func TestSetLiteralOnRawTool(t *testing.T) {
	srv, tools := setSource(t, map[string]string{"tenant": "globex"})
	raw := tools["lib_query"]
	if len(raw.FromIdentity) != 0 {
		t.Errorf("a literal takes from the caller: %q", raw.FromIdentity)
	}
	r, err := callAs(t, raw, nil, `{"query":"{ orders { tenant } customer(id: \"c1\") { orders { tenant } } }"}`)
	if err != nil || !slices.Equal(tenantsIn(t, r), []string{"globex", "globex", "globex"}) {
		t.Errorf("left out: %v %+v", err, r)
	}
	if _, err := callAs(t, raw, nil, `{"query":"{ orders(tenant: \"acme\") { tenant } }"}`); err == nil || !strings.Contains(err.Error(), `argument "tenant"`) {
		t.Errorf("given: %v", err)
	}
	// An Int literal.
	srv, tools = setSource(t, map[string]string{"first": "1"})
	r, err = callAs(t, tools["lib_query"], nil, `{"query":"{ books { edges { node { id } } } }"}`)
	if err != nil || strings.Count(string(r.Native), `\"id\"`) != 1 || fmt.Sprint(srv.Last().Variables["first"]) != "1" {
		t.Errorf("first fixed to 1: %v %s %v", err, r.Native, srv.Last().Variables)
	}
}

// TestHiddenMutationRefused: with mutations off, a document that holds a
// mutation is refused whichever operation operationName names, and
// whatever the order of its operations; nothing is sent and nothing is
// added. What is sent is only the operation that runs, so an endpoint
// that ignored operationName could run nothing else.
func TestHiddenMutationRefused(t *testing.T) {
	srv, tools := setSource(t, map[string]string{"tenant": "acme"})
	raw := tools["lib_query"]
	const add = `mutation M { addBook(input: {title: \"pwned\", genre: FICTION, authorId: \"a1\"}) { id } }`
	before := len(srv.Requests())
	for _, args := range []string{
		`{"query":"` + add + ` query Q { count }","operationName":"Q"}`,
		`{"query":"query Q { count } ` + add + `","operationName":"Q"}`,
		`{"query":"` + add + ` query Q { count }","operationName":"M"}`,
		`{"query":"{ count } ` + add + `"}`,
		`{"query":"subscription S { count } query Q { count }","operationName":"Q"}`,
	} {
		_, err := callAs(t, raw, nil, args)
		var pe *pipeline.Error
		if !errors.As(err, &pe) || pe.Code != pipeline.CodeStageFailed || pe.Stage != pipeline.StageValidation {
			t.Errorf("%s: %v, want -32000", args, err)
		}
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("%d refused documents reached the endpoint", n)
	}
	r, err := callAs(t, raw, nil, `{"query":"query A { count } query B { books { totalCount } } fragment F on Book { id } query C { book(id: \"1\") { ...F } }","operationName":"B"}`)
	if err != nil || !strings.Contains(string(r.Native), "totalCount") {
		t.Fatalf("B: %v %+v", err, r)
	}
	if q := srv.Last().Query; strings.Contains(q, "count }") || strings.Contains(q, "fragment") || !strings.Contains(q, "query B") {
		t.Errorf("sent %s, want operation B alone", q)
	}
	if r, err := callAs(t, raw, nil, `{"query":"{ count }"}`); err != nil || structured(t, r)["count"] != 3.0 {
		t.Errorf("a book was added: %v %+v", err, r)
	}
}

// tenantSDL has a tenant argument of several types and places: at the
// root, nested, on an interface and on one of its implementations only,
// in a union's members, as a list, and where it is optional.
const tenantSDL = `
interface Node { id: ID! orders(tenant: String): [Order] }
interface Named { id: ID! name: String }
type Order implements Node { id: ID! orders(tenant: String): [Order] tenant: String item(tenant: ID!): String }
type Shop implements Named { id: ID! name(tenant: String): String orders(tenant: String!): [Order] node: Node }
type Thing implements Node & Named { id: ID! name: String orders(tenant: String, first: Int): [Order] tags(tenant: [String!]): [String] }
type Other { id: ID! orders: [Order] }
union U = Order | Shop | Other
type Query { orders(tenant: String!): [Order] shop(id: ID): Shop u: [U] node: Node named: Named count(tenant: Int): Int other: Other }
type Mutation { add(tenant: String!, item: String): Order }
`

// TestSetDocumentCheck: the check on the parsed document, case by case.
func TestSetDocumentCheck(t *testing.T) {
	s, err := parseSchema("tenant.graphql", tenantSDL)
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := NewFixed(map[string]string{"tenant": "7"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ query, want string }{
		// Bound: the variables sent, by name.
		{`{ orders { id } }`, `tenant=7`},
		{`{ count }`, `tenant=7`}, // an Int literal is a number
		{`{ node { id } }`, ``},
		{`{ node { orders { id } } }`, `tenant=7`},
		{`{ shop { orders { id item } node { ... on Thing { tags } } } }`, `tenant=7 tenant_2=7 tenant_3=7`},
		{`{ u { ... on Order { orders { id } } ... on Other { orders { id } } } }`, `tenant=7`},
		{`query Q($tenant: ID) { shop(id: $tenant) { id } }`, ``},
		{`{ __type(name: "Order") { fields { name } } }`, ``},
		// Refused.
		{`{ orders(tenant: "8") { id } }`, `argument "tenant" of field Query.orders is set by the gateway`},
		{`query($t: String = "8") { node { orders(tenant: $t) { id } } }`, `argument "tenant" of field Node.orders`},
		{`{ u { ... on Shop { name(tenant: "8") } } }`, `argument "tenant" of field Shop.name`},
		{`{ named { name } }`, `field Named.name runs as Shop.name, whose argument "tenant" is set by the gateway: select it on Shop`},
		{`{ shop { node { ...F } } } fragment F on Thing { tags(tenant: ["8"]) }`, `argument "tenant" of field Thing.tags`},
		{`{ other { orders { item(tenant: "8") } } }`, `argument "tenant" of field Order.item`},
	} {
		r, err := rawDocument(s, Limits{}.withDefaults(), false, fixed, &pipeline.Call{}, tc.query, "", nil)
		var got string
		if err != nil {
			got = err.Error()
		} else {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(r.Variables)) {
				parts = append(parts, fmt.Sprintf("%s=%v", k, r.Variables[k]))
			}
			got = strings.Join(parts, " ")
		}
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.query, got, tc.want)
		}
	}
}

// FuzzSetDocument: whatever document the raw tool accepts, what it sends
// is one operation, no mutation (they are off), and every field in it
// whose definition takes the set argument has it bound to a variable
// holding the set value; checked by gqlparser's own walk of the sent
// text, independently of Fixed.bind.
func FuzzSetDocument(f *testing.F) {
	for _, seed := range []string{
		`{ orders { id } }`,
		`{ orders(tenant: "8") { id } }`,
		`query A { count } query B { shop { orders { id } } }`,
		`{ shop { ...F } } fragment F on Shop { orders { item } node { ... on Thing { orders(first: 1) { id } } } }`,
		`query($t: String) { u { ... on Order { orders(tenant: $t) { id } } } }`,
		`{ node { orders { orders { orders { id } } } } }`,
		`mutation { add(item: "x") { id } }`,
		`{ a: orders { id } b: orders { tenant } named { id ... on Thing { name } } }`,
		`query Q($tenant: String) { shop { name(tenant: $tenant) } }`,
	} {
		f.Add(seed, "")
	}
	f.Add(`query A { count } query B { orders { id } }`, "B")
	s, err := parseSchema("tenant.graphql", tenantSDL)
	if err != nil {
		f.Fatal(err)
	}
	fixed, err := NewFixed(map[string]string{"tenant": "7"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, query, opName string) {
		r, err := rawDocument(s, Limits{}.withDefaults(), false, fixed, &pipeline.Call{}, query, opName, nil)
		if err != nil {
			return
		}
		doc, perr := parser.ParseQuery(&ast.Source{Input: r.Query})
		if perr != nil {
			t.Fatalf("sent %q does not parse: %v", r.Query, perr)
		}
		if errs := validator.Validate(s, doc); len(errs) > 0 {
			t.Fatalf("sent %q is invalid: %v", r.Query, errs)
		}
		if len(doc.Operations) != 1 || doc.Operations[0].Operation != ast.Query || r.kind != ast.Query {
			t.Fatalf("sent %q: want one query", r.Query)
		}
		var events validator.Events
		events.OnField(func(_ *validator.Walker, fl *ast.Field) {
			if fl.Definition == nil || fl.Definition.Arguments.ForName("tenant") == nil || strings.HasPrefix(fl.Name, "__") {
				return
			}
			a := fl.Arguments.ForName("tenant")
			if a == nil || a.Value.Kind != ast.Variable || fmt.Sprint(r.Variables[a.Value.Raw]) != "7" {
				t.Fatalf("sent %q with %v: field %s has tenant %v", r.Query, r.Variables, fl.Name, a)
			}
		})
		validator.Walk(s, doc, &events)
	})
}
