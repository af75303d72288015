package embeddings

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/embedtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

func TestDecodeEmbeddings(t *testing.T) {
	for _, tt := range []struct {
		body string
		n    int
		want string // "" for success
	}{
		{`{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}`, 2, ""},
		{`{"data":[{"index":0,"embedding":[1,0]}]}`, 2, "1 embeddings for 2 inputs"},
		{`{"data":[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[0,1]}]}`, 2, "bad or repeated index 0"},
		{`{"data":[{"index":5,"embedding":[1,0]}]}`, 1, "bad or repeated index 5"},
		{`{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[1]}]}`, 2, "dimensions"},
		{`{"data":[{"index":0,"embedding":[]}]}`, 1, "dimensions"},
		{`{"data":[{"index":0,"embedding":["x"]}]}`, 1, "not an embeddings response"},
		{`<html>`, 1, "not an embeddings response"},
	} {
		vs, err := decode([]byte(tt.body), tt.n)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.body, err)
		case tt.want == "" && (vs[0][0] != 1 || vs[1][1] != 1):
			t.Errorf("%s: got %v, want the vectors placed by index", tt.body, vs)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: got %v, want an error containing %q", tt.body, err, tt.want)
		}
	}
}

// TestEmbeddingsResponseBound checks that an endless answer is cut off.
func TestEmbeddingsResponseBound(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	srv := embedtest.Start(t)
	huge := `{"data":[{"index":0,"embedding":[` + strings.Repeat("0.1,", MaxResponse/4) + `1]}]}`
	srv.FailWith(func(embedtest.Request) (int, string) { return http.StatusOK, huge })
	c := New(&config.Embeddings{BaseURL: srv.BaseURL, Model: "fake"}, config.Lookup{})
	_, err := c.Embed(t.Context(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "larger than 32 MiB") {
		t.Errorf("a huge answer: got %v, want it refused", err)
	}
}

// FuzzDecodeEmbeddings feeds the endpoint's answer, untrusted input, to the
// decoder: it errs or returns n finite vectors of one length, never panics.
func FuzzDecodeEmbeddings(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":0,"embedding":[0.1,0.2]}]}`), 1)
	f.Add([]byte(`{"data":[{"index":1,"embedding":[1]},{"index":0,"embedding":[2]}]}`), 2)
	f.Add([]byte(`{"data":[{"index":-1,"embedding":[1e39]}]}`), 1)
	f.Add([]byte(`{"data":null}`), 0)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		n = n % 64
		if n < 0 {
			n = -n
		}
		vs, err := decode(data, n)
		if err != nil {
			return
		}
		if len(vs) != n {
			t.Fatalf("%d vectors for %d inputs", len(vs), n)
		}
		for _, v := range vs {
			if len(v) == 0 || len(v) != len(vs[0]) {
				t.Fatalf("vector lengths %d and %d", len(v), len(vs[0]))
			}
		}
	})
}
