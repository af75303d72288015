package oauth_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// The test binary doubles as another process that uses a stored token:
// with $OAUTH_TEST_REFRESH=DIR URL, a handler over the store in DIR reads
// the token of server "api" at URL, says "ready", and once a line comes on
// its standard input asks for the token to send and prints its hash.
func TestMain(m *testing.M) {
	if v := os.Getenv("OAUTH_TEST_REFRESH"); v != "" {
		dir, u, _ := strings.Cut(v, " ")
		h, err := oauth.New(oauth.Config{Server: "api", URL: u}, &oauth.Options{Store: credstore.NewFile(dir)})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		ts, err := h.TokenSource(context.Background())
		if err != nil || ts == nil {
			fmt.Fprintln(os.Stderr, "no token source:", err)
			os.Exit(1)
		}
		fmt.Println("ready")
		bufio.NewReader(os.Stdin).ReadString('\n')
		tok, err := ts.Token()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(hash(tok.AccessToken))
		os.Exit(0)
	}
	pgtest.Main(m)
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// TestConcurrentRefreshProcesses: two processes that need to refresh the
// same token at once refresh it once, and both use the one new token. The
// server rotates refresh tokens, so a second refresh with the old refresh
// token would fail and lose the login.
func TestConcurrentRefreshProcesses(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{TokenLifetime: 2 * time.Second})
	dir := t.TempDir()
	store := credstore.NewFile(dir)
	cfg := oauth.Config{Server: "api", URL: as.URL()}
	if err := login(t, newHandler(t, cfg, store, follow), as.URL()); err != nil {
		t.Fatal(err)
	}
	st, _ := oauth.Lookup(store, cfg)
	waitUntil(t, st.Expiry.Add(-time.Second)) // within the refresh margin

	// Both read the token, which is due for a refresh; then both ask for
	// it at once, while this process holds the token's lock.
	keys, _ := store.Keys("oauth/api/")
	var key string
	for _, k := range keys {
		if strings.HasSuffix(k, "/token") {
			key = k
		}
	}
	unlock, err := store.Lock(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	type child struct {
		cmd *exec.Cmd
		in  io.WriteCloser
		out *bufio.Reader
	}
	var children []child
	for range 2 {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "OAUTH_TEST_REFRESH="+dir+" "+as.URL())
		cmd.Stderr = os.Stderr
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		c := child{cmd, in, bufio.NewReader(out)}
		if line, err := c.out.ReadString('\n'); line != "ready\n" {
			t.Fatalf("child said %q, %v", line, err)
		}
		children = append(children, c)
	}
	for _, c := range children {
		fmt.Fprintln(c.in, "go")
	}
	as.SetTokenLifetime(time.Hour) // the new token stays fresh while checked
	unlock()
	var got []string
	for _, c := range children {
		line, err := c.out.ReadString('\n')
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		got = append(got, strings.TrimSpace(line))
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	if got[0] != got[1] {
		t.Errorf("the processes use different tokens: %v", got)
	}
	h := newHandler(t, cfg, store, nil)
	ts, _ := h.TokenSource(t.Context())
	tok, err := ts.Token()
	if err != nil || hash(tok.AccessToken) != got[0] || !as.Valid(tok.AccessToken) {
		t.Errorf("stored token: %v, valid %v; want the one both use", err, err == nil && as.Valid(tok.AccessToken))
	}
	if c := as.Counts(); c.Refreshes != 1 || c.ValidRefresh != 1 {
		t.Errorf("counts %+v: want one refresh and one valid refresh token", c)
	}
}

// TestRefreshOnceInProcess: many requests that need the token at once,
// when it is due, cause one refresh, and all send its result.
func TestRefreshOnceInProcess(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{TokenLifetime: 2 * time.Second})
	store := credstore.NewFile(t.TempDir())
	cfg := oauth.Config{Server: "api", URL: as.URL()}
	if err := login(t, newHandler(t, cfg, store, follow), as.URL()); err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, cfg, store, nil)
	ts, err := h.TokenSource(t.Context())
	if err != nil || ts == nil {
		t.Fatal(ts, err)
	}
	st, _ := oauth.Lookup(store, cfg)
	waitUntil(t, st.Expiry.Add(-time.Second))
	as.SetTokenLifetime(time.Hour)
	const n = 20
	got := make(chan string, n)
	for range n {
		go func() {
			tok, err := ts.Token()
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			got <- hash(tok.AccessToken)
		}()
	}
	first := <-got
	for range n - 1 {
		if g := <-got; g != first {
			t.Errorf("requests got %q and %q", first, g)
		}
	}
	if c := as.Counts(); c.Refreshes != 1 {
		t.Errorf("counts %+v, want one refresh", c)
	}
}
