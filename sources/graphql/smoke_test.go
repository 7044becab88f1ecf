package graphql

import (
	"testing"
)

func TestSmoke(t *testing.T) {
	_, s, x := library(t)
	tools := toolsByName(t, s, Config{Namespace: "lib", Mutations: true, Executor: x})
	for n, tl := range tools {
		t.Logf("%s %s\n%s", n, tl.Description, tl.InputSchema)
	}
	r, err := call(t, tools["lib_book"], `{"id":"1"}`)
	t.Logf("%+v %v %s", r, err, r.Native)
	r, err = call(t, tools["lib_books"], `{"first":2}`)
	t.Logf("%+v %v %s", r, err, r.Native)
}
