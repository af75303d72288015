#!/usr/bin/env bash
# Runs the official MCP conformance CLIENT suite (@modelcontextprotocol/conformance,
# every scenario) twice in the same run: against go-sdk's own conformance client alone,
# for reference, and against Switchboard, through internal/conformanceadapter: each
# scenario server becomes the one upstream of the real `switchboard serve --http`
# (transparent), logged in first with `switchboard auth login` for the auth scenarios,
# and go-sdk's client talks to the scenario through Switchboard.
#
# It passes when:
#   - Switchboard fails no scenario but those in testdata/mcp-peers/switchboard-client-baseline.yml
#     (each with its reason), and passes every scenario listed there is not (the suite
#     checks both);
#   - every scenario go-sdk's client passes, Switchboard passes too;
#   - Switchboard passes at least $CONFORMANCE_MIN_CHECKS checks (default 282, what
#     go-sdk's client passed on this suite when the adapter was written).
# A scenario whose only shortfall among the others is a warning (sse-retry's timing) is
# judged by a run of its own (see below).
#
# Everything runs inside a private network namespace holding only loopback (unshare -n,
# as root; unshare -rn where user namespaces allow it); without either, on the host's
# loopback. Ports are all chosen by the kernel.
#
# Usage: scripts/conformance-client.sh   (after `. .ci/peers.sh`, which scripts/test.sh does)
# Results are kept in $CONFORMANCE_OUT if set, else in a temporary directory removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${MCP_PEERS_DIR:?source .ci/peers.sh first}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CONFORMANCE_WORK=$work
export CONFORMANCE_OUT=${CONFORMANCE_OUT:-$work/out}
export CONFORMANCE_BASELINE=$PWD/testdata/mcp-peers/switchboard-client-baseline.yml
export CONFORMANCE_SUITE=$MCP_PEERS_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js
export CONFORMANCE_NODE_OPTIONS=$MCP_CONFORMANCE_NODE_OPTIONS
export CONFORMANCE_MIN_CHECKS=${CONFORMANCE_MIN_CHECKS:-282}

# The gateway as shipped, go-sdk's reference client at the version in go.mod, and the adapter.
go build -o "$work/switchboard" ./cmd/switchboard
go build -o "$work/everything-client" github.com/modelcontextprotocol/go-sdk/conformance/everything-client
go build -o "$work/adapter" ./internal/conformanceadapter

# run is the part that runs in the namespace.
run() {
	set -euo pipefail
	ip link set lo up 2>/dev/null || true
	suite() { # suite NAME COMMAND [suite flags]: runs the client suite, output in $CONFORMANCE_WORK/NAME.log
		local name=$1 command=$2
		shift 2
		NODE_OPTIONS=$CONFORMANCE_NODE_OPTIONS node "$CONFORMANCE_SUITE" client --command "$command" --suite all \
			-o "$CONFORMANCE_OUT/$name" "$@" >"$CONFORMANCE_WORK/$name.log" 2>&1
	}
	suite go-sdk "$CONFORMANCE_WORK/everything-client" || true # its own failures are only reference
	rc=0
	export CONFORMANCE_SWITCHBOARD=$CONFORMANCE_WORK/switchboard CONFORMANCE_GOCLIENT=$CONFORMANCE_WORK/everything-client
	suite switchboard "$CONFORMANCE_WORK/adapter" --expected-failures "$CONFORMANCE_BASELINE" || rc=$?

	# The suite runs its 26 scenarios at once. One times the client (sse-retry: the
	# reconnection must come within 200 ms of the server's retry delay) and only warns
	# when it is late, which a busy 2-core machine running them all can make it. When
	# every unexpected shortfall is such a warning, those scenarios run again, each
	# alone, and their run alone decides.
	if [[ $rc -ne 0 ]]; then
		log=$CONFORMANCE_WORK/switchboard.log
		warned=$(sed -n 's/^✗ \([^:]*\): [0-9]* passed, 0 failed, [0-9]* warnings$/\1/p' "$log" | sort -u)
		unexpected=$(sed -n '/Unexpected failures (not in baseline)/,/^$/s/^  ✗ \(.*\)$/\1/p' "$log" | sort -u)
		if [[ -n $warned && -n $unexpected && -z $(comm -23 <(echo "$unexpected") <(echo "$warned")) ]]; then
			rc=0
			for s in $unexpected; do
				if NODE_OPTIONS=$CONFORMANCE_NODE_OPTIONS node "$CONFORMANCE_SUITE" client --command "$CONFORMANCE_WORK/adapter" \
					--scenario "$s" -o "$CONFORMANCE_OUT/alone" >"$CONFORMANCE_WORK/alone.log" 2>&1; then
					echo "✓ $s: passed when run alone, after a warning among the others" >>"$log"
				else
					cat "$CONFORMANCE_WORK/alone.log"
					rc=1
				fi
			done
		fi
	fi

	# passed NAME: the scenarios a run passed, one per line.
	passed() { sed -n 's/^✓ \([^:]*\):.*/\1/p' "$CONFORMANCE_WORK/$1.log" | sort; }
	checks() { sed -n 's/^Total: \([0-9]*\) passed.*/\1/p' "$CONFORMANCE_WORK/$1.log"; }
	missing=$(comm -23 <(passed go-sdk) <(passed switchboard))
	sb=$(checks switchboard) gosdk=$(checks go-sdk)
	echo "conformance client suite: Switchboard passed ${sb:-?} checks; go-sdk's client alone passed ${gosdk:-?} (same run)"
	sed -n '/=== SUITE SUMMARY ===/,$p' "$CONFORMANCE_WORK/switchboard.log"
	if [[ -n $missing ]]; then
		echo "scenarios go-sdk's client passes and Switchboard fails:"
		echo "$missing"
		rc=1
	fi
	if [[ -z $sb || $sb -lt $CONFORMANCE_MIN_CHECKS ]]; then
		echo "Switchboard passed ${sb:-no} checks, fewer than $CONFORMANCE_MIN_CHECKS"
		rc=1
	fi
	if [[ $rc -ne 0 ]]; then
		echo "--- Switchboard's run"
		cat "$CONFORMANCE_WORK/switchboard.log"
		echo "--- go-sdk's run (summary)"
		sed -n '/=== SUITE SUMMARY ===/,$p' "$CONFORMANCE_WORK/go-sdk.log"
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
