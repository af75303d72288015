// Package catalog stores what each MCP server offers — tools, resources,
// resource templates, prompts and instructions — and searches its tools.
//
// The catalog is a SQLite file (pure Go, no cgo) that several processes may
// use at once: a CLI and a long-running serve process share one file. The
// database runs in WAL mode with a busy timeout, and every write is one
// immediate transaction, so readers never see half of a server's entry.
// Replicas that share a PostgreSQL database keep the catalog there instead
// (see [OpenPostgres]), through the same code: writers on every replica
// take turns, and every replica's search follows the others' writes.
//
// Each server's entry is keyed by the server's name and a hash of its
// definition, computed by the caller. An entry stored under another hash is
// stale: [Catalog.Get] does not return it, a search given the current
// hashes ([SearchOptions.Hashes]) skips it, and [Catalog.Prune] removes it.
//
// Search runs over an in-memory index built from all stored tools, rebuilt
// lazily when any process changes the catalog (see [Catalog.Search]). With
// embeddings computed outside (see [Catalog.Unembedded] and
// [Catalog.PutEmbeddings]) and the query's vector, search is hybrid.
package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Entry is everything stored about one server.
type Entry struct {
	Server string // the server's name
	Hash   string // the hash of the server's definition, opaque to the catalog

	Tools             []*mcp.Tool
	Resources         []*mcp.Resource
	ResourceTemplates []*mcp.ResourceTemplate
	Prompts           []*mcp.Prompt
	Instructions      string

	// Keywords are extra search words for tools, keyed by tool name or by a
	// glob over tool names (path.Match syntax): the server's searchKeywords.
	Keywords map[string][]string

	FetchedAt time.Time // when the server was listed; stored to the millisecond
}

// ServerInfo summarises one stored entry.
type ServerInfo struct {
	Name      string
	Hash      string
	FetchedAt time.Time
	Tools     int
}

// Catalog is an open catalog: a file, or tables in a shared PostgreSQL
// database. Its methods are safe for concurrent use.
type Catalog struct {
	db       *sql.DB
	d        *dialect
	path     string
	pinKey   []byte      // signs the pins (in PostgreSQL; see OpenPostgres); nil for none
	schema   *fileSchema // of a file; nil in PostgreSQL
	borrowed bool        // db is the caller's: Close leaves it open

	closeOnce sync.Once
	closeErr  error

	// mu guards the search index and the vectors; index is rebuilt when
	// the catalog's generation, bumped by every write from any process,
	// moves on, and vecs loads the embeddings written since it last looked.
	mu    sync.Mutex
	index *index
	vecs  *vectors

	// writes has room for one writer: this process's writers take turns
	// here, waiting as long as their contexts allow, instead of in SQLite's
	// busy timeout, which a large write on a busy machine can outlast. The
	// busy timeout is left for writers in other processes.
	writes chan struct{}

	// beforeCommit, when set (by tests), is called in each write
	// transaction before it commits.
	beforeCommit func()
}

// writeTx runs f in a write transaction, in this process's turn to write,
// and commits it if f returns nil.
func (c *Catalog) writeTx(ctx context.Context, f func(*sql.Tx) error) error {
	unlock, err := c.lockWrites(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	tx, err := c.db.BeginTx(ctx, nil) // SQLite's immediate: the write lock is taken first
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if c.d.lockWrites != "" {
		if _, err := tx.ExecContext(ctx, c.d.q(c.d.lockWrites)); err != nil {
			return fmt.Errorf("waiting for the other replicas' writes: %w", err)
		}
	}
	if err := f(tx); err != nil {
		return err
	}
	if c.beforeCommit != nil {
		c.beforeCommit()
	}
	return tx.Commit()
}

// lockWrites waits for this process's turn to write, or for ctx to end.
func (c *Catalog) lockWrites(ctx context.Context) (unlock func(), err error) {
	select {
	case c.writes <- struct{}{}:
		return func() { <-c.writes }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// ErrNewerSchema reports a catalog or pins file written by a newer
// Switchboard.
var ErrNewerSchema = errors.New("written by a newer version of switchboard")

// busyTimeout bounds how long a statement waits for another process's write.
const busyTimeout = 10 * time.Second

// Open opens the catalog file at path, creating it (but not its directory)
// if needed, and brings its schema up to date.
func Open(path string) (*Catalog, error) { return open(path, busyTimeout) }

// open is Open with SQLite's busy timeout given (tests shorten it).
func open(path string, busy time.Duration) (*Catalog, error) {
	c, err := openFile(path, busy, catalogSchema)
	if err != nil {
		return nil, fmt.Errorf("opening catalog %s: %w", path, err)
	}
	return c, nil
}

// openFile opens the SQLite file at path, creating it (but not its
// directory) if needed, and brings it to schema fs.
func openFile(path string, busy time.Duration, fs *fileSchema) (*Catalog, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate") // writers take the lock up front: no upgrade deadlocks
	dsn := (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	c := &Catalog{db: db, d: sqliteDialect, path: path, schema: fs, writes: make(chan struct{}, 1)}
	if err := c.migrateRetrying(context.Background()); err != nil {
		db.Close()
		return nil, err
	}
	return c, nil
}

// migrateRetrying migrates, retrying while another process holds a lock
// that SQLite does not wait for by itself: switching a new file to WAL
// mode fails at once with SQLITE_BUSY when two processes create it
// together, busy timeout or not.
func (c *Catalog) migrateRetrying(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, busyTimeout)
	defer cancel()
	return retryBusy(ctx, c.migrate)
}

// retryBusy calls f until it returns nil or an error other than busy,
// backing off from 5ms to 200ms between calls. It gives up when ctx is
// done, returning the last busy error with ctx's error.
func retryBusy(ctx context.Context, f func(context.Context) error) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		err := f(ctx)
		if err == nil || !isBusy(err) {
			return err
		}
		timer.Reset(delay)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (still busy: %w)", context.Cause(ctx), err)
		case <-timer.C:
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED.
func isBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "SQLITE_LOCKED") || strings.Contains(msg, "database is locked")
}

// Close closes the catalog: its file, or nothing of the database given to
// OpenPostgres, which the caller closes. It is idempotent and safe to call
// concurrently; calls after the first return the first call's result.
func (c *Catalog) Close() error {
	c.closeOnce.Do(func() {
		if !c.borrowed {
			c.closeErr = c.db.Close()
		}
	})
	return c.closeErr
}

// Path returns the file the catalog was opened from; "" for a catalog in
// PostgreSQL.
func (c *Catalog) Path() string { return c.path }
