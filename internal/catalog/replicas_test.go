package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/embedtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// Tests of replicas sharing one PostgreSQL catalog: each replica is a
// Catalog on a connection pool of its own, as in separate processes.

// replicas opens n catalogs on one new database.
func replicas(t *testing.T, n int) []*Catalog {
	t.Helper()
	dsn := pgtest.DSN(t)
	out := make([]*Catalog, n)
	for i := range out {
		out[i] = openPostgresDSN(t, dsn)
	}
	return out
}

// TestReplicaSearchFollowsWrites: a replica's search index, built before
// another replica writes, follows the write (the generation moved on).
func TestReplicaSearchFollowsWrites(t *testing.T) {
	r := replicas(t, 2)
	ctx := context.Background()
	if res, err := r[1].Search(ctx, "forecast", SearchOptions{}); err != nil || len(res.Results) != 0 {
		t.Fatalf("search before any write = %v, %v; want nothing", res.Results, err)
	}
	if err := r[0].Put(ctx, &Entry{Server: "weather", Hash: "1", Tools: []*mcp.Tool{{Name: "get_forecast", Description: "Get the weather forecast."}}}); err != nil {
		t.Fatal(err)
	}
	res, err := r[1].Search(ctx, "forecast", SearchOptions{})
	if err != nil || len(res.Results) != 1 || res.Results[0].Name != "get_forecast" {
		t.Fatalf("search on the other replica after the write = %v, %v; want get_forecast", res.Results, err)
	}
	if err := r[0].Remove(ctx, "weather"); err != nil {
		t.Fatal(err)
	}
	if res, err := r[1].Search(ctx, "forecast", SearchOptions{}); err != nil || len(res.Results) != 0 {
		t.Fatalf("search on the other replica after the removal = %v, %v; want nothing", res.Results, err)
	}
}

