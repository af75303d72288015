#!/usr/bin/env bash
# Installs everything the tests need and runs them: the pinned npm MCP peers,
# the Go modules, a gofmt check, go vet, go vet and a build of cmd/switchboard for
# each released platform with a check of the release script (scripts/cross.sh),
# go test -race, the official MCP conformance suites: the server suite against the
# real `switchboard serve --http` (scripts/conformance.sh), and the client suite with
# Switchboard as the client of every scenario, beside go-sdk's own client
# (scripts/conformance-client.sh); and the OS keychain store's tests inside a GNOME
# Keyring session of their own (installed when missing, if running as root, as CI
# does).
#
# Usage: scripts/test.sh [go test flags and packages]
# With no arguments it checks and tests ./...; arguments replace ./... for go test (so
# name the packages too), e.g. scripts/test.sh -run TestEverything ./internal/testkit/mcptest
# gofmt and go vet then cover the relative package patterns among the arguments
# (., ./x, ./x/...), or the whole module if there are none. The conformance suites run
# when there are no arguments, or when SWITCHBOARD_CONFORMANCE=1; so do the keychain
# tests, or when SWITCHBOARD_KEYCHAIN=1, the cross-platform checks, or when
# SWITCHBOARD_CROSS=1, and the deploy module's tests (deploy/: Kubernetes
# manifests, nginx, Dockerfile), or when SWITCHBOARD_DEPLOY=1. The full suite
# (or SWITCHBOARD_TEAM=1 or SWITCHBOARD_DEPLOY=1) also installs Debian's
# postgresql and nginx when missing (as root) and makes the tests that start
# them (internal/testkit/pgtest, internal/testkit/nginxtest, deploy/) fail rather than skip
# without them. A run of ./... or ./cmd/switchboard (or SWITCHBOARD_BROWSER=1) installs
# Debian's chromium when missing (as root) and makes the browser render of MCP Apps
# (TestBrowserRendersApp) fail rather than skip without it.
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
keychain=${SWITCHBOARD_KEYCHAIN:-0}
cross=${SWITCHBOARD_CROSS:-0}
team=${SWITCHBOARD_TEAM:-0}
deploy=${SWITCHBOARD_DEPLOY:-0}
browser=${SWITCHBOARD_BROWSER:-0}
for arg in "$@"; do
	# The packages that hold the browser test: the module, or cmd/switchboard.
	[[ $arg == ./... || $arg == ./cmd/switchboard* ]] && browser=1
done
if [[ $# -eq 0 ]]; then
	set -- ./...
	conformance=1
	browser=1
	keychain=1
	cross=1
	team=1
	deploy=1
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

if [[ $team == 1 || $deploy == 1 ]]; then
	section "postgresql and nginx (Debian's packages) for the team-scale tests"
	# The tests start their own servers: a private PostgreSQL per test binary
	# (internal/testkit/pgtest) and nginx per test (internal/testkit/nginxtest), as an
	# unprivileged user on loopback ports, stopped after. Here they are only
	# installed; the REQUIRE variables make a test that cannot find them fail.
	pg_bin() { compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; }
	if ! pg_bin || [[ ! -x /usr/sbin/nginx ]]; then
		if [[ $(id -u) == 0 ]]; then
			export DEBIAN_FRONTEND=noninteractive
			apt-get install -y -qq --no-install-recommends postgresql nginx >/dev/null ||
				{ apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql nginx >/dev/null; }
		else
			echo "postgresql or nginx is missing, and only root can install them: the tests that need them will fail"
		fi
	fi
	pg_bin && ls /usr/lib/postgresql/*/bin/postgres
	[[ -x /usr/sbin/nginx ]] && /usr/sbin/nginx -v
	export SWITCHBOARD_REQUIRE_POSTGRES=1 SWITCHBOARD_REQUIRE_NGINX=1
	# The MCP registry's own server (internal/testkit/registrytest) runs on
	# that PostgreSQL: built once per machine (~40 s), it must build here.
	export SWITCHBOARD_REQUIRE_REGISTRY=1
fi

if [[ $browser == 1 ]]; then
	section "chromium (Debian's package) for the browser render of MCP Apps"
fi
# TestBrowserRendersApp (cmd/switchboard) renders the MCP Apps example app in
# headless Chromium, through serve and directly (internal/testkit/chromium:
# a temporary profile, loopback only, stopped after). Installed here when
# missing (as root: ~100 MiB download, ~330 MiB installed, ~15 s);
# SWITCHBOARD_REQUIRE_BROWSER makes the test fail rather than skip without it.
if [[ $browser == 1 ]]; then
	if ! command -v chromium >/dev/null; then
		if [[ $(id -u) == 0 ]]; then
			export DEBIAN_FRONTEND=noninteractive
			apt-get install -y -qq --no-install-recommends chromium >/dev/null ||
				{ apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
		else
			echo "chromium is missing, and only root can install it: the browser render test will fail"
		fi
	fi
	command -v chromium >/dev/null && chromium --version 2>/dev/null
	export SWITCHBOARD_REQUIRE_BROWSER=1
fi

section "go test $*"
export SWITCHBOARD_REQUIRE_PEERS=1 MCP_PEERS_DIR
go test -race -count=1 -timeout=15m "$@"

if [[ $deploy == 1 ]]; then
	# deploy/ is a module of its own (k8s.io/api, kustomize): go vet ./... and
	# go test ./... above do not reach it. gofmt above does.
	section "deploy module: manifests built and decoded strictly, nginx, Dockerfile"
	(cd deploy && go vet ./... && go test -race -count=1 ./...)
fi

if [[ $keychain == 1 ]]; then
	section "keychain store tests in a GNOME Keyring session (Secret Service)"
	# The credstore tests skip the keychain where none answers; here they get one
	# of their own: a private session bus, a keyring daemon unlocked with a
	# throwaway password, and its keyring files in a temporary directory. Both
	# end with the session. SWITCHBOARD_REQUIRE_KEYCHAIN makes a skip a failure.
	if ! command -v gnome-keyring-daemon >/dev/null || ! command -v dbus-run-session >/dev/null; then
		if [[ $(id -u) == 0 ]]; then
			export DEBIAN_FRONTEND=noninteractive
			apt-get install -y -qq --no-install-recommends gnome-keyring dbus-daemon >/dev/null ||
				{ apt-get update -qq && apt-get install -y -qq --no-install-recommends gnome-keyring dbus-daemon >/dev/null; }
		fi
	fi
	if command -v gnome-keyring-daemon >/dev/null && command -v dbus-run-session >/dev/null; then
		keyring_data=$(mktemp -d)
		trap 'rm -rf "$keyring_data"' EXIT
		XDG_DATA_HOME=$keyring_data dbus-run-session -- sh -c \
			'echo throwaway | gnome-keyring-daemon --unlock --components=secrets >/dev/null &&
			SWITCHBOARD_REQUIRE_KEYCHAIN=1 go test -race -count=1 -run "Keychain|Open" ./credstore'
	else
		echo "skipped: gnome-keyring-daemon and dbus-run-session are not installed (run as root to install them)"
	fi
fi

if [[ $conformance == 1 ]]; then
	section "MCP conformance server suite through switchboard serve --http"
	scripts/conformance.sh
	section "MCP conformance client suite with switchboard as the client"
	scripts/conformance-client.sh
fi
echo "--- $section_name took $((SECONDS - section_start))s; total ${SECONDS}s"
