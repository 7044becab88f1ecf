// Package graphqllib is a real GraphQL server for tests of the GraphQL
// source (docs/graphql-source.md): a small library schema served by
// graph-gophers/graphql-go, with introspection, behind an httptest server
// that records what each request carried.
package graphqllib

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	graphqlgo "github.com/graph-gophers/graphql-go"
	"github.com/graph-gophers/graphql-go/relay"
)

// SDL is the library's schema: authors and books refer to each other,
// input objects refer to each other, a connection, a union, an enum, a
// mutation, a field that always fails (errors with null data), a nullable
// root field that always fails (null with its error), one that fails alone
// (partial data), and the orders of two tenants, "acme" and "globex",
// taken by a tenant argument at the root and below a customer, where
// leaving it out means every tenant's.
const SDL = `schema { query: Query mutation: Mutation }

"A book on the shelves."
type Book {
  id: ID!
  title: String!
  genre: Genre!
  year: Int
  rating: Float
  author: Author!
  "Fails for book 2 (partial data: the rest of the book still arrives)."
  secret: String
}

type Author {
  id: ID!
  name: String!
  books: [Book!]!
}

enum Genre { FICTION SCIENCE HISTORY }

input BookFilter {
  genre: Genre
  minYear: Int
  author: AuthorFilter
}

input AuthorFilter {
  name: String
  "Authors with such books."
  wrote: BookFilter
}

input NewBook {
  title: String!
  genre: Genre!
  authorId: ID!
}

type BookConnection {
  totalCount: Int!
  edges: [BookEdge!]!
  pageInfo: PageInfo!
}

type BookEdge {
  cursor: String!
  node: Book!
}

type PageInfo {
  hasNextPage: Boolean!
}

union Found = Book | Author

"An order of one tenant."
type Order {
  id: ID!
  tenant: String!
  item: String!
}

type Customer {
  id: ID!
  name: String!
  "The customer's orders of one tenant; of all tenants when it is left out."
  orders(tenant: String): [Order!]!
}

type Query {
  "Finds a book by its id."
  book(id: ID!): Book
  "Lists books, filtered."
  books(filter: BookFilter, first: Int = 10): BookConnection!
  "Books whose title is the text, as given."
  search(text: String!): [Book!]!
  find(text: String!): [Found!]!
  count: Int!
  "Always fails."
  broken: Book!
  "Always fails, and is null."
  lost: Book
  "A tenant's orders."
  orders(tenant: String!): [Order!]!
  customer(id: ID!): Customer
}

type Mutation {
  "Adds a book."
  addBook(input: NewBook!): Book!
}
`

type book struct {
	id, title, genre string
	year             int32
	rating           float64
	author           *author
}

type author struct {
	id, name string
	books    []*book
}

type order struct{ id, tenant, item, customer string }

type library struct {
	mu     sync.Mutex
	books  []*book
	byID   map[string]*author
	orders []order
}

func newLibrary() *library {
	le := &author{id: "a1", name: "Ursula K. Le Guin"}
	sagan := &author{id: "a2", name: "Carl Sagan"}
	l := &library{byID: map[string]*author{"a1": le, "a2": sagan}, orders: []order{
		{id: "o1", tenant: "acme", item: "The Dispossessed", customer: "c1"},
		{id: "o2", tenant: "globex", item: "Cosmos", customer: "c1"},
		{id: "o3", tenant: "globex", item: "The Left Hand of Darkness", customer: "c2"},
	}}
	for _, b := range []*book{
		{id: "1", title: "The Dispossessed", genre: "FICTION", year: 1974, rating: 4.5, author: le},
		{id: "2", title: "Cosmos", genre: "SCIENCE", year: 1980, rating: 4.7, author: sagan},
		{id: "3", title: "The Left Hand of Darkness", genre: "FICTION", year: 1969, rating: 4.4, author: le},
	} {
		l.books = append(l.books, b)
		b.author.books = append(b.author.books, b)
	}
	return l
}

// The resolvers, as graph-gophers/graphql-go binds them to the schema.

type queryResolver struct{ l *library }

func (q *queryResolver) Book(args struct{ ID graphqlgo.ID }) *bookResolver {
	q.l.mu.Lock()
	defer q.l.mu.Unlock()
	for _, b := range q.l.books {
		if b.id == string(args.ID) {
			return &bookResolver{b}
		}
	}
	return nil
}

