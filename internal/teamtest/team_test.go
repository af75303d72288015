package teamtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/nginxtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/policy"
)

// Sizes of the load: 50 clients, as the issue asks, for rounds of a
// second and a half through the three replicas and through one alone, in
// turn. The durations bound the runs; nothing asserts on how many calls
// fit in them.
const (
	clients   = 50
	rounds    = 3
	roundTime = 1500 * time.Millisecond
)

// nginxConf is the nginx configuration in front of the replicas (the
// http part; nginxtest adds the rest). It listens on nginxtest.Listen and
// names the replicas 127.0.0.1:8081 to 8083, which the test replaces with
// the replicas' ports. A request without Mcp-Session-Id (stateless ones,
// and the initialize that opens a session) has an empty hash key, which
// nginx balances round-robin; the requests of a session hash to one
// replica. A request nginx could not send (connection refused) goes to
// the next replica; one it sent is never sent again (a POST is not
// idempotent: proxy_next_upstream without non_idempotent).
const nginxConf = `
upstream switchboard {
	hash $http_mcp_session_id consistent;
	server 127.0.0.1:8081 max_fails=0;
	server 127.0.0.1:8082 max_fails=0;
	server 127.0.0.1:8083 max_fails=0;
}
server {
	listen 127.0.0.1:8080;
	location / {
		proxy_pass http://switchboard;
		proxy_http_version 1.1;
		proxy_set_header Host $host;
		proxy_buffering off;
		proxy_read_timeout 1h;
		client_max_body_size 4m;
	}
}
`

// upstreamPlaceholders are the replicas' addresses as the configuration
// names them.
var upstreamPlaceholders = []string{"127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083"}

// deployConf is the nginx configuration that docs/team.md tells users to
// run, relative to this package's directory.
const deployConf = "../../deploy/nginx/switchboard.conf"

// nginxFor returns the nginx configuration for reps: deploy/nginx's where
// it exists (a complete configuration), else nginxConf (an http part). The
// configuration names the replicas by upstreamPlaceholders; with one
// replica, every upstream line names it (one replica alone behind the same
// nginx). The replica down, if any (else nil), is marked down: nginx sends
// it nothing new.
func nginxFor(t *testing.T, down *replica, reps ...*replica) (conf string, complete bool) {
	t.Helper()
	conf = nginxConf
	if data, err := os.ReadFile(deployConf); err == nil {
		conf, complete = string(data), true
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for i, p := range upstreamPlaceholders {
		if !strings.Contains(conf, "server "+p) {
			t.Fatalf("the nginx configuration has no line server %s: the test cannot point it at replica %d", p, i+1)
		}
		r := reps[i%len(reps)]
		repl := fmt.Sprintf("server 127.0.0.1:%d", r.port)
		if r == down {
			repl += " down"
		}
		conf = strings.ReplaceAll(conf, "server "+p, repl)
	}
	return conf, complete
}

// startNginx starts nginx in front of reps (see nginxFor).
func startNginx(t *testing.T, reps ...*replica) *nginxtest.Server {
	t.Helper()
	conf, complete := nginxFor(t, nil, reps...)
	if complete {
		return nginxtest.StartConfig(t, conf)
	}
	return nginxtest.Start(t, conf)
}

// TestThreeReplicas is the team-scale acceptance test (issue 16): three
// replicas of the real binary behind a real nginx, sharing the store, under
// 50 go-sdk clients, stateless and with sessions, against one replica
// alone in the same run; a replica killed mid-load, a rolling restart, one
// OAuth login for all three, and the audit trail of all three. It prints
// the figures docs/team.md quotes; it asserts on no speed.
func TestThreeReplicas(t *testing.T) {
	nginxtest.Path(t)
	began := time.Now()
	// First: the private PostgreSQL server is the test binary's, not this
	// test's, and outlives it.
	storeSettings, storeEnv := sharedStore(t)
	mcptest.CheckNoLeaks(t)
	auth := oauthtest.New(t, oauthtest.Options{})
	settings := map[string]any{"audit": map[string]any{"payloads": true}}
	for k, v := range storeSettings {
		settings[k] = v
	}
	servers := map[string]any{"f": fixtureServer(), "remote": map[string]any{"url": auth.URL()}}
	c := newCluster(t, 3, servers, settings, storeEnv)
	for _, r := range c.replicas {
		r.stateless = true
	}
	c.startAll()
	lb := startNginx(t, c.replicas...)
	alone := startNginx(t, c.replicas[0])
	ledgerPath := filepath.Join(t.TempDir(), "ledger")
	record := func(id string) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"server": "f", "tool": "record",
			"args": map[string]any{"file": ledgerPath, "line": id, "then": ""}}}
	}
	// compare runs the load through the three replicas and through r1
	// alone, interleaved in rounds, so that the machine's other work falls
	// on both alike.
	compare := func(name string, stateful bool) (three, one run) {
		three.name, one.name = name+"-3", name+"-1"
		for round := range rounds {
			for _, side := range []struct {
				into *run
				lb   *nginxtest.Server
				reps []*replica
			}{{&three, lb, c.replicas}, {&one, alone, c.replicas[:1]}} {
				l := newLoad(fmt.Sprintf("%s-r%d", side.into.name, round), side.lb.URL("/mcp"), clients, stateful, record)
				side.into.add(measure(t, side.reps, "f", func() run {
					stop := make(chan struct{})
					wait := l.start(stop, 0)
					time.AfterFunc(roundTime, func() { close(stop) })
					return wait()
				}))
			}
		}
		return three, one
	}

	t.Run("stateless", func(t *testing.T) {
		three, one := compare("stateless", false)
		table(t, "stateless (--stateless, go-sdk's latest revision): 3 replicas behind nginx, then r1 alone behind nginx", named(three, "stateless, 3 replicas"), named(one, "stateless, r1 alone"))
		ratio(t, three, one)
		for _, r := range []run{three, one} {
			checkOnce(t, r, ledger(t, ledgerPath), r.name+"-")
			if f := r.failures(); len(f) > 0 {
				t.Errorf("%s: %d calls failed; the first: %v", r.name, len(f), f[0].err)
			}
		}
		checkSpread(t, three)
	})

	t.Run("oauth", func(t *testing.T) { oauthOnce(t, c, lb, auth) })

	t.Run("kill", func(t *testing.T) { killMidLoad(t, c, lb, record, ledgerPath) })

	t.Run("rolling-restart", func(t *testing.T) { rollingRestart(t, c, lb, record, ledgerPath) })

	t.Run("session-routed", func(t *testing.T) {
		for _, r := range c.replicas {
			c.restart(r, false)
		}
		three, one := compare("sessions", true)
		table(t, "session-routed (2025-11-25 sessions, nginx keeps each on its replica): 3 replicas behind nginx, then r1 alone", named(three, "sessions, 3 replicas"), named(one, "sessions, r1 alone"))
		ratio(t, three, one)
		for _, r := range []run{three, one} {
			checkOnce(t, r, ledger(t, ledgerPath), r.name+"-")
			if f := r.failures(); len(f) > 0 {
				t.Errorf("%s: %d calls failed; the first: %v", r.name, len(f), f[0].err)
			}
		}
		checkSpread(t, three)
		t.Run("audit", func(t *testing.T) { checkAudit(t, c, three) })
	})
	t.Logf("TestThreeReplicas took %v (without its cleanup)", time.Since(began).Round(time.Second))
	fmt.Printf("TestThreeReplicas took %v on %d CPUs\n", time.Since(began).Round(time.Second), numCPU())
}

