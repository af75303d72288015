package privfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var (
	errBusy   = errors.New("busy")
	errDenied = errors.New("denied")
)

// TestRetry: a transient failure is tried again, with growing pauses, until
// it succeeds or the wait is spent; any other failure ends at once.
func TestRetry(t *testing.T) {
	tests := []struct {
		name      string
		fails     []error // what the tries return before succeeding
		wait      time.Duration
		wantErr   error
		wantTries int
	}{
		{"first try", nil, time.Second, nil, 1},
		{"busy twice", []error{errBusy, errBusy}, time.Second, nil, 3},
		{"denied", []error{errDenied, errBusy}, time.Second, errDenied, 1},
		{"busy past the wait", []error{errBusy, errBusy, errBusy, errBusy, errBusy}, 3 * time.Millisecond, errBusy, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tries := 0
			var slept []time.Duration
			err := retry(func() error {
				tries++
				if tries <= len(tt.fails) {
					return tt.fails[tries-1]
				}
				return nil
			}, func(err error) bool { return err == errBusy }, tt.wait, func(d time.Duration) { slept = append(slept, d) })
			if err != tt.wantErr || tries != tt.wantTries {
				t.Errorf("retry = %v after %d tries, want %v after %d", err, tries, tt.wantErr, tt.wantTries)
			}
			for i := 1; i < len(slept); i++ {
				if slept[i] < slept[i-1] {
					t.Errorf("pauses %v shrink", slept)
				}
			}
		})
	}
}

func TestOwnerOnlySDDL(t *testing.T) {
	got := ownerOnlySDDL("S-1-5-21-1-2-3-1001")
	if want := "D:P(A;OICI;FA;;;S-1-5-21-1-2-3-1001)"; got != want {
		t.Errorf("ownerOnlySDDL = %q, want %q", got, want)
	}
}

// TestLock: two opens of one file exclude each other, in one process, and
// the lock is free again once its holder unlocks.
func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("TryLock of a free file = %v, %v", ok, err)
	}
	if ok, err := TryLock(b); ok || err != nil {
		t.Fatalf("TryLock of a held file = %v, %v; want false, nil", ok, err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(b); !ok || err != nil {
		t.Fatalf("TryLock after Unlock = %v, %v", ok, err)
	}
}

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "new"), filepath.Join(dir, "old")
	for path, data := range map[string]string{from: "new", to: "old"} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := Replace(from, to); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(to); string(got) != "new" || err != nil {
		t.Errorf("after Replace the file holds %q, %v; want the new content", got, err)
	}
	if _, err := os.Stat(from); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the replacing file is still there: %v", err)
	}
}

func TestMkdirAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() || st.Mode().Perm()&0o077 != 0 {
		t.Errorf("MkdirAll made %v, %v; want a directory closed to others", st.Mode(), err)
	}
}

func TestTempName(t *testing.T) {
	for _, tt := range []struct {
		uid  int
		want string
	}{{1000, "switchboard-spill-1000"}, {0, "switchboard-spill-0"}, {-1, "switchboard-spill"}} {
		if got := tempName("switchboard-spill", tt.uid); got != tt.want {
			t.Errorf("tempName(uid %d) = %q, want %q", tt.uid, got, tt.want)
		}
	}
}