type bookFilter struct {
	Genre   *string
	MinYear *int32
	Author  *authorFilter
}

type authorFilter struct {
	Name  *string
	Wrote *bookFilter
}

func (f *bookFilter) match(b *book) bool {
	if f == nil {
		return true
	}
	return (f.Genre == nil || *f.Genre == b.genre) && (f.MinYear == nil || b.year >= *f.MinYear) &&
		(f.Author == nil || f.Author.Name == nil || *f.Author.Name == b.author.name)
}

func (q *queryResolver) Books(args struct {
	Filter *bookFilter
	First  int32
}) *connectionResolver {
	q.l.mu.Lock()
	defer q.l.mu.Unlock()
	c := &connectionResolver{}
	for _, b := range q.l.books {
		if args.Filter.match(b) {
			c.all = append(c.all, b)
		}
	}
	c.first = int(args.First)
	return c
}

func (q *queryResolver) Search(args struct{ Text string }) []*bookResolver {
	return []*bookResolver{{&book{id: "s", title: args.Text, genre: "FICTION", author: q.l.byID["a1"]}}}
}

func (q *queryResolver) Find(args struct{ Text string }) []*foundResolver {
	q.l.mu.Lock()
	defer q.l.mu.Unlock()
	var out []*foundResolver
	for _, a := range q.l.byID {
		if a.name == args.Text {
			out = append(out, &foundResolver{&authorResolver{a}})
		}
	}
	for _, b := range q.l.books {
		if b.title == args.Text {
			out = append(out, &foundResolver{&bookResolver{b}})
		}
	}
	return out
}

func (q *queryResolver) Count() int32 {
	q.l.mu.Lock()
	defer q.l.mu.Unlock()
	return int32(len(q.l.books))
}

func (q *queryResolver) Broken() (*bookResolver, error) {
	return nil, errors.New("the shelf collapsed")
}

func (q *queryResolver) Lost() (*bookResolver, error) {
	return nil, errors.New("the book is lost")
}

func (q *queryResolver) Orders(args struct{ Tenant string }) []*orderResolver {
	return q.l.ordersOf(&args.Tenant, "")
}

func (q *queryResolver) Customer(args struct{ ID graphqlgo.ID }) *customerResolver {
	if args.ID != "c1" && args.ID != "c2" {
		return nil
	}
	return &customerResolver{l: q.l, id: string(args.ID)}
}

// ordersOf returns the orders of the tenant (nil: every tenant's) and of
// the customer ("": every customer's).
func (l *library) ordersOf(tenant *string, customer string) []*orderResolver {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*orderResolver
	for _, o := range l.orders {
		if (tenant == nil || o.tenant == *tenant) && (customer == "" || o.customer == customer) {
			out = append(out, &orderResolver{o})
		}
	}
	return out
}

type customerResolver struct {
	l  *library
	id string
}

func (c *customerResolver) ID() graphqlgo.ID { return graphqlgo.ID(c.id) }
func (c *customerResolver) Name() string     { return map[string]string{"c1": "Ada", "c2": "Grace"}[c.id] }
func (c *customerResolver) Orders(args struct{ Tenant *string }) []*orderResolver {
	return c.l.ordersOf(args.Tenant, c.id)
}

type orderResolver struct{ o order }

func (r *orderResolver) ID() graphqlgo.ID { return graphqlgo.ID(r.o.id) }
func (r *orderResolver) Tenant() string   { return r.o.tenant }
func (r *orderResolver) Item() string     { return r.o.item }

func (q *queryResolver) AddBook(args struct {
	Input struct {
		Title, Genre string
		AuthorID     graphqlgo.ID
	}
}) (*bookResolver, error) {
	q.l.mu.Lock()
	defer q.l.mu.Unlock()
	a := q.l.byID[string(args.Input.AuthorID)]
	if a == nil {
		return nil, errors.New("no such author")
	}
	b := &book{id: strconv.Itoa(len(q.l.books) + 1), title: args.Input.Title, genre: args.Input.Genre, author: a}
	q.l.books = append(q.l.books, b)
	a.books = append(a.books, b)
	return &bookResolver{b}, nil
}

type bookResolver struct{ b *book }

