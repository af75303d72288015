#!/usr/bin/env bash
# Source it, do not run it:  . .ci/peers.sh
#
# Installs the pinned third-party MCP peers (testdata/mcp-peers/package-lock.json)
# with npm ci and exports where they are:
#   MCP_PEERS_DIR                 testdata/mcp-peers, with node_modules installed
#   MCP_PEERS_BIN                 its node_modules/.bin
#   MCP_CONFORMANCE_NODE_OPTIONS  node options to run @modelcontextprotocol/conformance on Node 20
#   MCP_LOOPBACK_NODE_OPTIONS     node options that keep server-everything's HTTP modes on 127.0.0.1
MCP_PEERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../testdata/mcp-peers" && pwd)"
export MCP_PEERS_DIR
# npm ci: exact versions and integrity from the lockfile (audit, fund and update checks are
# off in .npmrc). --offline succeeds when the npm cache (~/.npm or $npm_config_cache)
# already holds every tarball; otherwise fall back to the registry.
# npm ci always reinstalls from scratch (~5 s warm), so a stamp of the lockfile and node
# version skips it when nothing changed; delete node_modules to force a reinstall.
mcp_peers_stamp="$(sha256sum "$MCP_PEERS_DIR/package-lock.json" | cut -d' ' -f1) node $(node --version)"
if [[ "$(cat "$MCP_PEERS_DIR/node_modules/.switchboard-installed" 2>/dev/null)" != "$mcp_peers_stamp" ]]; then
	(
		cd "$MCP_PEERS_DIR"
		npm ci --offline --loglevel=error 2>/dev/null || npm ci --loglevel=error
	) || return # fails the sourcing script
	echo "$mcp_peers_stamp" >"$MCP_PEERS_DIR/node_modules/.switchboard-installed"
fi
unset mcp_peers_stamp
export MCP_PEERS_BIN="$MCP_PEERS_DIR/node_modules/.bin"
# @modelcontextprotocol/conformance <= 0.2.0-alpha.12 statically imports fs.globSync (Node >= 22 only).
export MCP_CONFORMANCE_NODE_OPTIONS="--import $MCP_PEERS_DIR/node20-compat/register.mjs"
# server-everything's HTTP/SSE modes listen on all interfaces (no HOST option): preload forces 127.0.0.1.
export MCP_LOOPBACK_NODE_OPTIONS="--require $MCP_PEERS_DIR/loopback-listen.cjs"
