#!/usr/bin/env bash
# xcaddy.sh — build the custom Caddy binary that includes edgemcp, and run the example.
#
#   ./xcaddy.sh build [xcaddy args...]  build ./caddy from this directory
#   ./xcaddy.sh run   [caddy args...]   build if ./caddy is missing or stale, then
#                                       ./caddy run --config Caddyfile.example --adapter caddyfile
#
# xcaddy comes from the `tool` directive in go.mod (`go tool xcaddy`): `go install
# ...@latest` is refused by the module proxy here. GOMODCACHE/GOCACHE stay at their
# defaults so that rebuilds are incremental (~6 s warm, ~3 min cold on 2 cores).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

MODULE=github.com/edgemcp/edgemcp
# The Caddy version is the one go.mod requires (fallback: the version the project pins).
CADDY_VERSION=${CADDY_VERSION:-$(grep -oE 'github.com/caddyserver/caddy/v2 v[^ ]+' go.mod | awk '{print $2}' | head -n1)}
CADDY_VERSION=${CADDY_VERSION:-v2.11.9}
# Our module is unpublished: keep the go command from asking the public proxy about it.
export GOPRIVATE="${GOPRIVATE:+$GOPRIVATE,}$MODULE"
# xcaddy runs `go get <module>` even for a local replacement; with a bare module path
# that is a version query, which fails offline. The zero pseudo-version given here is
# the one Go assigns to replaced modules: xcaddy then writes a version-specific replace
# (`replace $MODULE v0.0.0-... => $PWD`) and `go get` resolves it without the network.
LOCAL_VERSION=v0.0.0-00010101000000-000000000000

build() {
	echo "xcaddy.sh: building ./caddy (Caddy $CADDY_VERSION + $MODULE from $PWD)" >&2
	go tool xcaddy build "$CADDY_VERSION" --with "$MODULE@$LOCAL_VERSION=$PWD" --output "$PWD/caddy" "$@"
}

# stale: ./caddy is missing, or a Go source or go.mod/go.sum is newer than it.
stale() {
	[[ ! -x caddy ]] && return 0
	[[ -n $(find . \( -name node_modules -o -name .git \) -prune -o \
		\( -name '*.go' -o -name go.mod -o -name go.sum \) -newer caddy -print -quit) ]]
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
build) build "$@" ;;
run)
	if stale; then build; fi
	exec ./caddy run --config Caddyfile.example --adapter caddyfile "$@"
	;;
*)
	echo "usage: $0 build [xcaddy args...] | run [caddy args...]" >&2
	exit 2
	;;
esac
