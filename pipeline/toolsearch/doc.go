// Package toolsearch is the ranked full-text index behind the gateway's
// search_tools meta-tool (README, Tool search): when a registry holds more
// tools than a client should be shown, the client searches instead of
// listing. The index is built once per registry version and is read-only
// afterwards, so any number of searches may run at once.
//
// Ranking is BM25F: a term found in a tool's name counts more than one in
// its input names, which counts more than one in its description; rare terms
// count more than common ones (idf); a long description does not win by
// length. Words are lower-cased, split at case changes and
// punctuation (list_openIssues → list, open, issues) and reduced by a light
// English stemmer (issues → issue, listing → list), so a query in the
// words of a tool's description finds it whatever their inflection. A query
// word that matches no indexed word at all is tried as a prefix (temp →
// temperature), at half weight.
//
// The package knows nothing of Caddy or of who may call what: the caller
// passes a filter, which the gateway uses to apply its auth policies.
package toolsearch
