package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptCmds are the commands scripts get beyond testscript's own.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"mkfifo":      cmdMkfifo,
	"manyservers": cmdManyServers,
	"expand":      cmdExpand,
	"stabilize":   cmdStabilize,
	"httpserver":  cmdHTTPServer,
}

// Values in --json answers that differ between runs, and what stabilize
// writes in their place.
var (
	stableTime     = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"`)
	stableDuration = regexp.MustCompile(`("(durationNs|durationMs|elapsedMs|took)": )\d+`)
	stableSpill    = regexp.MustCompile(`/spill/p\d+-\d+/`)
)

// cmdStabilize copies a file (stdout, stderr, or a file of the script's)
// to another, with what differs between runs replaced: the script's work
// directory by $WORK, the fixture server's path by $FIXTURE, times by "<time>", durations by 0, a process's spill
// directory by PROCESS. Then cmp compares it with an answer kept in the
// script, which go test -update rewrites: stabilize FROM TO.
func cmdStabilize(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: stabilize FROM TO")
	}
	s := ts.ReadFile(args[0])
	s = strings.ReplaceAll(s, ts.Getenv("WORK"), "$WORK")
	if f := ts.Getenv("FIXTURE"); f != "" {
		s = strings.ReplaceAll(s, f, "$FIXTURE")
	}
	s = stableTime.ReplaceAllString(s, `"<time>"`)
	s = stableDuration.ReplaceAllString(s, "${1}0")
	s = stableSpill.ReplaceAllString(s, "/spill/PROCESS/")
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(s), 0o666))
}

// cmdMkfifo makes a FIFO: mkfifo PATH. Nothing ever writes to it, so
// whatever opens it for reading and waits blocks for good.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo PATH")
	}
	ts.Check(mkfifo(ts.MkAbs(args[0])))
}

// cmdManyServers writes a configuration of N stdio servers, s0 to sN-1:
// manyservers N PATH.
func cmdManyServers(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: manyservers N PATH")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n  \"s%d\": {\"command\": \"true\"}", i)
	}
	b.WriteString("\n}}\n")
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o600))
}

// cmdExpand copies a file with the script's environment variables
// expanded ($WORK, ${NODE}), making its directory: expand SRC DST. It
// writes configurations that name the script's own paths.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expand SRC DST")
	}
	dst := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(dst), 0o755))
	ts.Check(os.WriteFile(dst, []byte(os.Expand(ts.ReadFile(args[0]), ts.Getenv)), 0o600))
}
