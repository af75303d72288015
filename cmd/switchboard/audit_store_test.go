package main

import (
	"crypto/rand"
	"encoding/base64"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/policy"
)

// TestStoreScripts runs testdata/store/*.txtar against a PostgreSQL
// database of their own: $DATABASE_URL names it and
// $SWITCHBOARD_STORE_KEY holds a key, for a configuration's
// settings.store. The audit trail there holds, before the scripts run,
// what two replicas wrote (seedAudit).
func TestStoreScripts(t *testing.T) {
	dsn := pgtest.DSN(t)
	seedAudit(t, dsn)
	key := make([]byte, 32)
	rand.Read(key)
	fixture, _, _ := testserver.Command(testserver.Good)
	testscript.Run(t, scriptParams("testdata/store", map[string]string{
		"FIXTURE":               fixture,
		"DATABASE_URL":          dsn,
		"SWITCHBOARD_STORE_KEY": base64.StdEncoding.EncodeToString(key),
	}))
}

// seedAudit writes the audit records of two replicas: web-1's session 1-1
// reaches the store out of order, and web-2's clock is an hour behind.
func seedAudit(t *testing.T, dsn string) {
	db, err := pgstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	for _, w := range []struct {
		replica string
		recs    []policy.Record
	}{
		{"web-1", []policy.Record{
			{Time: now.Add(-time.Minute), Session: "1-1", Seq: 2, Event: policy.EventCall, Server: "gh", Tool: "merge_pr", Decision: "denied", Outcome: "not-sent", Why: "denied by the user"},
			{Time: now.Add(-2 * time.Minute), Session: "1-1", Seq: 1, Event: policy.EventApproval, Server: "gh", Tool: "merge_pr", Decision: "deny"},
		}},
		{"web-2", []policy.Record{
			{Time: now.Add(-time.Hour), Session: "1-1", Seq: 1, Event: policy.EventCall, Server: "fs", Tool: "read_file", Decision: "allowed", Outcome: "ok", DurationMs: 2.5},
			{Time: now.Add(-48 * time.Hour), Session: "1-7", Seq: 1, Event: policy.EventCall, Server: "fs", Tool: "old", Decision: "allowed", Outcome: "ok"},
		}},
	} {
		a, err := policy.OpenPostgresAudit(t.Context(), db, &policy.PostgresOptions{Replica: w.replica, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range w.recs {
			if err := a.Write(t.Context(), r); err != nil {
				t.Fatal(err)
			}
		}
	}
}
