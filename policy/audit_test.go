package policy

import (
	"os"
	"path/filepath"
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
