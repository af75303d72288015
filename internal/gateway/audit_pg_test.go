package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/policy"
)

// readStoreAudit reads the audit trail of the shared store in db.
func readStoreAudit(t *testing.T, db *sql.DB, f policy.Filter) *policy.Trail {
	t.Helper()
	a, err := policy.OpenPostgresAudit(t.Context(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := a.Read(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestAuditTrailPostgres: with Options.Store, calls and approval decisions
// are audited in the shared store, numbered in their session, without the
// arguments, and no audit file is written.
func TestAuditTrailPostgres(t *testing.T) {
	const canary = "canary-pg-31c8"
	db := pgtest.DB(t)
	home := t.TempDir()
	fx := fixture("good")
	fx["approve"] = []string{"record"}
	e := engineIn(t, home, map[string]def{"fx": fx}, nil, &Options{Store: db, StoreKey: testStoreKey})
	must(t, e, `{"tool": "echo", "server": "fx", "args": {"text": "`+canary+`"}}`)
	handle(t, e, `{"tool": "record", "server": "fx", "args": {"file": "`+canary+`", "then": ""}}`)

	recs := readStoreAudit(t, db, policy.Filter{Server: "fx"}).Records
	if len(recs) != 3 {
		t.Fatalf("%d records, want the echo call, the approval and the record call: %+v", len(recs), recs)
	}
	echo, ask, rec := recs[0], recs[1], recs[2]
	if echo.Event != policy.EventCall || echo.Tool != "echo" || echo.Outcome != "ok" || echo.ArgsBytes == 0 || echo.ResultBytes == 0 {
		t.Errorf("echo record %+v", echo)
	}
	if ask.Event != policy.EventApproval || ask.Decision != "deny" || rec.Decision != "denied" || rec.Outcome != "not-sent" {
		t.Errorf("approval %+v, denied call %+v", ask, rec)
	}
	for i, r := range recs {
		if r.Session != echo.Session || r.Seq != int64(i+1) || r.Replica == "" || r.Replica != echo.Replica || r.ID == 0 {
			t.Errorf("record %d: session %q seq %d replica %q id %d; want one session numbered from 1, one replica", i, r.Session, r.Seq, r.Replica, r.ID)
		}
	}
	var dump string
	if err := db.QueryRowContext(t.Context(), `SELECT string_agg(a::text, E'\n') FROM switchboard_audit a`).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dump, canary) {
		t.Errorf("the canary argument is in the shared store without payloads:\n%s", dump)
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "state", "switchboard", policy.AuditFile)); err == nil {
		t.Errorf("an audit file was written beside the shared store")
	}
}

// TestAuditReplicasPostgres: two engines (replicas), each on its own
// connections to one database, serve concurrent sessions: every call is
// in the trail exactly once (each call's argument is unique, and kept with
// payloads), and each session's records read back in its order.
func TestAuditReplicasPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	const replicas, sessions, calls = 2, 3, 8
	engines := make([]*Engine, replicas)
	for i := range engines {
		db, err := pgstore.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		engines[i] = engineIn(t, t.TempDir(), map[string]def{"fx": fixture("good")},
			map[string]any{"audit": map[string]any{"payloads": true}}, &Options{Store: db, StoreKey: testStoreKey})
	}
	var wg sync.WaitGroup
	for i, e := range engines {
		for s := range sessions {
			ses := e.NewSession()
			wg.Go(func() {
				for c := range calls {
					text := fmt.Sprintf("r%d-s%d-c%d", i, s, c)
					if r := ses.Handle(t.Context(), json.RawMessage(`{"tool":"echo","server":"fx","args":{"text":"`+text+`"}}`)); r.IsError {
						t.Errorf("%s: %s", text, r.Text)
					}
				}
			})
		}
	}
	wg.Wait()
	db, err := pgstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tr := readStoreAudit(t, db, policy.Filter{})
	seen := map[string]int{}
	last := map[[2]string]int64{}
	replicaNames := map[string]bool{}
	for _, r := range tr.Records {
		var args struct{ Text string }
		json.Unmarshal(r.Args, &args)
		seen[args.Text]++
		k := [2]string{r.Replica, r.Session}
		if r.Seq != last[k]+1 || !strings.HasSuffix(args.Text, fmt.Sprintf("-c%d", r.Seq-1)) {
			t.Errorf("session %v: record %d (%s) after %d; want its calls in order", k, r.Seq, args.Text, last[k])
		}
		last[k] = r.Seq
		replicaNames[r.Replica] = true
	}
	if len(tr.Records) != replicas*sessions*calls || len(seen) != replicas*sessions*calls || tr.Missing != 0 {
		t.Errorf("%d records of %d calls, %d missing; want %d, each once", len(tr.Records), len(seen), tr.Missing, replicas*sessions*calls)
	}
	if len(replicaNames) != replicas || len(last) != replicas*sessions {
		t.Errorf("%d replicas and %d sessions in the trail; want %d and %d", len(replicaNames), len(last), replicas, replicas*sessions)
	}
}

// TestAuditWriteFailurePostgres: when the shared store refuses a record,
// the call goes on and answers; the failure is counted for metrics and
// logged as a warning that says why, once for a run of failures.
func TestAuditWriteFailurePostgres(t *testing.T) {
	db := pgtest.DB(t)
	var log syncBuffer
	e := engineIn(t, t.TempDir(), map[string]def{"fx": fixture("good")}, nil,
		&Options{Store: db, StoreKey: testStoreKey, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	must(t, e, `{"tool": "echo", "server": "fx", "args": {"text": "kept"}}`)
	if n := e.AuditFailures(); n != 0 {
		t.Fatalf("%d failures before the table went", n)
	}
	if _, err := db.ExecContext(context.Background(), `DROP TABLE switchboard_audit`); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		must(t, e, `{"tool": "echo", "server": "fx", "args": {"text": "lost"}}`)
	}
	if n := e.AuditFailures(); n != 2 {
		t.Errorf("%d failures counted, want 2", n)
	}
	out := log.String()
	if strings.Count(out, "audit trail: a record was not written") != 1 || !strings.Contains(out, "switchboard_audit") || !strings.Contains(out, "level=WARN") {
		t.Errorf("log: want one warning naming the cause:\n%s", out)
	}
}

// TestAuditFailureWarnings: failed audit writes are all counted, and
// logged at most once a minute: the first at once, the rest with the next
// failure or success a minute after the last warning.
func TestAuditFailureWarnings(t *testing.T) {
	var f auditFailures
	fail := errors.New("the database is away")
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	type want struct {
		n    uint64
		what int
	}
	for i, step := range []struct {
		at   time.Duration
		err  error
		want want
	}{
		{0, nil, want{0, auditQuiet}},
		{time.Second, fail, want{1, auditFailed}},
		{2 * time.Second, fail, want{0, auditQuiet}},
		{3 * time.Second, nil, want{0, auditQuiet}},
		{62 * time.Second, nil, want{1, auditRecovered}},
		{63 * time.Second, nil, want{0, auditQuiet}},
		{64 * time.Second, fail, want{0, auditQuiet}},
		{200 * time.Second, fail, want{2, auditFailed}},
		{201 * time.Second, nil, want{0, auditQuiet}},
	} {
		n, what := f.note(step.err, t0.Add(step.at))
		if (want{n, what}) != step.want {
			t.Errorf("step %d (%v, err %v): got %d lost, kind %d; want %+v", i, step.at, step.err, n, what, step.want)
		}
	}
	if got := f.total.Load(); got != 4 {
		t.Errorf("%d failures counted, want 4", got)
	}
}