func named(r run, name string) run { r.name = name; return r }

// ratio prints how the three replicas' total compares with one alone.
func ratio(t *testing.T, three, one run) {
	a, b := three.figures().perSec, one.figures().perSec
	s := "calls/s of 3 replicas ÷ r1 alone: r1 alone made no call"
	if b > 0 {
		s = fmt.Sprintf("calls/s of 3 replicas ÷ r1 alone: %.2f (one machine: they share its %d CPUs)", a/b, numCPU())
	}
	t.Log(s)
	fmt.Println(s)
}

// checkSpread checks that nginx spread a load over every replica.
func checkSpread(t *testing.T, r run) {
	t.Helper()
	for _, pr := range r.perReplica {
		if pr.calls == 0 {
			t.Errorf("%s: replica %s served no call: nginx did not spread the load (%v)", r.name, pr.name, r.perReplica)
		}
	}
}

// killMidLoad kills one replica with SIGKILL while 50 clients call through
// nginx, and checks that only calls in flight at that moment failed, each
// with a clear error, and that no call reached an upstream twice.
func killMidLoad(t *testing.T, c *cluster, lb *nginxtest.Server, record func(string) *mcp.CallToolParams, ledgerPath string) {
	victim := c.replicas[1]
	l := newLoad("kill", lb.URL("/mcp"), clients, false, record)
	stop := make(chan struct{})
	wait := l.start(stop, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.waitOK(ctx, 500); err != nil {
		close(stop)
		wait()
		t.Fatal(err)
	}
	if err, _ := victim.signal(syscall.SIGKILL); err == nil {
		t.Errorf("replica %s exited cleanly after SIGKILL", victim.name)
	}
	killed := time.Now() // it is dead and reaped: nothing sent from now on reaches it
	err := l.waitOK(ctx, 500)
	close(stop)
	r := wait()
	if err != nil {
		t.Error(err)
	}
	failed := r.failures()
	table(t, fmt.Sprintf("%s killed with SIGKILL mid-load", victim.name), named(r, "stateless, one replica killed"))
	perClient := map[int]int{}
	for _, f := range failed {
		t.Logf("client %d call %d (%s) failed after %v: %v", f.client, f.seq, f.id, f.end.Sub(f.start).Round(time.Millisecond), f.err)
		perClient[f.client]++
		if f.start.After(killed) {
			t.Errorf("client %d's call %d began %v after the replica was gone, and failed: %v", f.client, f.seq, f.start.Sub(killed), f.err)
		}
		if !clearKillError(f.err) {
			t.Errorf("client %d's call %d failed with an unclear error: %v", f.client, f.seq, f.err)
		}
	}
	for client, n := range perClient {
		if n > 1 {
			t.Errorf("client %d lost %d calls: only the one in flight at the kill may fail", client, n)
		}
	}
	checkOnce(t, r, ledger(t, ledgerPath), "kill-")
	c.start(victim) // for the tests after this one
}

// clearKillError reports whether err says that the gateway failed (nginx's
// 502, or the connection ending), rather than a timeout or nothing.
func clearKillError(err error) bool {
	s := err.Error()
	for _, w := range []string{"Bad Gateway", "502", "EOF", "connection reset", "unexpected end"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// rollingRestart restarts the replicas one at a time while 50 clients
// call through nginx, as on one host: take the replica out of nginx
// (reload), SIGTERM, a replacement on the same port, ready (/readyz),
// back into nginx (reload); and checks that every call succeeded, once.
func rollingRestart(t *testing.T, c *cluster, lb *nginxtest.Server, record func(string) *mcp.CallToolParams, ledgerPath string) {
	l := newLoad("rolling", lb.URL("/mcp"), clients, false, record)
	// A connection per request from the clients to nginx: a reload closes
	// the old workers' idle client connections, and a POST that a client
	// writes on one as it closes fails at the client, which does not resend
	// a POST ("http: server closed idle connection"). That is nginx's
	// reload, not the replicas; it is in docs/team.md.
	l.httpClient.Transport.(*http.Transport).DisableKeepAlives = true
	stop := make(chan struct{})
	wait := l.start(stop, 0)
	// Each wait has a bound of its own: the restarts between them take
	// what the machine gives them, and one budget for all would make a
	// busy machine's slow restart look like calls that stopped.
	waitOK := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), readyBound)
		defer cancel()
		return l.waitOK(ctx, 300)
	}
	err := waitOK()
	for _, r := range c.replicas {
		if err != nil {
			break
		}
		// nginx has no health checks (that is nginx Plus): a replica that
		// is stopping must first be taken out, or the requests nginx has
		// sent it when it closes are lost (nginx never resends a POST it
		// has sent). Reload returns once no nginx worker of the old
		// configuration is left, so nothing is sent to r after it.
		conf, _ := nginxFor(t, r, c.replicas...)
		lb.Reload(t, conf)
		c.restart(r, true)
		conf, _ = nginxFor(t, nil, c.replicas...)
		lb.Reload(t, conf)
		err = waitOK()
	}
	close(stop)
	res := wait()
	if err != nil {
		t.Error(err)
	}
	failed := res.failures()
	table(t, "rolling restart: each replica in turn stopped with SIGTERM and replaced", named(res, "stateless, rolling restart"))
	if len(failed) > 0 {
		t.Logf("nginx's errors about the replicas:\n%s", upstreamErrors(lb))
	}
	for i, f := range failed {
		if i == 10 {
			t.Errorf("... and %d more", len(failed)-10)
			break
		}
		t.Errorf("client %d call %d (%s) failed: %v", f.client, f.seq, f.id, f.err)
	}
	checkOnce(t, res, ledger(t, ledgerPath), "rolling-")
}

