package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/internal/testkit/embedtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestIndexScripts runs testdata/index/*.txtar: $FIXTURE is the fixture
// server's executable (choose its mode with SWITCHBOARD_TESTSERVER in its
// env) and $EMBED_URL the base URL of a fake embeddings endpoint.
func TestIndexScripts(t *testing.T) {
	fixture, _, _ := testserver.Command(testserver.Good)
	srv := embedtest.Start(t)
	testscript.Run(t, scriptParams("testdata/index", map[string]string{"FIXTURE": fixture, "EMBED_URL": srv.BaseURL}))
}

func TestIndexLine(t *testing.T) {
	for _, tt := range []struct {
		r     switchboard.IndexResult
		color bool
		want  string
	}{
		{switchboard.IndexResult{Server: "github", Tools: 23, Resources: 4, Prompts: 2, Duration: 800 * time.Millisecond}, false,
			"github  23 tools, 4 resources, 2 prompts  (800ms)"},
		{switchboard.IndexResult{Server: "fs", Tools: 1, Resources: 1, Prompts: 1, Duration: 50 * time.Millisecond, Embedded: 1}, false,
			"fs      1 tool, 1 resource, 1 prompt, 1 embedded  (50ms)"},
		{switchboard.IndexResult{Server: "ev", Tools: 1, Resources: 0, Templates: 1, Prompts: 0, Duration: 50 * time.Millisecond}, false,
			"ev      1 tool, 0 resources, 1 template, 0 prompts  (50ms)"},
		{switchboard.IndexResult{Server: "ev", Tools: 1, Resources: 7, Templates: 2, Prompts: 3, Duration: 50 * time.Millisecond}, false,
			"ev      1 tool, 7 resources, 2 templates, 3 prompts  (50ms)"},
		{switchboard.IndexResult{Server: "fs", Tools: 2, EmbeddingsError: "embedding tool texts: POST http://h/v1/embeddings: refused"}, false,
			"fs      2 tools, 0 resources, 0 prompts  (0ms); embeddings failed: POST http://h/v1/embeddings: refused"},
		{switchboard.IndexResult{Server: "bad", Error: "exited with status 1:\nError: Cannot find module", Duration: 1500 * time.Millisecond}, false,
			"bad     failed: exited with status 1:\n          Error: Cannot find module  (1.5s)"},
		{switchboard.IndexResult{Server: "bad", Error: "boom"}, true,
			"bad     \x1b[31mfailed\x1b[0m: boom  (0ms)"},
	} {
		if got := indexLine(tt.r, 6, tt.color); got != tt.want {
			t.Errorf("indexLine(%+v):\n got %q\nwant %q", tt.r, got, tt.want)
		}
	}
}

func TestProgress(t *testing.T) {
	for _, tt := range []struct {
		name      string
		on, plain bool
		want      string
	}{
		{"off", false, false, "[a done]"},
		{"terminal", true, false, "\rindexing 0/2: a…\x1b[K\rindexing 0/2: a, b…\x1b[K\r\x1b[K[a done]\rindexing 1/2: b…\x1b[K\r\x1b[K[b done]"},
		{"NO_COLOR", true, true, "\rindexing 0/2: a…\rindexing 0/2: a, b…\r                   \r[a done]\rindexing 1/2: b…\r                \r[b done]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			p := &progress{line: liveLine{w: &b, plain: tt.plain}, on: tt.on, total: 2}
			p.start("a")
			if tt.on {
				p.start("b")
			}
			p.finish("a", func() { b.WriteString("[a done]") })
			if tt.on {
				p.finish("b", func() { b.WriteString("[b done]") })
			}
			p.clear()
			if got := b.String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	var b bytes.Buffer
	p := &progress{line: liveLine{w: &b, plain: true}, on: true, total: 100}
	p.start(strings.Repeat("x", 200))
	if n := len([]rune(strings.TrimPrefix(b.String(), "\r"))); n != progressWidth {
		t.Errorf("a long line is %d runes, want %d", n, progressWidth)
	}
}
