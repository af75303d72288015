#!/usr/bin/env bash
# Installs everything the tests need and runs them: the pinned npm MCP peers,
# the Go modules, a gofmt check, go vet, go vet and a build of cmd/switchboard for
# each released platform with a check of the release script (scripts/cross.sh),
# go test -race, and the official MCP conformance server suite against the real
# `switchboard serve --http` (scripts/conformance.sh).
#
# Usage: scripts/test.sh [go test flags and packages]
# With no arguments it checks and tests ./...; arguments replace ./... for go test (so
# name the packages too), e.g. scripts/test.sh -run TestEverything ./internal/mcptest
# gofmt and go vet then cover the relative package patterns among the arguments
# (., ./x, ./x/...), or the whole module if there are none. The conformance suite runs
# when there are no arguments, or when SWITCHBOARD_CONFORMANCE=1; so do the
# cross-platform checks, or when SWITCHBOARD_CROSS=1.
set -euo pipefail
cd "$(dirname "$0")/.."

# section prints a header, and the time the previous section took.
section_start=$SECONDS
section() {
	if [[ -n ${section_name-} ]]; then
		echo "--- $section_name took $((SECONDS - section_start))s"
	fi
	section_name=$1
	section_start=$SECONDS
	echo
	echo "=== $1"
}

section "npm ci: MCP peers (testdata/mcp-peers)"
# shellcheck source=../.ci/peers.sh
. .ci/peers.sh
echo "installed in $MCP_PEERS_DIR/node_modules (node $(node --version))"

section "go mod download"
go version
go mod download

conformance=${SWITCHBOARD_CONFORMANCE:-0}
cross=${SWITCHBOARD_CROSS:-0}
if [[ $# -eq 0 ]]; then
	set -- ./...
	conformance=1
	cross=1
fi
# The relative package patterns among the arguments, and git pathspecs for their files.
packages=()
pathspecs=()
for arg in "$@"; do
	if [[ $arg == . || $arg == ./* ]]; then
		packages+=("$arg")
		dir=${arg#.}
		dir=${dir#/}
		if [[ $dir == ... || $dir == */... ]]; then
			dir=${dir%...}
			pathspecs+=(":(glob)$dir**/*.go")
		else
			pathspecs+=(":(glob)$dir${dir:+/}*.go")
		fi
	fi
done
if [[ ${#packages[@]} -eq 0 ]]; then
	packages=(./...)
	pathspecs=(':(glob)**/*.go')
fi

section "gofmt ${packages[*]}"
# Tracked and untracked, not ignored .go files that exist (a deleted file may still
# be in the index). testdata is skipped: the go tool ignores it too.
unformatted=$(
	git ls-files -z --cached --others --exclude-standard -- "${pathspecs[@]}" ':(exclude,glob)**/testdata/**' |
		while IFS= read -r -d '' f; do [[ -f $f ]] && printf '%s\0' "$f"; done |
		xargs -0 -r gofmt -l
)
if [[ -n $unformatted ]]; then
	echo "these files are not gofmt-formatted (run gofmt -w on them):"
	echo "$unformatted"
	exit 1
fi
echo ok

section "go vet ${packages[*]}"
go vet "${packages[@]}"

if [[ $cross == 1 ]]; then
	section "linux, darwin, windows x amd64, arm64: go vet ${packages[*]}, build, release.sh"
	scripts/cross.sh "${packages[@]}"
fi

section "go test $*"
export SWITCHBOARD_REQUIRE_PEERS=1 MCP_PEERS_DIR
go test -race -count=1 -timeout=15m "$@"

if [[ $conformance == 1 ]]; then
	section "MCP conformance server suite through switchboard serve --http"
	scripts/conformance.sh
fi
echo "--- $section_name took $((SECONDS - section_start))s; total ${SECONDS}s"
