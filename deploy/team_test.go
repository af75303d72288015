package deploy

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTeamScript runs deploy/local/team.sh up, talks MCP to the three
// replicas through nginx, and runs down: everything stops, and what up
// made for the user (database, key, configuration, logs) stays.
func TestTeamScript(t *testing.T) {
	nginxBinary(t)
	if _, err := exec.LookPath("initdb"); err != nil {
		if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) == 0 {
			if os.Getenv("SWITCHBOARD_REQUIRE_POSTGRES") == "1" {
				t.Fatal("PostgreSQL's server programs are not installed and SWITCHBOARD_REQUIRE_POSTGRES=1")
			}
			t.Skip("PostgreSQL's server programs are not installed (apt-get install postgresql)")
		}
	}
	for _, tool := range []string{"curl", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	var (
		dir   string
		ports []int
		team  func(args ...string) (string, error)
	)
	downed := false
	for attempt := 1; team == nil; attempt++ {
		// Under /tmp, not t.TempDir: as root, PostgreSQL runs as nobody, who
		// must reach the directory.
		d, err := os.MkdirTemp("", "switchboard-team-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		dir, ports = d, freePorts(t, 5)
		env := append(os.Environ(),
			"SWITCHBOARD_TEAM_DIR="+dir,
			"SWITCHBOARD_BIN="+switchboardBinary(t),
			"SWITCHBOARD_TEAM_PG_PORT="+strconv.Itoa(ports[4]),
			fmt.Sprintf("SWITCHBOARD_TEAM_PORTS=%d %d %d %d", ports[0], ports[1], ports[2], ports[3]))
		run := func(args ...string) (string, error) {
			cmd := exec.Command("local/team.sh", args...)
			cmd.Env = env
			// Its own process group, so that a failed run leaves nothing behind.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		out, err := run("up")
		if err != nil {
			if down, err := run("down"); err != nil {
				t.Errorf("team.sh down after a failed up: %v\n%s", err, down)
			}
			// A port found free was taken before the team bound it (an
			// outgoing connection's, on a busy machine): other ports.
			taken := strings.Contains(out, "is in use by another program") || // team.sh's own check
				strings.Contains(strings.ToLower(out), "address already in use") // a program's bind
			if !taken || attempt == 5 {
				t.Fatalf("team.sh up: %v\n%s", err, out)
			}
			continue
		}
		team = run
		t.Cleanup(func() {
			if !downed {
				if out, err := team("down"); err != nil {
					t.Errorf("team.sh down: %v\n%s", err, out)
				}
			}
		})
	}
	front := fmt.Sprintf("http://127.0.0.1:%d/mcp", ports[0])

	// Three sessions through nginx: each opened on some replica, and every
	// later request of it reaching that replica (else 404).
	rpc := func(session, body string) (int, string, string) {
		t.Helper()
		req, err := http.NewRequest("POST", front, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")
	}
	for range 6 {
		code, body, session := rpc("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"team-test","version":"1"}}}`)
		if code != 200 || !regexp.MustCompile(`^[0-9a-f]{32}\.`).MatchString(session) || !strings.Contains(body, `"serverInfo"`) {
			t.Fatalf("initialize: status %d, Mcp-Session-Id %q: %s", code, session, body)
		}
		if code, body, _ := rpc(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != 202 {
			t.Fatalf("notifications/initialized: status %d: %s", code, body)
		}
		for range 3 {
			if code, body, _ := rpc(session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != 200 || !strings.Contains(body, `"tools"`) {
				t.Fatalf("tools/list in session %s: status %d: %s", session, code, body)
			}
		}
	}

	out, err := team("status")
	if err != nil || strings.Count(out, ": running") != 5 {
		t.Errorf("team.sh status: %v, want nginx, three replicas and postgres running:\n%s", err, out)
	}
	var pids []int
	runs, _ := filepath.Glob(filepath.Join(dir, "run", "*.pid"))
	for _, f := range append(runs, filepath.Join(dir, "postgres", "postmaster.pid")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 5 {
		t.Errorf("pid files %v, want nginx's, three replicas' and postgres's", runs)
	}

	out, err = team("down")
	downed = true
	if err != nil {
		t.Fatalf("team.sh down: %v\n%s", err, out)
	}
	for _, pid := range pids {
		// A stopped child of an exited process is reaped by init; a
		// process still there (even a zombie) is an error.
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !bytes.Contains(st, []byte(") Z ")) {
				t.Errorf("pid %d still runs after team.sh down: %s", pid, st)
			}
		}
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0]), time.Second); err == nil {
		c.Close()
		t.Error("something still listens on the front's port after team.sh down")
	}
	for _, keep := range []string{"config.json", "pg-password", "store-key", "postgres/PG_VERSION", fmt.Sprintf("replica-%d.log", ports[1])} {
		if _, err := os.Stat(filepath.Join(dir, keep)); err != nil {
			t.Errorf("team.sh down removed %s: %v", keep, err)
		}
	}
	if cfg, err := os.ReadFile(filepath.Join(dir, "config.json")); err != nil || !strings.Contains(string(cfg), `"store": { "postgres": "${DATABASE_URL}", "key": "${SWITCHBOARD_STORE_KEY}" }`) {
		t.Errorf("config.json does not name the store by references: %v\n%s", err, cfg)
	}
}

// freePorts returns n distinct loopback ports that were free a moment ago
// (the caller starts again with others if one was taken meanwhile).
func freePorts(t *testing.T, n int) []int {
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}
