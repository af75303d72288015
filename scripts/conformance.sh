#!/usr/bin/env bash
# Runs the official MCP conformance server suite (@modelcontextprotocol/conformance,
# active scenarios) against the real `switchboard serve --http`, in transparent mode
# (one server, toolPrefix "none") in front of go-sdk's conformance everything-server.
#
# Everything runs inside a private network namespace holding only loopback
# (unshare -n, as root; unshare -rn maps an unprivileged user to root where user
# namespaces are allowed), so the fixed ports below cannot collide with anything and
# nothing listens beyond this run. Without either, it runs on the host's loopback.
#
# Expected failures: testdata/mcp-peers/gateway-server-baseline.yml. The suite fails on
# an unexpected failure and on a baseline entry that passes.
#
# Usage: scripts/conformance.sh   (after `. .ci/peers.sh`, which scripts/test.sh does)
# Results are kept in $CONFORMANCE_OUT if set, else in a temporary directory removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${MCP_PEERS_DIR:?source .ci/peers.sh first}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CONFORMANCE_WORK=$work
export CONFORMANCE_OUT=${CONFORMANCE_OUT:-$work/out}
export CONFORMANCE_BASELINE=$PWD/testdata/mcp-peers/gateway-server-baseline.yml
export CONFORMANCE_SUITE=$MCP_PEERS_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js
export CONFORMANCE_NODE_OPTIONS=$MCP_CONFORMANCE_NODE_OPTIONS

# The gateway as shipped, and go-sdk's reference server at the version in go.mod.
go build -o "$work/switchboard" ./cmd/switchboard
go build -o "$work/everything-server" github.com/modelcontextprotocol/go-sdk/conformance/everything-server

# run is the part that runs in the namespace.
run() {
	set -euo pipefail
	ip link set lo up 2>/dev/null || true
	up=127.0.0.1:3001 gw=127.0.0.1:3002 pids=()
	trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true' EXIT
	# waitport waits up to 10 s for a port to accept connections.
	waitport() {
		for _ in $(seq 100); do
			(echo >"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null && return 0
			sleep 0.1
		done
		echo "conformance: nothing listens on $1" >&2
		return 1
	}
	# With sessions: only then can it send sampling and elicitation requests mid-call.
	"$CONFORMANCE_WORK/everything-server" -http=$up -stateless=false >"$CONFORMANCE_WORK/upstream.log" 2>&1 &
	pids+=($!)
	waitport $up
	mkdir -p "$CONFORMANCE_WORK/home"
	cat >"$CONFORMANCE_WORK/config.json" <<-EOF
		{"mcpServers": {"conformance": {"url": "http://$up/mcp"}}, "settings": {"toolPrefix": "none"}}
	EOF
	HOME=$CONFORMANCE_WORK/home XDG_CONFIG_HOME= XDG_CACHE_HOME= XDG_STATE_HOME= \
		"$CONFORMANCE_WORK/switchboard" serve --config "$CONFORMANCE_WORK/config.json" --http $gw \
		--log-file "$CONFORMANCE_WORK/gateway.log" 2>>"$CONFORMANCE_WORK/gateway.log" &
	pids+=($!)
	waitport $gw
	rc=0
	NODE_OPTIONS=$CONFORMANCE_NODE_OPTIONS node "$CONFORMANCE_SUITE" server --url "http://$gw/mcp" \
		--suite active --expected-failures "$CONFORMANCE_BASELINE" -o "$CONFORMANCE_OUT" >"$CONFORMANCE_WORK/suite.log" 2>&1 || rc=$?
	if [[ $rc -eq 0 ]]; then
		sed -n '/=== SUMMARY ===/,$p' "$CONFORMANCE_WORK/suite.log"
	else
		echo "--- conformance suite output"
		cat "$CONFORMANCE_WORK/suite.log"
		echo "--- gateway log"
		cat "$CONFORMANCE_WORK/gateway.log"
		echo "--- upstream log"
		cat "$CONFORMANCE_WORK/upstream.log"
	fi
	return $rc
}
export -f run

if unshare -n true 2>/dev/null; then
	unshare -n bash -c run
elif unshare -rn true 2>/dev/null; then
	unshare -rn bash -c run
else
	echo "conformance: cannot make a network namespace (unshare -n); running on the host's loopback"
	bash -c run
fi
