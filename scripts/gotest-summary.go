//go:build ignore

// gotest-summary reads `go test -json` on stdin and prints what plain `go test` would
// (one line per package, the full output of failing tests only), then the failed tests.
// It writes "PASSED FAILED SKIPPED" (test counts; a package that failed without a
// failing test, e.g. a build error or a panic, counts as one failure) to the file named
// by its argument, and exits 1 if anything failed.
//
//	go test -json ./... | go run scripts/gotest-summary.go counts.txt
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action, Package, Test, Output, ImportPath string
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go test -json ... | go run gotest-summary.go COUNTS_FILE")
		os.Exit(2)
	}
	var passed, failed, skipped int
	var failures []string
	buf := map[string][]string{}  // output per "pkg test" (test "" = the package)
	pkgFailed := map[string]int{} // failed tests per package
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	for in.Scan() {
		var e event
		if json.Unmarshal(in.Bytes(), &e) != nil || e.Action == "" {
			fmt.Println(in.Text()) // not an event: pass it through
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Print(e.Output)
		case e.Action == "output":
			buf[key] = append(buf[key], e.Output)
		case e.Test != "" && e.Action == "pass":
			passed++
			delete(buf, key)
		case e.Test != "" && e.Action == "skip":
			skipped++
			delete(buf, key)
		case e.Test != "" && e.Action == "fail":
			failed++
			pkgFailed[e.Package]++
			failures = append(failures, e.Package+"."+e.Test)
			fmt.Print(strings.Join(buf[key], ""))
			delete(buf, key)
		case e.Test == "" && (e.Action == "pass" || e.Action == "skip"):
			for _, line := range buf[key] {
				if line != "PASS\n" && !strings.HasPrefix(line, "testing: warning: no tests") {
					fmt.Print(line)
				}
			}
			delete(buf, key)
		case e.Test == "" && e.Action == "fail":
			// Unfinished tests (a panic, a timeout) first, then the package's own lines.
			var open []string
			for k := range buf {
				if strings.HasPrefix(k, e.Package+" ") && k != key {
					open = append(open, k)
				}
			}
			sort.Strings(open)
			for _, k := range append(open, key) {
				fmt.Print(strings.Join(buf[k], ""))
				delete(buf, k)
			}
			if pkgFailed[e.Package] == 0 {
				failed++
				failures = append(failures, e.Package+" (package failed: build error, panic or timeout)")
			}
		}
	}
	if len(failures) > 0 {
		fmt.Printf("\nFailed:\n  %s\n", strings.Join(failures, "\n  "))
	}
	if err := os.WriteFile(os.Args[1], fmt.Appendf(nil, "%d %d %d\n", passed, failed, skipped), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if failed > 0 {
		os.Exit(1)
	}
}
