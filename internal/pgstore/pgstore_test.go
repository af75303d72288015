package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Replicas that start together run each migration step once, and each
// component's version is recorded apart.
func TestMigrateOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	steps := []string{
		`CREATE TABLE things (id INTEGER PRIMARY KEY)`,
		// A step that fails if it runs twice.
		`INSERT INTO things (id) VALUES (1)`,
	}
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := pgstore.Open(ctx, dsn) // a replica of its own
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			errs[i] = pgstore.Migrate(ctx, db, "things", steps)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
	}
	db, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM things`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows after five migrations: %d, %v; want 1", n, err)
	}
	if err := pgstore.Migrate(ctx, db, "other", steps[:1][:0]); err != nil {
		t.Fatal(err)
	}
	v, err := pgstore.Versions(ctx, db)
	if err != nil || v["things"] != 2 || len(v) != 1 {
		t.Fatalf("Versions = %v, %v; want things:2 only", v, err)
	}

	// A later version adds a step; an older replica refuses the newer tables.
	if err := pgstore.Migrate(ctx, db, "things", append(steps, `INSERT INTO things (id) VALUES (2)`)); err != nil {
		t.Fatal(err)
	}
	err = pgstore.Migrate(ctx, db, "things", steps)
	if !errors.Is(err, pgstore.ErrNewerSchema) || !strings.Contains(err.Error(), "version 3") {
		t.Fatalf("older replica: %v; want ErrNewerSchema naming version 3", err)
	}
}

// A failing step leaves the version where it was, and the next run tries it
// again.
func TestMigrateFailedStep(t *testing.T) {
	db := pgtest.DB(t)
	ctx := context.Background()
	bad := []string{`CREATE TABLE a (id INTEGER)`, `CREATE TABLE b (id NOSUCHTYPE)`}
	err := pgstore.Migrate(ctx, db, "c", bad)
	if err == nil || !strings.Contains(err.Error(), "to version 2") {
		t.Fatalf("Migrate = %v; want an error naming version 2", err)
	}
	good := []string{bad[0], `CREATE TABLE b (id INTEGER)`}
	if err := pgstore.Migrate(ctx, db, "c", good); err != nil {
		t.Fatal(err)
	}
	if v, _ := pgstore.Versions(ctx, db); v["c"] != 2 {
		t.Fatalf("version %d, want 2", v["c"])
	}
}

// Lock excludes across connections (replicas) and frees on unlock; a wait
// ends with its context, and the lock stays usable.
func TestLock(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	a, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	unlock, err := pgstore.Lock(ctx, a, "oauth/x")
	if err != nil {
		t.Fatal(err)
	}
	// Another key is free.
	u2, err := pgstore.Lock(ctx, b, "oauth/y")
	if err != nil {
		t.Fatal(err)
	}
	u2()

	// The same key waits until its context ends.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := pgstore.Lock(cctx, b, "oauth/x")
		done <- err
	}()
	pgtest.WaitLockWaiters(t, a, 1)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("Lock returned without the lock being free")
	}

	// After unlock, the other replica takes it.
	got := make(chan func(), 1)
	go func() {
		u, err := pgstore.Lock(ctx, b, "oauth/x")
		if err != nil {
			t.Error(err)
			close(got)
			return
		}
		got <- u
	}()
	pgtest.WaitLockWaiters(t, a, 1)
	select {
	case <-got:
		t.Fatal("took a held lock")
	default:
	}
	unlock()
	if u := <-got; u != nil {
		u()
	}
}

// Open's errors name where it tried, never the password.
func TestOpenError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := pgstore.Open(ctx, "postgres://alice:hunter2secret@127.0.0.1:1/teamdb?sslmode=disable&connect_timeout=5")
	if err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, "hunter2secret") || !strings.Contains(msg, "127.0.0.1:1") || !strings.Contains(msg, `"teamdb"`) || !strings.Contains(msg, `"alice"`) {
		t.Fatalf("error %q: want host, port, database and user, and no password", msg)
	}
	_, err = pgstore.Open(ctx, "postgres://bob:pw@[::1/x")
	if err == nil || strings.Contains(err.Error(), "pw") {
		t.Fatalf("bad URL: %v", err)
	}
}
