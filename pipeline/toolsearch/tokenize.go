package toolsearch

import (
	"strings"
	"unicode"
)

// tokens appends the terms of s to dst: lower-cased words split at
// anything that is not a letter or digit, at a lower-to-upper case change
// (openIssues; digits stay with their word: oauth2, v2api), stemmed. Words of
// one letter carry no meaning for search and are dropped; a digit stays
// (aisle 3, v 2).
func tokens(dst []string, s string) []string {
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 && (end-start > 1 || unicode.IsDigit(rune(s[start]))) {
			dst = append(dst, stem(strings.ToLower(s[start:end])))
		}
		start = -1
	}
	for i, r := range s {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !word:
			flush(i)
		case start < 0:
			start = i
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(i)
			start = i
		}
		prev = r
	}
	flush(len(s))
	return dst
}

// stem strips the commonest English inflections, enough for "lists",
// "listing" and "listed" to meet "list", "entries" to meet "entry" and
// "created" to meet "create" (a final e is dropped from every stem). It is
// deliberately small: the index and the query go through the same
// function, so a stem only has to be consistent, not a dictionary word.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing") && hasVowel(w[:n-3]):
		w = undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed") && hasVowel(w[:n-2]):
		w = undouble(w[:n-2])
	case n > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes")):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1]
	}
	if len(w) > 3 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

func hasVowel(w string) bool { return strings.ContainsAny(w, "aeiouy") }

// undouble turns "stopp" (from stopping) back into "stop".
func undouble(w string) string {
	n := len(w)
	if n > 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}