// TestReplicasWriteAtOnce: replicas that store entries and update the same
// server's pins at once lose nothing. Each pin update reads a counter and
// writes it plus one, so an update that did not see the one before it
// would show in the final count; every write counts one generation.
func TestReplicasWriteAtOnce(t *testing.T) {
	r := replicas(t, 2)
	ctx := context.Background()
	start, err := r[0].generation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const perReplica = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*2*perReplica)
	for i, c := range r {
		for j := range perReplica {
			wg.Go(func() {
				e := &Entry{Server: fmt.Sprintf("r%d_s%d", i, j), Hash: "1", Tools: []*mcp.Tool{{Name: fmt.Sprintf("tool_%d_%d", i, j)}}}
				errs <- c.Put(ctx, e)
			})
			wg.Go(func() {
				errs <- c.UpdatePins(ctx, "shared", func(stored map[string]Pin) []Pin {
					p := stored["counter"]
					n, _ := strconv.Atoi(p.Def)
					return []Pin{{Server: "shared", Tool: "counter", Def: strconv.Itoa(n + 1)}}
				})
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	pins, err := r[1].Pins(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if got := pins["counter"].Def; got != strconv.Itoa(2*perReplica) {
		t.Errorf("pin counter = %q after %d updates, want %d", got, 2*perReplica, 2*perReplica)
	}
	for i, c := range r {
		servers, err := c.Servers(ctx)
		if err != nil || len(servers) != 2*perReplica {
			t.Errorf("replica %d: %d servers, %v; want %d", i, len(servers), err, 2*perReplica)
		}
		res, err := c.Search(ctx, "tool", SearchOptions{Limit: 100})
		if err != nil || len(res.Results) != 2*perReplica {
			t.Errorf("replica %d: search found %d tools, %v; want %d", i, len(res.Results), err, 2*perReplica)
		}
	}
	if end, err := r[1].generation(ctx); err != nil || end-start != 2*perReplica {
		t.Errorf("generation moved by %d, %v; want %d, one per Put", end-start, err, 2*perReplica)
	}
}

// TestReplicasAcceptOnce: two replicas accepting the same pending
// definition at once: one accepts it, the other finds nothing pending.
func TestReplicasAcceptOnce(t *testing.T) {
	r := replicas(t, 2)
	ctx := context.Background()
	if err := r[0].SetPins(ctx, []Pin{{Server: "s", Tool: "t", Hash: "h1", Def: "1", Pending: "h2", PendingDef: "2"}}); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, len(r))
	var wg sync.WaitGroup
	for i, c := range r {
		wg.Go(func() { _, errs[i] = c.Accept(ctx, "s", "t", "h2") })
	}
	wg.Wait()
	var accepted, notPending int
	for _, err := range errs {
		switch {
		case err == nil:
			accepted++
		case errors.Is(err, ErrNotPending):
			notPending++
		default:
			t.Error(err)
		}
	}
	if accepted != 1 || notPending != 1 {
		t.Errorf("accepted %d times, not pending %d; want once each (%v)", accepted, notPending, errs)
	}
	if p, err := r[1].Pins(ctx, "s"); err != nil || p["t"].Hash != "h2" || p["t"].Pending != "" {
		t.Errorf("pin after accepting = %+v, %v; want h2 accepted", p["t"], err)
	}
}

// TestReplicaEmbeddingsNoneSkipped: a reader follows the embeddings' ids,
// loading those above the last it saw. Replica A inserts a vector and
// stops before committing; replica B writes another meanwhile; a reader
// loads; then A commits. Had B's row (a higher id) become visible before
// A's, the reader would have moved past A's id and never loaded it.
func TestReplicaEmbeddingsNoneSkipped(t *testing.T) {
	r := replicas(t, 3)
	a, b, reader := r[0], r[1], r[2]
	ctx := context.Background()
	fillFixture(t, a)
	items, err := a.Unembedded(ctx, "m", nil)
	if err != nil || len(items) < 2 {
		t.Fatalf("Unembedded = %d items, %v; want at least 2", len(items), err)
	}
	vec := func(it Embeddable) [][]float32 { return [][]float32{embedtest.Vector(it.Text)} }
	ix, err := reader.currentIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reader.currentVectors(ctx, ix, "m"); err != nil {
		t.Fatal(err)
	}

	inserted, commit := make(chan struct{}), make(chan struct{})
	a.beforeCommit = func() { close(inserted); <-commit }
	aDone, bDone := make(chan error, 1), make(chan error, 1)
	go func() { aDone <- a.PutEmbeddings(ctx, "m", items[:1], vec(items[0])) }()
	<-inserted
	go func() { bDone <- b.PutEmbeddings(ctx, "m", items[1:2], vec(items[1])) }()
	// B either waits for A's turn to end or, were writers not taking
	// turns, commits.
	select {
	case err := <-bDone:
		bDone <- err
	case <-waitingForLock(t, a.db):
	}
	if _, err := reader.currentVectors(ctx, ix, "m"); err != nil {
		t.Fatal(err)
	}
	close(commit)
	for _, done := range []chan error{aDone, bDone} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	vv, err := reader.currentVectors(ctx, ix, "m")
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items[:2] {
		if _, ok := reader.vecs.byHash[it.hash]; !ok {
			t.Errorf("the reader never loaded the vector of %s/%s", it.Server, it.Name)
		}
	}
	if got := len(ix.docs) - sum(vv.missing); got != 2 {
		t.Errorf("%d tools have vectors, want 2", got)
	}
}

func sum(m map[string]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}

// waitingForLock returns a channel closed once a session of db's database
// waits for a lock, as PostgreSQL's activity view shows.
func waitingForLock(t *testing.T, db *sql.DB) <-chan struct{} {
	ch := make(chan struct{})
	ctx := t.Context()
	go func() {
		// PostgreSQL has no notification of a lock wait: poll its view.
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var n int
			err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
			if err != nil || n > 0 {
				close(ch)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return ch
}

// TestOpenPostgresTogether: replicas that start at once on a new database
// all open it; the tables are created once.
func TestOpenPostgresTogether(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			db, err := pgstore.Open(ctx, dsn)
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			c, err := OpenPostgres(ctx, db, testStoreKey)
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = c.Put(ctx, &Entry{Server: fmt.Sprintf("s%d", i), Hash: "1"})
			c.Close()
			// Close leaves the caller's database open.
			errs[i] = errors.Join(errs[i], db.PingContext(ctx))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	c := openPostgresDSN(t, dsn)
	if servers, err := c.Servers(ctx); err != nil || len(servers) != len(errs) {
		t.Errorf("%d servers, %v; want %d", len(servers), err, len(errs))
	}
}
