package policy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// sink is one kind of audit trail under test.
type sink struct {
	name string
	// open returns a new, empty trail and a function that returns all
	// it stored, as text.
	open func(t *testing.T, payloads bool) (Auditor, func() string)
	// keepsSeq: the trail keeps ID, Replica and Seq.
	keepsSeq bool
}

func sinks() []sink {
	return []sink{
		{name: "file", open: func(t *testing.T, payloads bool) (Auditor, func() string) {
			path := filepath.Join(t.TempDir(), AuditFile)
			a := OpenAudit(path, 0, payloads)
			t.Cleanup(func() { a.Close() })
			return a, func() string {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				return string(data)
			}
		}},
		{name: "postgres", keepsSeq: true, open: func(t *testing.T, payloads bool) (Auditor, func() string) {
			db := pgtest.DB(t)
			a, err := OpenPostgresAudit(t.Context(), db, &PostgresOptions{Payloads: payloads, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			return a, func() string {
				var all string
				if err := db.QueryRowContext(context.Background(), `SELECT coalesce(string_agg(a::text, E'\n'), '') FROM `+auditTable+` a`).Scan(&all); err != nil {
					t.Fatal(err)
				}
				return all
			}
		}},
	}
}

// eachSink runs test on every kind of trail.
func eachSink(t *testing.T, test func(t *testing.T, s sink)) {
	for _, s := range sinks() {
		t.Run(s.name, func(t *testing.T) { test(t, s) })
	}
}

// session writes records as the engine does: numbered in their session.
type session struct {
	id  string
	seq int64
}

func (s *session) next(r Record) Record {
	s.seq++
	r.Session, r.Seq = s.id, s.seq
	return r
}

var t0 = time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)

// sample is a trail of two sessions over two servers, a minute apart, in
// the order written.
func sample() []Record {
	a, b := &session{id: "41-1"}, &session{id: "41-2"}
	return []Record{
		a.next(Record{Time: t0, Event: EventCall, Server: "fs", Tool: "read_file", Decision: "allowed", DurationMs: 3.25, Outcome: "ok", ArgsBytes: 20, ResultBytes: 91}),
		b.next(Record{Time: t0.Add(time.Minute), Event: EventApproval, Server: "gh", Tool: "merge_pr", Decision: "deny", Rule: "config.json:4: mcpServers.gh.approve", Why: "there is no one to ask", DurationMs: 0.5}),
		b.next(Record{Time: t0.Add(2 * time.Minute), Event: EventCall, Server: "gh", Tool: "merge_pr", Decision: "denied", Outcome: "not-sent", Why: "denied", ArgsBytes: 7}),
		a.next(Record{Time: t0.Add(3 * time.Minute), Event: EventCall, Server: "fs", Tool: "write_file", Decision: "allowed", DurationMs: 1.5, Outcome: "tool-error", ArgsBytes: 33, ResultBytes: 12}),
		{Time: t0.Add(4 * time.Minute), Seq: 1, Event: EventQuarantine, Server: "gh", Tool: "list", Why: "its description changed"},
	}
}

func writeAll(t *testing.T, a Auditor, recs []Record) {
	t.Helper()
	for _, r := range recs {
		if err := a.Write(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
}

// stored is what a trail gives back of recs: the file keeps no ID,
// Replica or Seq; the store adds ID and Replica (compared apart).
func stored(s sink, recs []Record) []Record {
	out := make([]Record, len(recs))
	for i, r := range recs {
		if !s.keepsSeq {
			r.Seq = 0
		}
		out[i] = r
	}
	return out
}

var ignoreStoreFields = cmpopts.IgnoreFields(Record{}, "ID", "Replica")

// TestAuditSinkEntries: what is written reads back whole, in the order
// written, with IDs rising and one replica for a trail that keeps them.
func TestAuditSinkEntries(t *testing.T) {
	eachSink(t, func(t *testing.T, s sink) {
		a, _ := s.open(t, false)
		want := sample()
		writeAll(t, a, want)
		got, err := a.Read(t.Context(), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(stored(s, want), got.Records, ignoreStoreFields); diff != "" {
			t.Errorf("records read back (-want +got):\n%s", diff)
		}
		if got.Unreadable != 0 || got.Missing != 0 {
			t.Errorf("%d unreadable, %d missing; want none", got.Unreadable, got.Missing)
		}
		for i, r := range got.Records {
			switch {
			case !s.keepsSeq && (r.ID != 0 || r.Replica != ""):
				t.Errorf("record %d: id %d, replica %q in the file", i, r.ID, r.Replica)
			case s.keepsSeq && (r.Replica != a.(*PostgresAuditor).Replica() || i > 0 && r.ID <= got.Records[i-1].ID):
				t.Errorf("record %d: id %d after %d, replica %q; want rising ids of replica %q", i, r.ID, got.Records[max(i-1, 0)].ID, r.Replica, a.(*PostgresAuditor).Replica())
			}
		}
	})
}

// TestAuditSinkFilters: --server and --since select the same records of
// either trail.
func TestAuditSinkFilters(t *testing.T) {
	eachSink(t, func(t *testing.T, s sink) {
		a, _ := s.open(t, false)
		all := sample()
		writeAll(t, a, all)
		for _, c := range []struct {
			name string
			f    Filter
			want []int
		}{
			{"server", Filter{Server: "gh"}, []int{1, 2, 4}},
			{"since", Filter{Since: t0.Add(2 * time.Minute)}, []int{2, 3, 4}},
			{"both", Filter{Server: "fs", Since: t0.Add(time.Second)}, []int{3}},
			{"none match", Filter{Server: "nope"}, nil},
		} {
			got, err := a.Read(t.Context(), c.f)
			if err != nil {
				t.Fatal(err)
			}
			var want []Record
			for _, i := range c.want {
				want = append(want, all[i])
			}
			if diff := cmp.Diff(stored(s, want), got.Records, ignoreStoreFields, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: (-want +got):\n%s", c.name, diff)
			}
		}
	})
}

// TestAuditSinkPayloads: without payloads no argument, result or error
// text of a call is stored anywhere in the trail (the canary is nowhere in
// it); with them, both read back. Sizes are kept either way.
func TestAuditSinkPayloads(t *testing.T) {
	const canary = "canary-5e1d07"
	eachSink(t, func(t *testing.T, s sink) {
		for _, payloads := range []bool{false, true} {
			a, dump := s.open(t, payloads)
			ses := &session{id: "7-1"}
			r := ses.next(Record{Time: t0, Event: EventCall, Server: "s", Tool: "t", Decision: "allowed", Outcome: "ok",
				Args: json.RawMessage(`{"k":"` + canary + `"}`), ArgsBytes: 22,
				Result: json.RawMessage(`{"content":[{"type":"text","text":"` + canary + `"}]}`), ResultBytes: 13})
			writeAll(t, a, []Record{r})
			if got := strings.Contains(dump(), canary); got != payloads {
				t.Errorf("payloads %v: the canary is in the trail: %v\n%s", payloads, got, dump())
			}
			got, err := a.Read(t.Context(), Filter{})
			if err != nil || len(got.Records) != 1 {
				t.Fatalf("payloads %v: read %+v, %v; want one record", payloads, got, err)
			}
			back := got.Records[0]
			if back.ArgsBytes != 22 || back.ResultBytes != 13 {
				t.Errorf("payloads %v: sizes %d, %d; want 22, 13", payloads, back.ArgsBytes, back.ResultBytes)
			}
			if payloads && (!jsonEqual(back.Args, r.Args) || !jsonEqual(back.Result, r.Result)) {
				t.Errorf("payloads read back as %s and %s; want %s and %s", back.Args, back.Result, r.Args, r.Result)
			}
			if !payloads && (back.Args != nil || back.Result != nil) {
				t.Errorf("without payloads, read back %s and %s", back.Args, back.Result)
			}
		}
	})
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
}

// TestAuditFileFormat: the file's lines are as they were before the shared
// store: no id, replica or seq.
func TestAuditFileFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), AuditFile)
	a := OpenAudit(path, 0, false)
	defer a.Close()
	r := Record{ID: 9, Replica: "h:1:ab", Seq: 2, Time: time.Date(2026, 12, 1, 17, 10, 3, 500_000_000, time.UTC), Session: "4121-2",
		Event: EventCall, Server: "fs", Tool: "write_file", Decision: "allowed", DurationMs: 3.1, Outcome: "ok", ArgsBytes: 48, ResultBytes: 91}
	writeAll(t, a, []Record{r})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"time":"2026-12-01T17:10:03.5Z","session":"4121-2","event":"call","server":"fs","tool":"write_file","decision":"allowed","durationMs":3.1,"outcome":"ok","argsBytes":48,"resultBytes":91}` + "\n"
	if string(data) != want {
		t.Errorf("line\n%s\nwant\n%s", data, want)
	}
}

// TestAuditSinkScript: the hash of the code-mode script that made a call
// or asked an approval reads back from either trail; other records have
// none.
func TestAuditSinkScript(t *testing.T) {
	hash := strings.Repeat("5c", 32)
	eachSink(t, func(t *testing.T, s sink) {
		a, _ := s.open(t, false)
		ses := &session{id: "31-1"}
		want := []Record{
			ses.next(Record{Time: t0, Event: EventApproval, Server: "fs", Tool: "write_file", Decision: "allow-once", Script: hash}),
			ses.next(Record{Time: t0, Event: EventCall, Server: "fs", Tool: "write_file", Decision: "allowed", Outcome: "ok", ArgsBytes: 30, ResultBytes: 12, Script: hash}),
			ses.next(Record{Time: t0, Event: EventCall, Server: "fs", Tool: "read_file", Decision: "allowed", Outcome: "ok", ArgsBytes: 20, ResultBytes: 9}),
		}
		writeAll(t, a, want)
		got, err := a.Read(t.Context(), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(stored(s, want), got.Records, ignoreStoreFields); diff != "" {
			t.Errorf("records read back (-want +got):\n%s", diff)
		}
	})
}

// TestAuditSinkUser: the user, their token's client and the MCP client
// read back from either trail (the shared store's columns came by a
// migration step), and Filter.User keeps one user's records.
func TestAuditSinkUser(t *testing.T) {
	eachSink(t, func(t *testing.T, s sink) {
		a, _ := s.open(t, false)
		alice, bob := &session{id: "41-1"}, &session{id: "41-2"}
		recs := []Record{
			alice.next(Record{Time: t0, Event: EventCall, Server: "gh", Tool: "get_issue", Decision: "allowed", Outcome: "ok", User: "alice", ClientID: "cli", Client: "claude"}),
			bob.next(Record{Time: t0, Event: EventCall, Server: "gh", Tool: "get_issue", Decision: "allowed", Outcome: "ok", User: "bob", ClientID: "robot", Client: "agent"}),
			alice.next(Record{Time: t0, Event: EventCall, Server: "fs", Tool: "read_file", Decision: "denied", Outcome: "not-sent", User: "alice", ClientID: "cli", Client: "claude"}),
		}
		writeAll(t, a, recs)
		got, err := a.Read(t.Context(), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(stored(s, recs), got.Records, ignoreStoreFields); diff != "" {
			t.Errorf("records read back (-want +got):\n%s", diff)
		}
		got, err = a.Read(t.Context(), Filter{User: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(stored(s, []Record{recs[0], recs[2]}), got.Records, ignoreStoreFields); diff != "" {
			t.Errorf("alice's records (-want +got):\n%s", diff)
		}
	})
}
