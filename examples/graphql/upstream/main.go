// Command upstream serves the GraphQL example's API: a small notes service,
// in memory, with introspection (github.com/graph-gophers/graphql-go). It
// wants `Authorization: Bearer $NOTES_TOKEN` (default demo-token).
//
//	go run ./examples/graphql/upstream [-listen 127.0.0.1:9083]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	graphql "github.com/graph-gophers/graphql-go"
)

const schema = `
schema { query: Query mutation: Mutation }
"A note, with its tags."
type Note { id: ID! text: String! tags: [String!]! }
type Query {
  "Notes, newest first; with a tag, only those carrying it."
  notes(tag: String, first: Int = 10): [Note!]!
  "One note by its id."
  note(id: ID!): Note
}
type Mutation {
  "Adds a note."
  addNote(text: String!, tags: [String!]): Note!
}
`

type note struct {
	id   string
	text string
	tags []string
}

func (n *note) ID() graphql.ID { return graphql.ID(n.id) }
func (n *note) Text() string   { return n.text }
func (n *note) Tags() []string { return n.tags }

type resolver struct {
	mu    sync.Mutex
	notes []*note
}

func (r *resolver) Notes(args struct {
	Tag   *string
	First int32
}) []*note {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*note
	for i := len(r.notes) - 1; i >= 0 && int32(len(out)) < args.First; i-- {
		n := r.notes[i]
		if args.Tag == nil || contains(n.tags, *args.Tag) {
			out = append(out, n)
		}
	}
	return out
}

func (r *resolver) Note(args struct{ ID graphql.ID }) *note {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.notes {
		if n.id == string(args.ID) {
			return n
		}
	}
	return nil
}

func (r *resolver) AddNote(args struct {
	Text string
	Tags *[]string
}) *note {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := &note{id: fmt.Sprint(len(r.notes) + 1), text: args.Text, tags: []string{}}
	if args.Tags != nil {
		n.tags = *args.Tags
	}
	r.notes = append(r.notes, n)
	return n
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func main() {
	listen := flag.String("listen", "127.0.0.1:9083", "address to serve on")
	flag.Parse()
	token := os.Getenv("NOTES_TOKEN")
	if token == "" {
		token = "demo-token"
	}
	r := &resolver{notes: []*note{
		{id: "1", text: "Buy milk", tags: []string{"home"}},
		{id: "2", text: "Ship the release", tags: []string{"work"}},
		{id: "3", text: "Call the plumber", tags: []string{"home", "urgent"}},
	}}
	s := graphql.MustParseSchema(schema, r, graphql.UseStringDescriptions())
	http.HandleFunc("/graphql", func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"errors":[{"message":"who are you?"}]}`, http.StatusUnauthorized)
			return
		}
		var body struct {
			Query         string         `json:"query"`
			OperationName string         `json:"operationName"`
			Variables     map[string]any `json:"variables"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, req.Body, 1<<20)).Decode(&body); err != nil {
			http.Error(w, `{"errors":[{"message":"bad request"}]}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Exec(req.Context(), body.Query, body.OperationName, body.Variables))
	})
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("notes: serving http://%s/graphql\n", strings.TrimPrefix(l.Addr().String(), "[::]"))
	log.Fatal(http.Serve(l, nil))
}
