package mcptest

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
)

// StatefulConformanceServer is [ConformanceServer] with sessions
// (-stateless=false). Only a server with sessions can send requests to the
// client during a call, which the conformance suite's sampling and
// elicitation scenarios need: run directly against it at the suite's
// revision (2025-11-25), the active server suite passes every scenario.
func StatefulConformanceServer(t testing.TB) (endpoint string) {
	t.Helper()
	bin, err := conformanceBinary()
	if err != nil {
		t.Fatal(err)
	}
	port := serve(t, "conformance everything-server (stateful)", func(port int) Command {
		return Command{
			Path: bin,
			Args: []string{"-http=127.0.0.1:" + strconv.Itoa(port), "-stateless=false"},
			Env:  []string{ownerMark()},
		}
	})
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// ServerSuite returns the command that runs the official conformance
// server suite (@modelcontextprotocol/conformance, active scenarios) against
// the Streamable HTTP endpoint url, with the expected failures listed in
// baseline (a path; "" for none) and results written under outDir. It exits
// 0 when every failure is expected and no expected failure passes.
//
// The suite only connects to url: unlike the client suite, it listens on
// nothing, so it needs no private network namespace.
func (p PeerSet) ServerSuite(url, baseline, outDir string) Command {
	// conformance 0.1.16 imports fs.globSync, which Node 20 lacks: the
	// loader adds it.
	register := filepath.Join(p.Dir, "node20-compat", "register.mjs")
	c := p.script("conformance", "dist/index.js", "server", "--url", url, "--suite", "active", "-o", outDir)
	c.Args = append([]string{"--import", register}, c.Args...)
	if baseline != "" {
		c.Args = append(c.Args, "--expected-failures", baseline)
	}
	return c
}

// Inspector returns the command that runs the CLI of
// @modelcontextprotocol/inspector with args. It reads ../package.json
// relative to its working directory for its own name: run it in a
// directory whose parent holds one. The package asks for Node 22.19; its
// CLI runs on Node 20, which CI has.
func (p PeerSet) Inspector(args ...string) Command {
	return p.script("inspector", "clients/cli/build/index.js", args...)
}

// BasicApp returns the command for @modelcontextprotocol/server-basic-vanillajs
// over stdio, the MCP Apps example server: one tool, get-time, whose
// _meta.ui.resourceUri names ui://get-time/mcp-app.html, an HTML resource
// of MIME type text/html;profile=mcp-app.
func (p PeerSet) BasicApp() Command {
	return p.script("server-basic-vanillajs", "dist/index.js", "--stdio")
}