// oauthOnce logs in once, with the CLI and the shared configuration, to
// the remote server that the local authorization server protects; then
// calls through nginx must reach it from every replica with that login.
func oauthOnce(t *testing.T, c *cluster, lb *nginxtest.Server, auth *oauthtest.Server) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "cli")
	stdout, stderr, err := c.run(home, []string{"BROWSER=" + exe, browserEnv + "=1"}, "auth", "login", "remote")
	if err != nil {
		t.Fatalf("switchboard auth login remote: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	echo := func(id string) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"server": "remote", "tool": "echo", "args": map[string]any{"text": id}}}
	}
	l := newLoad("oauth", lb.URL("/mcp"), 6, false, echo)
	r := measure(t, c.replicas, "remote", func() run { return l.start(make(chan struct{}), 10)() })
	for i, f := range r.failures() {
		if i == 5 {
			t.Errorf("... and %d more", len(r.failures())-5)
			break
		}
		t.Errorf("client %d call %d to the remote server failed: %v", f.client, f.seq, f.err)
	}
	for _, pr := range r.perReplica {
		switch {
		case pr.calls == 0:
			t.Errorf("replica %s made no call to the remote server: nginx did not spread the calls (per replica: %v)", pr.name, r.perReplica)
		case pr.calls == pr.errs:
			t.Errorf("replica %s: none of its %d calls to the remote server succeeded: the one login, made with the CLI and the shared configuration, did not reach it (the tokens are not in the shared store)", pr.name, pr.calls)
		}
	}
	if n := auth.Counts(); n.CodeGrants != 1 || n.Registrations != 1 {
		t.Errorf("the authorization server saw %d registrations and %d code grants; want one login: 1 and 1", n.Registrations, n.CodeGrants)
	}
}

