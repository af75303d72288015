package policy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// openPG opens a trail of the shared store in db, with a bound far above
// any write of a busy machine.
func openPG(t *testing.T, db *sql.DB, replica string) *PostgresAuditor {
	t.Helper()
	a, err := OpenPostgresAudit(t.Context(), db, &PostgresOptions{Replica: replica, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPostgresAuditSessionOrder: records of a session that reached the
// store out of order (two calls of one session racing) read back in the
// order of their Seq, in the places the session's records hold; a number
// never written counts as missing.
func TestPostgresAuditSessionOrder(t *testing.T) {
	a := openPG(t, pgtest.DB(t), "r1")
	// The writer's clock says nothing of the order: it goes backwards.
	at := func(i int) time.Time { return t0.Add(-time.Duration(i) * time.Minute) }
	writeAll(t, a, []Record{
		{Time: at(0), Session: "s", Seq: 2, Event: EventCall, Server: "x", Tool: "b"},
		{Time: at(1), Session: "o", Seq: 1, Event: EventCall, Server: "x", Tool: "other"},
		{Time: at(2), Session: "s", Seq: 1, Event: EventCall, Server: "x", Tool: "a"},
		{Time: at(3), Session: "s", Seq: 3, Event: EventCall, Server: "x", Tool: "c"},
		{Time: at(4), Session: "s", Seq: 5, Event: EventCall, Server: "x", Tool: "e"},
	})
	got, err := a.Read(t.Context(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, r := range got.Records {
		tools = append(tools, r.Tool)
	}
	if strings.Join(tools, " ") != "a other b c e" || got.Missing != 1 {
		t.Errorf("read %v, %d missing; want a other b c e, and seq 4 missing", tools, got.Missing)
	}
	if byServer, err := a.Read(t.Context(), Filter{Server: "x"}); err != nil || byServer.Missing != 0 {
		t.Errorf("with --server: %d missing, %v; want none counted", byServer.Missing, err)
	}
}

// TestPostgresAuditReplicas: two replicas, each with its own connections to
// one database and its own clock, open the trail at once (the table is
// made once) and write interleaved sessions concurrently, under the same
// session names (two processes of pid 1): every record is stored exactly
// once and each session reads back in its order.
func TestPostgresAuditReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	const replicas, sessions, perSession = 2, 4, 40
	auditors := make([]*PostgresAuditor, replicas)
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	for i := range replicas {
		wg.Go(func() {
			db, err := pgstore.Open(t.Context(), dsn)
			if err != nil {
				errs[i] = err
				return
			}
			t.Cleanup(func() { db.Close() })
			auditors[i], errs[i] = OpenPostgresAudit(t.Context(), db, &PostgresOptions{Timeout: time.Minute})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if auditors[0].Replica() == auditors[1].Replica() {
		t.Fatalf("two replicas named %q", auditors[0].Replica())
	}
	writeErrs := make(chan error, replicas*sessions*perSession)
	for i, a := range auditors {
		skew := time.Duration(i) * -time.Hour // replica 1's clock is an hour behind
		for s := range sessions {
			wg.Go(func() {
				for n := 1; n <= perSession; n++ {
					r := Record{Time: time.Now().Add(skew), Session: fmt.Sprintf("1-%d", s+1), Seq: int64(n), Event: EventCall, Server: "srv", Tool: fmt.Sprint(n)}
					if err := a.Write(t.Context(), r); err != nil {
						writeErrs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	close(writeErrs)
	for err := range writeErrs {
		t.Error(err)
	}
	got, err := auditors[0].Read(t.Context(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Records) != replicas*sessions*perSession || got.Missing != 0 {
		t.Fatalf("read %d records, %d missing; want %d, none missing", len(got.Records), got.Missing, replicas*sessions*perSession)
	}
	last := map[sessionKey]int64{}
	for _, r := range got.Records {
		k := sessionKey{r.Replica, r.Session}
		if r.Seq != last[k]+1 || r.Tool != fmt.Sprint(r.Seq) {
			t.Fatalf("%s of %s: record %d (tool %s) after %d; want each once, in order", r.Session, r.Replica, r.Seq, r.Tool, last[k])
		}
		last[k] = r.Seq
	}
	if len(last) != replicas*sessions {
		t.Errorf("%d sessions read back, want %d", len(last), replicas*sessions)
	}
	v, err := pgstore.Versions(t.Context(), auditors[0].db)
	if err != nil || v["audit"] != len(auditSteps) {
		t.Errorf("schema versions %v, %v; want audit at %d", v, err, len(auditSteps))
	}
}

// TestPostgresAuditTimeout: a write to a database that does not answer
// (its table locked by another session) returns an error naming the bound
// once the bound has passed, even under a cancelled context; once the
// database answers again, writes go through and nothing is stored twice.
func TestPostgresAuditTimeout(t *testing.T) {
	db := pgtest.DB(t)
	a, err := OpenPostgresAudit(t.Context(), db, &PostgresOptions{Replica: "r", Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(t.Context(), `LOCK TABLE `+auditTable+` IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	err = a.Write(cancelled, Record{Session: "s", Seq: 1, Event: EventCall, Server: "x"})
	if err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Errorf("write to a locked table: %v; want no answer within 200ms", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	a.opts.Timeout = time.Minute
	if err := a.Write(t.Context(), Record{Session: "s", Seq: 2, Event: EventCall, Server: "x"}); err != nil {
		t.Fatalf("write after the lock: %v", err)
	}
	got, err := a.Read(t.Context(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// The first write may have gone through once the lock went: whether it
	// did is the database's business, but never twice.
	if n := len(got.Records); n < 1 || n > 2 || got.Records[n-1].Seq != 2 {
		t.Errorf("read %+v; want seq 2, after seq 1 or alone", got.Records)
	}
}

// TestPostgresAuditNeedsSeq: a record without its number in its session is
// refused, not stored where it cannot be ordered.
func TestPostgresAuditNeedsSeq(t *testing.T) {
	a := openPG(t, pgtest.DB(t), "r")
	if err := a.Write(t.Context(), Record{Session: "s", Event: EventCall, Server: "x"}); !errors.Is(err, ErrNoSeq) {
		t.Errorf("write without seq: %v; want ErrNoSeq", err)
	}
	if err := a.Write(t.Context(), Record{Session: "s", Seq: 1, Event: EventCall, Server: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Write(t.Context(), Record{Session: "s", Seq: 1, Event: EventCall, Server: "x"}); err == nil {
		t.Errorf("a second record 1 of one session was stored")
	}
}
