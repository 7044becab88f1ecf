package toolsearch

import (
	"fmt"
	"math/rand"
	"strings"
)

// generated is a registry the size the issue names: 50 sources of 25
// resources with 4 verbs each (5,000 tools), named and described the way
// OpenAPI and MCP tools are ("billing_list_invoices", "List invoices of
// the billing service. ..."), so that most words are shared by many tools,
// plus a sentence of words drawn from a large vocabulary as real
// descriptions have.
type generated struct {
	docs      []Doc
	sentences []string // the drawn part of each description
}

func generate(seed int64) generated {
	r := rand.New(rand.NewSource(seed))
	vocab := words(r, 3000)
	services, resources := vocab[:50], vocab[50:75]
	verbs := []string{"list", "get", "create", "delete"}
	var g generated
	for _, svc := range services {
		for _, res := range resources {
			for _, verb := range verbs {
				drawn := make([]string, 6)
				for i := range drawn {
					drawn[i] = vocab[75+r.Intn(len(vocab)-75)]
				}
				sentence := strings.Join(drawn, " ")
				g.docs = append(g.docs, Doc{
					Name:        svc + "_" + verb + "_" + res,
					Description: fmt.Sprintf("%s %ss of the %s service. %s.", strings.ToUpper(verb[:1])+verb[1:], res, svc, sentence),
					Source:      svc,
					Inputs:      []string{res + "_id", "limit", "cursor"},
					Aliases:     []string{svc + "." + verb + strings.ToUpper(res[:1]) + res[1:]},
				})
				g.sentences = append(g.sentences, sentence)
			}
		}
	}
	return g
}

// words returns n distinct pronounceable lower-case words whose stems are
// distinct too (so that the generated vocabulary has no accidental
// synonyms).
func words(r *rand.Rand, n int) []string {
	const cons, vows = "bcdfghjklmnprstvz", "aeiou"
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		for s := 2 + r.Intn(2); s > 0; s-- {
			b.WriteByte(cons[r.Intn(len(cons))])
			b.WriteByte(vows[r.Intn(len(vows))])
		}
		b.WriteByte(cons[r.Intn(len(cons))])
		w := b.String()
		if st := stem(w); !seen[st] && st == w {
			seen[st] = true
			out = append(out, w)
		}
	}
	return out
}
