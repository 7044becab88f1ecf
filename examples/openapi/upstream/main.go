// Command upstream serves the Bookshelf API that examples/openapi/bookshelf.yaml
// describes, in memory, for the OpenAPI source example (README.md beside
// the Caddyfile). Standard library only:
//
//	go run ./examples/openapi/upstream [-listen 127.0.0.1:9082]
//
// Every request must carry Authorization: Bearer <token>, the token being
// $BOOKSHELF_TOKEN or, when that is unset, demo-token. Once it listens it
// prints one line, "bookshelf: serving http://<addr>/api".
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
)

type book struct {
	ID     int      `json:"id"`
	Title  string   `json:"title"`
	Author string   `json:"author"`
	Year   int      `json:"year,omitempty"`
	Tags   []string `json:"tags"`
}

type shelf struct {
	mu    sync.Mutex
	books []book
	next  int
}

func main() {
	listen := flag.String("listen", "127.0.0.1:9082", "address to listen on")
	flag.Parse()
	token := os.Getenv("BOOKSHELF_TOKEN")
	if token == "" {
		token = "demo-token"
	}
	s := &shelf{next: 4, books: []book{
		{1, "A Mathematician's Apology", "G. H. Hardy", 1940, []string{"mathematics", "essay"}},
		{2, "The Art of Computer Programming", "Donald Knuth", 1968, []string{"computing", "algorithms"}},
		{3, "Gödel, Escher, Bach", "Douglas Hofstadter", 1979, []string{"mathematics", "computing"}},
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/books", s.list)
	mux.HandleFunc("POST /api/books", s.add)
	mux.HandleFunc("GET /api/books/{bookId}", s.get)
	mux.HandleFunc("DELETE /api/books/{bookId}", s.remove)

	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("bookshelf: serving http://%s/api\n", l.Addr())
	log.Fatal(http.Serve(l, authorized(token, mux)))
}

// authorized refuses a request without the bearer token.
func authorized(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			reply(w, http.StatusUnauthorized, map[string]string{"message": "missing or wrong bearer token"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *shelf) list(w http.ResponseWriter, r *http.Request) {
	limit := 10
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 50 {
			reply(w, http.StatusBadRequest, map[string]string{"message": "limit must be 1 to 50"})
			return
		}
		limit = n
	}
	tags := r.URL.Query()["tag"]
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []book{}
	for _, b := range s.books {
		if len(out) < limit && hasAll(b.Tags, tags) {
			out = append(out, b)
		}
	}
	reply(w, http.StatusOK, map[string]any{"books": out})
}

func hasAll(have, want []string) bool {
	for _, t := range want {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

func (s *shelf) add(w http.ResponseWriter, r *http.Request) {
	var b book
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil || b.Title == "" || b.Author == "" {
		reply(w, http.StatusBadRequest, map[string]string{"message": "a book needs a title and an author"})
		return
	}
	if b.Tags == nil {
		b.Tags = []string{}
	}
	s.mu.Lock()
	b.ID = s.next
	s.next++
	s.books = append(s.books, b)
	s.mu.Unlock()
	reply(w, http.StatusCreated, b)
}

func (s *shelf) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.find(r); i >= 0 {
		reply(w, http.StatusOK, s.books[i])
		return
	}
	reply(w, http.StatusNotFound, map[string]string{"message": "no book " + r.PathValue("bookId")})
}

func (s *shelf) remove(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.find(r); i >= 0 {
		s.books = slices.Delete(s.books, i, i+1)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	reply(w, http.StatusNotFound, map[string]string{"message": "no book " + r.PathValue("bookId")})
}

// find is the index of the book the path names, or -1.
func (s *shelf) find(r *http.Request) int {
	id, err := strconv.Atoi(r.PathValue("bookId"))
	if err != nil {
		return -1
	}
	return slices.IndexFunc(s.books, func(b book) bool { return b.ID == id })
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