func (r *bookResolver) ID() graphqlgo.ID        { return graphqlgo.ID(r.b.id) }
func (r *bookResolver) Title() string           { return r.b.title }
func (r *bookResolver) Genre() string           { return r.b.genre }
func (r *bookResolver) Author() *authorResolver { return &authorResolver{r.b.author} }
func (r *bookResolver) Year() *int32 {
	if r.b.year == 0 {
		return nil
	}
	return &r.b.year
}
func (r *bookResolver) Rating() *float64 {
	if r.b.rating == 0 {
		return nil
	}
	return &r.b.rating
}
func (r *bookResolver) Secret() (*string, error) {
	if r.b.id == "2" {
		return nil, errors.New("secret of book 2 is sealed")
	}
	s := "no secret"
	return &s, nil
}

type authorResolver struct{ a *author }

func (r *authorResolver) ID() graphqlgo.ID { return graphqlgo.ID(r.a.id) }
func (r *authorResolver) Name() string     { return r.a.name }
func (r *authorResolver) Books() []*bookResolver {
	out := make([]*bookResolver, len(r.a.books))
	for i, b := range r.a.books {
		out[i] = &bookResolver{b}
	}
	return out
}

type connectionResolver struct {
	all   []*book
	first int
}

func (c *connectionResolver) TotalCount() int32 { return int32(len(c.all)) }
func (c *connectionResolver) Edges() []*edgeResolver {
	var out []*edgeResolver
	for i, b := range c.all {
		if i == c.first {
			break
		}
		out = append(out, &edgeResolver{cursor: strconv.Itoa(i), b: b})
	}
	return out
}
func (c *connectionResolver) PageInfo() *pageInfoResolver {
	return &pageInfoResolver{more: len(c.all) > c.first}
}

type edgeResolver struct {
	cursor string
	b      *book
}

func (e *edgeResolver) Cursor() string      { return e.cursor }
func (e *edgeResolver) Node() *bookResolver { return &bookResolver{e.b} }

type pageInfoResolver struct{ more bool }

func (p *pageInfoResolver) HasNextPage() bool { return p.more }

type foundResolver struct{ v any }

func (f *foundResolver) ToBook() (*bookResolver, bool) {
	b, ok := f.v.(*bookResolver)
	return b, ok
}

func (f *foundResolver) ToAuthor() (*authorResolver, bool) {
	a, ok := f.v.(*authorResolver)
	return a, ok
}

// Request is what one request carried.
type Request struct {
	Authorization string
	Query         string
	Variables     map[string]any
	OperationName string
}

// Server is the library served over HTTP at its URL (any path).
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Request
	failNext int
	failCode int
}

// Start serves a fresh library until the test ends; opts are more of the
// server's schema options (graphqlgo.DisableIntrospection()).
func Start(t testing.TB, opts ...graphqlgo.SchemaOpt) *Server {
	t.Helper()
	return StartOn(t, "", opts...)
}

// StartOn is Start listening on addr ("": any loopback port), for a test
// whose gateway was configured with an endpoint before it came up.
func StartOn(t testing.TB, addr string, opts ...graphqlgo.SchemaOpt) *Server {
	t.Helper()
	opts = append([]graphqlgo.SchemaOpt{graphqlgo.UseFieldResolvers(), graphqlgo.UseStringDescriptions()}, opts...)
	schema := graphqlgo.MustParseSchema(SDL, &queryResolver{newLibrary()}, opts...)
	h := &relay.Handler{Schema: schema}
	s := &Server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req Request
		_ = json.Unmarshal(body, &struct {
			Query         *string         `json:"query"`
			Variables     *map[string]any `json:"variables"`
			OperationName *string         `json:"operationName"`
		}{&req.Query, &req.Variables, &req.OperationName})
		req.Authorization = r.Header.Get("Authorization")
		s.mu.Lock()
		s.requests = append(s.requests, req)
		fail, code := s.failNext > 0, s.failCode
		if fail {
			s.failNext--
		}
		s.mu.Unlock()
		if fail {
			http.Error(w, "try later", code)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		s.Listener.Close()
		s.Listener = l
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// Requests returns what the server has received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Last returns the latest request (zero when none).
func (s *Server) Last() Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Request{}
	}
	return s.requests[len(s.requests)-1]
}

// FailNext answers the next n requests with the status code.
func (s *Server) FailNext(n, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext, s.failCode = n, code
}
