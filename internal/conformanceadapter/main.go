// Command conformanceadapter runs Switchboard as the client of one scenario
// of the official MCP conformance client suite (@modelcontextprotocol/
// conformance, "conformance client --command"). The suite starts a scenario
// server and runs
//
//	conformanceadapter SERVER_URL
//
// with $MCP_CONFORMANCE_SCENARIO (and $MCP_CONFORMANCE_CONTEXT, e.g. a
// pre-registered client) set. The adapter makes the scenario server the one
// upstream of a real `switchboard serve --http` in transparent mode, logs in
// first with `switchboard auth login` for the auth scenarios (its $BROWSER
// is this program with --follow, which follows the authorization server's
// redirect to Switchboard's loopback listener, as a browser whose user
// approves would), and then runs go-sdk's conformance client against
// Switchboard with the same scenario. The scenario server thus sees
// Switchboard as its client, and what the go-sdk client asks of it
// (sampling, elicitation, tool calls) passes through Switchboard.
//
// Environment: $CONFORMANCE_SWITCHBOARD, the switchboard binary;
// $CONFORMANCE_GOCLIENT, go-sdk's conformance everything-client.
// scripts/conformance-client.sh builds both and runs the suite.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// clientMetadataURL is the client ID metadata document the suite's
// authorization servers accept (its auth/basic-cimd scenario checks that a
// client uses it where they say they support such documents).
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

func main() {
	if len(os.Args) == 3 && os.Args[1] == "--follow" {
		os.Exit(follow(os.Args[2]))
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: conformanceadapter SERVER_URL  (or --follow URL, as $BROWSER)")
		os.Exit(2)
	}
	code, err := run(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformanceadapter:", err)
	}
	os.Exit(code)
}

// follow is the browser: it gets the authorization URL and follows the
// redirects to the client's loopback listener.
func follow(u string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "follow:", err)
		return 1
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "follow:", err)
		return 1
	}
	resp.Body.Close()
	return 0
}

func run(serverURL string) (int, error) {
	sb, client := os.Getenv("CONFORMANCE_SWITCHBOARD"), os.Getenv("CONFORMANCE_GOCLIENT")
	if sb == "" || client == "" {
		return 2, errors.New("$CONFORMANCE_SWITCHBOARD and $CONFORMANCE_GOCLIENT must name the binaries")
	}
	self, err := os.Executable()
	if err != nil {
		return 1, err
	}
	work, err := os.MkdirTemp("", "sb-conformance-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(work)
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "BROWSER=" + self + " --follow"}
	cfg, extra, err := writeConfig(work, serverURL, scenario)
	if err != nil {
		return 1, err
	}
	env = append(env, extra...)
	if strings.HasPrefix(scenario, "auth/") {
		login := exec.Command(sb, "auth", "login", "conformance", "--config", cfg)
		login.Env, login.Stdout, login.Stderr = env, os.Stderr, os.Stderr
		if err := login.Run(); err != nil {
			return 1, fmt.Errorf("switchboard auth login: %v", err)
		}
	}
	url, stop, err := serve(sb, cfg, env, filepath.Join(work, "serve.log"))
	if err != nil {
		return 1, err
	}
	c := exec.Command(client, url)
	c.Env = append(env, "MCP_CONFORMANCE_SCENARIO="+scenario, "MCP_CONFORMANCE_CONTEXT="+os.Getenv("MCP_CONFORMANCE_CONTEXT"))
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	runErr := c.Run()
	stop()
	if runErr != nil {
		if log, err := os.ReadFile(filepath.Join(work, "serve.log")); err == nil {
			fmt.Fprintf(os.Stderr, "--- switchboard serve log\n%s", log)
		}
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			return ee.ExitCode(), nil
		}
		return 1, runErr
	}
	return 0, nil
}

// writeConfig writes Switchboard's configuration for the scenario: the
// scenario server as the one server, transparent. It returns the file and
// the environment its references need.
func writeConfig(work, serverURL, scenario string) (string, []string, error) {
	server := map[string]any{"url": serverURL}
	var env []string
	if strings.HasPrefix(scenario, "auth/") {
		o := map[string]any{"clientMetadataUrl": clientMetadataURL}
		var sc map[string]any
		_ = json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &sc)
		if id, ok := sc["client_id"].(string); ok {
			o["clientId"] = id
			if secret, ok := sc["client_secret"].(string); ok {
				o["clientSecret"] = "${CONFORMANCE_CLIENT_SECRET}"
				env = append(env, "CONFORMANCE_CLIENT_SECRET="+secret)
			}
			if key, ok := sc["private_key_pem"].(string); ok {
				o["clientKey"] = "${CONFORMANCE_CLIENT_KEY}"
				env = append(env, "CONFORMANCE_CLIENT_KEY="+key)
			}
		}
		if strings.HasPrefix(scenario, "auth/client-credentials") {
			o["grant"] = "client_credentials"
		}
		server["oauth"] = o
	}
	doc := map[string]any{"mcpServers": map[string]any{"conformance": server}, "settings": map[string]any{"toolPrefix": "none", "credentialStore": "file"}}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", nil, err
	}
	cfg := filepath.Join(work, "config.json")
	return cfg, env, os.WriteFile(cfg, data, 0o600)
}

var servingLine = regexp.MustCompile(`serving (http://\S+/mcp)`)

// serve starts switchboard serve on a free loopback port and returns its
// URL, and a function that stops it.
func serve(sb, cfg string, env []string, logFile string) (string, func(), error) {
	cmd := exec.Command(sb, "serve", "--http", "127.0.0.1:0", "--config", cfg, "--log-file", logFile, "--log-level", "debug")
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	done := make(chan struct{})
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	urlc := make(chan string, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
				break
			}
			fmt.Fprintln(os.Stderr, sc.Text())
		}
		_, _ = io.Copy(os.Stderr, stderr)
		_ = cmd.Wait()
	}()
	select {
	case u := <-urlc:
		return u, stop, nil
	case <-done:
		return "", nil, errors.New("switchboard serve exited before serving")
	case <-time.After(30 * time.Second):
		stop()
		return "", nil, errors.New("switchboard serve printed no URL within 30s")
	}
}
