package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAuditRotation: the trail is rotated when it would pass its bound,
// keeps one rotated file, is mode 0600, and reads back oldest first.
func TestAuditRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", AuditFile)
	a := OpenAudit(path, 64<<10, false)
	defer a.Close()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 2000 // about 150 bytes each: several rotations
	for i := range n {
		if err := a.Write(t.Context(), Record{Time: start.Add(time.Duration(i) * time.Second), Event: EventCall, Server: "s", Tool: "t", Outcome: "ok", Why: strings.Repeat("w", 50)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{path, path + ".1"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 || st.Size() > 64<<10 {
			t.Errorf("%s: mode %v, size %d; want 0600 and at most 64 KiB", p, st.Mode().Perm(), st.Size())
		}
	}
	if _, err := os.Stat(path + ".2"); err == nil {
		t.Errorf("more than one rotated file is kept")
	}
	recs, skipped, err := ReadAudit(path, Filter{})
	if err != nil || skipped != 0 || len(recs) == 0 || len(recs) >= n {
		t.Fatalf("read %d records (%d skipped, %v); want some, fewer than %d after rotation", len(recs), skipped, err, n)
	}
	for i := 1; i < len(recs); i++ {
		if !recs[i].Time.After(recs[i-1].Time) {
			t.Fatalf("records out of order at %d", i)
		}
	}
	if last := recs[len(recs)-1].Time; !last.Equal(start.Add((n - 1) * time.Second)) {
		t.Errorf("last record at %v, want the last written", last)
	}
	since, _, _ := ReadAudit(path, Filter{Since: start.Add((n - 10) * time.Second)})
	other, _, _ := ReadAudit(path, Filter{Server: "other"})
	if len(since) != 10 || len(other) != 0 {
		t.Errorf("filters: %d since, %d of another server; want 10 and 0", len(since), len(other))
	}
}

// TestAuditConcurrent: writers of two auditors on one file (two processes)
// and of one auditor across goroutines lose no line and break none.
func TestAuditConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), AuditFile)
	a, b := OpenAudit(path, 32<<10, false), OpenAudit(path, 32<<10, false)
	defer a.Close()
	defer b.Close()
	var wg sync.WaitGroup
	for i := range 4 {
		w := a
		if i%2 == 1 {
			w = b
		}
		wg.Go(func() {
			for range 100 {
				w.Write(t.Context(), Record{Event: EventCall, Server: "s"})
			}
		})
	}
	wg.Wait()
	recs, skipped, err := ReadAudit(path, Filter{})
	if err != nil || skipped != 0 {
		t.Errorf("%d lines broken, %v", skipped, err)
	}
	if len(recs) == 0 || len(recs) > 400 {
		t.Errorf("%d records", len(recs))
	}
}

// TestAuditGroupCommit: records written at once by many goroutines of one
// auditor all reach the file, whole and each writer's in its order, and a
// batch that cannot be written fails every Write whose line it held.
func TestAuditGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), AuditFile)
	a := OpenAudit(path, 64<<20, false)
	const writers, each = 16, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := a.Write(t.Context(), Record{Event: EventCall, Server: "s", Tool: fmt.Sprint(w), ArgsBytes: i + 1}); err != nil {
					t.Error(err)
					return
				}
			}
			// Write returned: its line is in the file.
			recs, _, _ := ReadAudit(path, Filter{})
			if !slices.ContainsFunc(recs, func(r Record) bool { return r.Tool == fmt.Sprint(w) && r.ArgsBytes == each }) {
				t.Errorf("writer %d: its last record is not in the file after Write", w)
			}
		})
	}
	wg.Wait()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	recs, skipped, err := ReadAudit(path, Filter{})
	if err != nil || skipped != 0 || len(recs) != writers*each {
		t.Fatalf("read %d records (%d lines broken, %v), want %d", len(recs), skipped, err, writers*each)
	}
	last := map[string]int{}
	for _, r := range recs {
		if r.ArgsBytes != last[r.Tool]+1 {
			t.Fatalf("writer %s: record %d after %d", r.Tool, r.ArgsBytes, last[r.Tool])
		}
		last[r.Tool] = r.ArgsBytes
	}

	// A state directory that is a file: nothing can be written.
	blocker := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b := OpenAudit(filepath.Join(blocker, AuditFile), 0, false)
	defer b.Close()
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() { errs[w] = b.Write(t.Context(), Record{Event: EventCall, Server: "s"}) })
	}
	wg.Wait()
	for w, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "writing the audit trail") {
			t.Errorf("writer %d: %v, want the batch's error", w, err)
		}
	}
}
