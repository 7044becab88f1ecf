package toolsearch

import "strings"

// hitHeap is a binary max-heap of hits: higher score first, then the
// lower name, so that equal scores come out in a stable order.
type hitHeap struct {
	hits []Hit
	docs []Doc
}

func (h *hitHeap) better(a, b int) bool {
	x, y := h.hits[a], h.hits[b]
	if x.Score != y.Score {
		return x.Score > y.Score
	}
	return strings.Compare(h.docs[x.Doc].Name, h.docs[y.Doc].Name) < 0
}

func (h *hitHeap) init() {
	for i := len(h.hits)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *hitHeap) pop() Hit {
	top := h.hits[0]
	last := len(h.hits) - 1
	h.hits[0] = h.hits[last]
	h.hits = h.hits[:last]
	h.down(0)
	return top
}

func (h *hitHeap) down(i int) {
	n := len(h.hits)
	for {
		best, l, r := i, 2*i+1, 2*i+2
		if l < n && h.better(l, best) {
			best = l
		}
		if r < n && h.better(r, best) {
			best = r
		}
		if best == i {
			return
		}
		h.hits[i], h.hits[best] = h.hits[best], h.hits[i]
		i = best
	}
}
