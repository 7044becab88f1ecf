package toolsearch

import (
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Doc is what the index knows of one tool.
type Doc struct {
	Name        string
	Title       string
	Description string
	// Source is the tool's origin (a source's name), for the source filter.
	Source string
	// Inputs are the names of the tool's input properties.
	Inputs []string
	// Aliases are other names of the tool: a query that is exactly one of
	// them (or the name) ranks the tool first.
	Aliases []string
}

// Field weights and BM25 constants. A name is short and chosen, so a word
// there says more than the same word in a description; input names say
// what the tool takes ("repository", "city").
const (
	k1 = 1.2

	weightName   = 3.0
	weightTitle  = 2.0
	weightInputs = 1.5
	weightDesc   = 1.0

	// exactBonus puts a tool whose name is the whole query above any score
	// that words alone can reach.
	exactBonus = 1e6
	// prefixFactor scales the weight of a word found only as a prefix.
	prefixFactor = 0.5
	// maxExpansions bounds the words one prefix expands to.
	maxExpansions = 64
)

type field struct {
	weight float64
	b      float64 // length normalization: 0 none, 1 full
	text   func(*Doc) []string
}

var fields = []field{
	{weightName, 0.3, func(d *Doc) []string { return []string{d.Name} }},
	{weightTitle, 0.3, func(d *Doc) []string { return []string{d.Title} }},
	{weightInputs, 0.5, func(d *Doc) []string { return d.Inputs }},
	{weightDesc, 0.75, func(d *Doc) []string { return []string{d.Description} }},
}

// posting is one tool holding a term, with the term's saturated BM25F
// weight in that tool (everything of the score but the term's idf, which is
// known once the index is complete).
type posting struct {
	doc    int32
	weight float32
}

type term struct {
	idf      float32
	postings []posting
}

// Index is a built, immutable search index over a fixed list of tools.
type Index struct {
	docs    []Doc
	terms   map[string]*term
	vocab   []string       // sorted, for prefix expansion
	exact   map[string]int // lower-cased name or alias → doc
	scratch sync.Pool      // *scorer
}

// New indexes docs; a hit's Doc is its position in docs.
func New(docs []Doc) *Index {
	x := &Index{docs: docs, terms: map[string]*term{}, exact: make(map[string]int, len(docs))}
	n := len(docs)
	// Average length of each field, in terms, for BM25's normalization.
	lens := make([][]int, len(fields))
	avg := make([]float64, len(fields))
	var buf []string
	for f, fd := range fields {
		lens[f] = make([]int, n)
		total := 0
		for i := range docs {
			buf = buf[:0]
			for _, s := range fd.text(&docs[i]) {
				buf = tokens(buf, s)
			}
			lens[f][i] = len(buf)
			total += len(buf)
		}
		if n > 0 {
			avg[f] = math.Max(float64(total)/float64(n), 1)
		}
	}
	tf := map[string]float64{}
	for i := range docs {
		clear(tf)
		for f, fd := range fields {
			norm := 1 - fd.b + fd.b*float64(lens[f][i])/avg[f]
			buf = buf[:0]
			for _, s := range fd.text(&docs[i]) {
				buf = tokens(buf, s)
			}
			for _, t := range buf {
				tf[t] += fd.weight / norm
			}
		}
		for t, v := range tf {
			e := x.terms[t]
			if e == nil {
				e = &term{}
				x.terms[t] = e
			}
			e.postings = append(e.postings, posting{doc: int32(i), weight: float32(v / (k1 + v))})
		}
		for _, name := range append([]string{docs[i].Name}, docs[i].Aliases...) {
			if _, taken := x.exact[strings.ToLower(name)]; !taken {
				x.exact[strings.ToLower(name)] = i
			}
		}
	}
	x.vocab = make([]string, 0, len(x.terms))
	for t, e := range x.terms {
		df := float64(len(e.postings))
		e.idf = float32(math.Log(1 + (float64(n)-df+0.5)/(df+0.5)))
		x.vocab = append(x.vocab, t)
	}
	sort.Strings(x.vocab)
	x.scratch.New = func() any { return &scorer{scores: make([]float32, n)} }
	return x
}

// Len is the number of indexed tools.
func (x *Index) Len() int { return len(x.docs) }

// Doc returns the indexed tool at position i.
func (x *Index) Doc(i int) *Doc { return &x.docs[i] }

// Query is one search.
type Query struct {
	Text string
	// Limit bounds the hits (default 10).
	Limit int
	// Source, when set, keeps only tools of that source (case-insensitive).
	Source string
	// Allow, when set, is asked about each candidate, best first, until
	// Limit are found: a tool it refuses is not a hit (the gateway's auth
	// filter). It is never asked about more tools than it must be.
	Allow func(doc int) bool
}

// Hit is one found tool.
type Hit struct {
	Doc   int
	Score float64
}

type scorer struct {
	scores  []float32
	touched []int32
}

// Search returns the best hits, best first; ties go by name. A query
// without any word lists the tools in index order (with Source, a source's
// tools).
func (x *Index) Search(q Query) []Hit {
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	keep := func(i int) bool {
		return (q.Source == "" || strings.EqualFold(x.docs[i].Source, q.Source)) && (q.Allow == nil || q.Allow(i))
	}
	words := tokens(nil, q.Text)
	if len(words) == 0 {
		var hits []Hit
		for i := range x.docs {
			if len(hits) == limit {
				break
			}
			if keep(i) {
				hits = append(hits, Hit{Doc: i})
			}
		}
		return hits
	}

	s := x.scratch.Get().(*scorer)
	defer func() {
		for _, d := range s.touched {
			s.scores[d] = 0
		}
		s.touched = s.touched[:0]
		x.scratch.Put(s)
	}()
	add := func(e *term, factor float32) {
		idf := e.idf * factor
		for _, p := range e.postings {
			if s.scores[p.doc] == 0 {
				s.touched = append(s.touched, p.doc)
			}
			s.scores[p.doc] += idf * p.weight
		}
	}
	slices.Sort(words)
	for _, w := range slices.Compact(words) {
		if e := x.terms[w]; e != nil {
			add(e, 1)
			continue
		}
		if len(w) < 3 {
			continue
		}
		// No such word: the words it begins, at a lower weight.
		at := sort.SearchStrings(x.vocab, w)
		for j := at; j < len(x.vocab) && j-at < maxExpansions && strings.HasPrefix(x.vocab[j], w); j++ {
			add(x.terms[x.vocab[j]], prefixFactor)
		}
	}
	exact, hasExact := x.exact[strings.ToLower(strings.TrimSpace(q.Text))]
	if hasExact && s.scores[exact] == 0 {
		s.touched = append(s.touched, int32(exact))
	}

	cands := make([]Hit, 0, len(s.touched))
	for _, d := range s.touched {
		if q.Source != "" && !strings.EqualFold(x.docs[d].Source, q.Source) {
			continue
		}
		score := float64(s.scores[d])
		if hasExact && int(d) == exact {
			score += exactBonus
		}
		cands = append(cands, Hit{Doc: int(d), Score: score})
	}
	// A heap of the candidates gives them best first for the cost of the
	// ones taken, not of sorting them all (a common word touches every tool).
	h := hitHeap{hits: cands, docs: x.docs}
	h.init()
	hits := make([]Hit, 0, min(limit, len(cands)))
	for len(hits) < limit && len(h.hits) > 0 {
		c := h.pop()
		if q.Allow == nil || q.Allow(c.Doc) {
			hits = append(hits, c)
		}
	}
	return hits
}