// checkAudit reads the audit trail with `switchboard audit --json` and
// the shared configuration (the store's trail, which every replica writes)
// and checks that each call of the run appears once, and that the calls
// of each audit session are one client's, in the order it made them.
func checkAudit(t *testing.T, c *cluster, r run) {
	stdout, stderr, err := c.run(filepath.Join(t.TempDir(), "cli"), nil, "audit", "--json", "--server", "f")
	if err != nil {
		t.Fatalf("switchboard audit --json: %v\n%s", err, stderr)
	}
	type entry struct {
		session string
		line    string
	}
	var entries []entry
	count := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line == "" {
			continue
		}
		var rec policy.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit --json printed a line that is not a record: %v\n%s", err, line)
		}
		var args struct {
			Line string `json:"line"`
		}
		if rec.Event != policy.EventCall || rec.Tool != "record" || json.Unmarshal(rec.Args, &args) != nil || !strings.HasPrefix(args.Line, r.name) {
			continue
		}
		entries = append(entries, entry{rec.Session, args.Line})
		count[args.Line]++
	}
	want := r.succeeded()
	if len(want) == 0 {
		t.Fatalf("%s made no successful call whose audit to check", r.name)
	}
	var missing, twice []string
	for _, id := range want {
		switch n := count[id]; {
		case n == 0:
			missing = append(missing, id)
		case n > 1:
			twice = append(twice, fmt.Sprintf("%s ×%d", id, n))
		}
	}
	if len(entries) == 0 {
		t.Errorf("switchboard audit --json with the shared configuration found no record of this run (%s): the replicas' audit trail is not in the shared store", strings.TrimSpace(stderr))
	} else if len(missing) > 0 || len(twice) > 0 {
		t.Errorf("of %d calls that succeeded, the audit trail (%s) lacks %d (e.g. %v) and has %d more than once (e.g. %v); it has %d records of this run",
			len(want), strings.TrimSpace(stderr), len(missing), missing[:min(3, len(missing))], len(twice), twice[:min(3, len(twice))], len(entries))
	}
	// Per audit session: one client, its calls in order.
	type pos struct{ client, seq int }
	byID := map[string]pos{}
	for _, cl := range r.calls {
		byID[cl.id] = pos{cl.client, cl.seq}
	}
	last := map[string]pos{}
	for _, e := range entries {
		p, ok := byID[e.line]
		if !ok {
			continue
		}
		prev, seen := last[e.session]
		switch {
		case seen && prev.client != p.client:
			t.Errorf("audit session %s has calls of clients %d and %d: one session is one client's", e.session, prev.client, p.client)
		case seen && prev.seq >= p.seq:
			t.Errorf("audit session %s: client %d's call %d is recorded after its call %d", e.session, p.client, p.seq, prev.seq)
		}
		last[e.session] = p
	}
	sessions := slices.Collect(func(yield func(string) bool) {
		for s := range last {
			if !yield(s) {
				return
			}
		}
	})
	t.Logf("audit trail: %d records of %d calls, %d sessions", len(entries), len(want), len(sessions))
}

// upstreamErrors returns the last lines of nginx's error log about the
// replicas: why it answered 502.
func upstreamErrors(lb *nginxtest.Server) string {
	var lines []string
	for _, l := range strings.Split(lb.ErrorLog(), "\n") {
		if strings.Contains(l, "upstream") && (strings.Contains(l, "[error]") || strings.Contains(l, "[warn]")) {
			lines = append(lines, l)
		}
	}
	// The kinds of error, with how often each came, and the last lines.
	kinds := map[string]int{}
	for _, l := range lines {
		_, msg, _ := strings.Cut(l, "] ")
		_, msg, _ = strings.Cut(msg, ": ")
		msg, _, _ = strings.Cut(msg, ", client:")
		if i := strings.Index(msg, " "); i > 0 && strings.HasPrefix(msg, "*") {
			msg = msg[i+1:]
		}
		kinds[msg]++
	}
	var b strings.Builder
	for k, n := range kinds {
		fmt.Fprintf(&b, "%5d × %s\n", n, k)
	}
	return b.String() + strings.Join(lines[max(0, len(lines)-3):], "\n")
}
