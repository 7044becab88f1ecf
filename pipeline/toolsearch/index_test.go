package toolsearch

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	cases := []struct{ in, want string }{
		{"list_openIssues", "list open issu"},
		{"GitHub v2api: Get a repository's README", "git hub v2api get repository readm"},
		{"Lists entries; listing, listed", "list entry list list"},
		{"creates created creating create", "creat creat creat creat"},
		{"matches boxes classes", "match box class"},
		{"string status analysis", "string status analysis"},
		{"a b c", ""},
		{"aisle 3", "aisl 3"},
		{"stopping", "stop"},
		{"données über", "donné über"},
	}
	for _, c := range cases {
		got := strings.Join(tokens(nil, c.in), " ")
		if got != c.want {
			t.Errorf("tokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func names(x *Index, hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, x.Doc(h.Doc).Name)
	}
	return out
}

// Every one of 5,000 generated tools ranks first for its own description,
// for the words drawn into it alone, and for its name; and, within its
// source, for "<verb> <resource>".
func TestOwnWordsRankFirst(t *testing.T) {
	g := generate(1)
	if len(g.docs) != 5000 {
		t.Fatalf("generated %d tools, want 5000", len(g.docs))
	}
	x := New(g.docs)
	r := rand.New(rand.NewSource(2))
	failures := 0
	check := func(i int, q Query, what string) {
		hits := x.Search(q)
		if len(hits) == 0 || hits[0].Doc != i {
			failures++
			if failures <= 5 {
				t.Errorf("tool %s, %s %q: got %v", g.docs[i].Name, what, q.Text, names(x, hits))
			}
		}
	}
	for i, d := range g.docs {
		check(i, Query{Text: d.Description}, "its description")
		check(i, Query{Text: g.sentences[i]}, "its drawn words")
		check(i, Query{Text: d.Name}, "its name")
		check(i, Query{Text: d.Aliases[0]}, "its alias")
		// Three of its six drawn words, in any order.
		drawn := strings.Fields(g.sentences[i])
		r.Shuffle(len(drawn), func(a, b int) { drawn[a], drawn[b] = drawn[b], drawn[a] })
		three := strings.Join(drawn[:3], " ")
		hits := x.Search(Query{Text: three, Limit: 3})
		if len(hits) == 0 || !slices.Contains([]int{hits[0].Doc}, i) {
			// Three random words may, rarely, all be drawn by another tool
			// too; then this one must still be among the first three.
			found := false
			for _, h := range hits {
				found = found || h.Doc == i
			}
			if !found {
				failures++
				t.Errorf("tool %s, three of its words %q: got %v", d.Name, three, names(x, hits))
			}
		}
		parts := strings.SplitN(d.Name, "_", 3) // service, verb, resource
		check(i, Query{Text: parts[1] + " " + parts[2] + "s", Source: d.Source}, "verb and resource in its source")
	}
	if failures > 0 {
		t.Fatalf("%d searches missed their tool", failures)
	}
}

func TestFiltersAndLimit(t *testing.T) {
	docs := []Doc{
		{Name: "gh_list_issues", Description: "List issues of a repository.", Source: "gh", Inputs: []string{"repo", "state"}},
		{Name: "gl_list_issues", Description: "List issues of a project.", Source: "gl", Inputs: []string{"project"}},
		{Name: "gh_get_issue", Description: "Get one issue.", Source: "gh", Inputs: []string{"repo", "number"}},
		{Name: "weather_forecast", Title: "Forecast", Description: "Weather forecast for a city, with temperatures.", Source: "weather", Inputs: []string{"city"}},
		{Name: "search", Description: "Search documents.", Source: "docs"},
	}
	x := New(docs)
	cases := []struct {
		name string
		q    Query
		want []string
	}{
		{"words in name and description", Query{Text: "listing issues"}, []string{"gh_list_issues", "gl_list_issues", "gh_get_issue"}},
		{"input name decides", Query{Text: "issues state", Limit: 1}, []string{"gh_list_issues"}},
		{"source filter", Query{Text: "issues", Source: "GL"}, []string{"gl_list_issues"}},
		{"limit", Query{Text: "issues", Limit: 1}, []string{"gh_get_issue"}},
		{"prefix of a word", Query{Text: "temperat"}, []string{"weather_forecast"}},
		{"exact name first", Query{Text: "search"}, []string{"search"}},
		{"nothing", Query{Text: "zzzz qqq"}, nil},
		{"no words lists the source", Query{Text: " ", Source: "gh"}, []string{"gh_list_issues", "gh_get_issue"}},
		{"allow refuses", Query{Text: "issues", Allow: func(i int) bool { return docs[i].Source != "gh" }}, []string{"gl_list_issues"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := names(x, x.Search(c.q))
			if !slices.Equal(got, c.want) {
				t.Errorf("Search(%+v) = %v, want %v", c.q.Text, got, c.want)
			}
		})
	}
}

// Allow is asked about candidates best first and no further than the limit
// needs: an auth check per tool of a 5,000-tool registry would cost more
// than the search.
func TestAllowAskedLazily(t *testing.T) {
	x := New(generate(1).docs)
	var asked []int
	hits := x.Search(Query{Text: "list", Limit: 3, Allow: func(i int) bool {
		asked = append(asked, i)
		return len(asked)%2 == 0 // refuse every other candidate
	}})
	if len(hits) != 3 || len(asked) != 6 {
		t.Fatalf("got %d hits after %d questions, want 3 after 6", len(hits), len(asked))
	}
	for i, h := range hits {
		if h.Doc != asked[2*i+1] {
			t.Errorf("hit %d is tool %d, want the allowed candidate %d", i, h.Doc, asked[2*i+1])
		}
	}
}

func TestEmptyIndex(t *testing.T) {
	if hits := New(nil).Search(Query{Text: "anything"}); len(hits) != 0 {
		t.Fatalf("got %v", hits)
	}
}

// Searches share the index and its scratch pool: run at once they give what
// they give alone (go test -race checks the sharing).
func TestConcurrentSearches(t *testing.T) {
	g := generate(1)
	x := New(g.docs)
	queries := g.sentences[:64]
	want := make([][]string, len(queries))
	for i, q := range queries {
		want[i] = names(x, x.Search(Query{Text: q, Limit: 5}))
	}
	errs := make(chan string, 8)
	for w := 0; w < 8; w++ {
		go func(w int) {
			for i := range queries {
				j := (i + w) % len(queries)
				if got := names(x, x.Search(Query{Text: queries[j], Limit: 5})); !slices.Equal(got, want[j]) {
					errs <- fmt.Sprintf("%q: %v, alone %v", queries[j], got, want[j])
					return
				}
			}
			errs <- ""
		}(w)
	}
	for w := 0; w < 8; w++ {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}
