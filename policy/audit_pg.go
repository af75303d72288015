package policy

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
)

// auditTable is the audit trail's table in the shared store.
const auditTable = "switchboard_audit"

// auditSteps are the audit trail's migrations (pgstore.Migrate): append
// only steps, never edit one that shipped.
//
// Each record is a row numbered by the database (id, the order rows
// arrived), with the replica that wrote it, its session and its number in
// the session: (replica, session, seq) is unique, so no record is stored
// twice. stored_at is the database's clock, for retention (docs/policy.md
// gives the DELETE that prunes); time is the writer's. args and result are
// json, not jsonb: kept as written, and jsonb refuses \u0000.
var auditSteps = []string{
	`CREATE TABLE ` + auditTable + ` (
		id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		stored_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
		time         TIMESTAMPTZ NOT NULL,
		replica      TEXT NOT NULL,
		session      TEXT NOT NULL,
		seq          BIGINT NOT NULL,
		event        TEXT NOT NULL,
		server       TEXT NOT NULL,
		tool         TEXT NOT NULL,
		decision     TEXT NOT NULL,
		rule         TEXT NOT NULL,
		why          TEXT NOT NULL,
		duration_ms  DOUBLE PRECISION NOT NULL,
		outcome      TEXT NOT NULL,
		args_bytes   BIGINT NOT NULL,
		result_bytes BIGINT NOT NULL,
		args         JSON,
		result       JSON,
		UNIQUE (replica, session, seq)
	);
	CREATE INDEX ` + auditTable + `_time ON ` + auditTable + ` (time);
	CREATE INDEX ` + auditTable + `_stored_at ON ` + auditTable + ` (stored_at);
	CREATE INDEX ` + auditTable + `_server_time ON ` + auditTable + ` (server, time)`,
	// The code-mode script's hash (Record.Script): "" for other calls.
	`ALTER TABLE ` + auditTable + ` ADD COLUMN script TEXT NOT NULL DEFAULT ''`,
	// Who: the user's subject, their token's OAuth client and the MCP
	// client (settings.identity); "" without identity.
	`ALTER TABLE ` + auditTable + ` ADD COLUMN "user" TEXT NOT NULL DEFAULT '',
		ADD COLUMN client_id TEXT NOT NULL DEFAULT '',
		ADD COLUMN client TEXT NOT NULL DEFAULT '';
	CREATE INDEX ` + auditTable + `_user_time ON ` + auditTable + ` ("user", time)`,
	// Who decided an approval an approver group decides (Record.Approver).
	`ALTER TABLE ` + auditTable + ` ADD COLUMN approver TEXT NOT NULL DEFAULT ''`,
}

// DefaultAuditTimeout bounds a write to the shared store: a call waits at
// most this long for its record when the database is slow or away.
const DefaultAuditTimeout = 2 * time.Second

// PostgresOptions configures OpenPostgresAudit. The zero value works.
type PostgresOptions struct {
	// Payloads keeps calls' arguments and results
	// (settings.audit.payloads).
	Payloads bool
	// Replica names this process in the records. Default: NewReplicaID().
	Replica string
	// Timeout bounds each write. Default: DefaultAuditTimeout.
	Timeout time.Duration
}

// PostgresAuditor writes the audit trail to a table of the store that
// replicas share: every replica's records, once each. Its methods are safe
// for concurrent use.
type PostgresAuditor struct {
	db   *sql.DB
	opts PostgresOptions
}

// ErrNoSeq reports a record the shared store cannot order: its Seq is not
// set.
var ErrNoSeq = errors.New("the record has no sequence number in its session")

// OpenPostgresAudit returns an auditor that writes to db, bringing its
// table to this version first (pgstore.Migrate). The caller owns db and
// closes it after the auditor.
func OpenPostgresAudit(ctx context.Context, db *sql.DB, opts *PostgresOptions) (*PostgresAuditor, error) {
	a := &PostgresAuditor{db: db}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.Replica == "" {
		a.opts.Replica = NewReplicaID()
	}
	if a.opts.Timeout <= 0 {
		a.opts.Timeout = DefaultAuditTimeout
	}
	if err := pgstore.Migrate(ctx, db, "audit", auditSteps); err != nil {
		return nil, fmt.Errorf("opening the audit trail in the shared store: %w", err)
	}
	return a, nil
}

// Replica returns the name of this process in the records it writes.
func (a *PostgresAuditor) Replica() string { return a.opts.Replica }

// Payloads reports whether records keep arguments and results.
func (a *PostgresAuditor) Payloads() bool { return a.opts.Payloads }

// Write inserts r as this replica's, waiting at most the timeout even
// when ctx is cancelled: a call the client gave up on is recorded too.
// r.Seq must be set. On an error, r may or may not be stored (a timeout
// can come after the commit), but never twice.
func (a *PostgresAuditor) Write(ctx context.Context, r Record) error {
	if r.Seq <= 0 {
		return fmt.Errorf("writing the audit trail: session %q: %w", r.Session, ErrNoSeq)
	}
	r = prepare(r, a.opts.Payloads)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.opts.Timeout)
	defer cancel()
	_, err := a.db.ExecContext(ctx, `INSERT INTO `+auditTable+` (time, replica, session, seq, event, server, tool,
		decision, rule, why, duration_ms, outcome, args_bytes, result_bytes, args, result, script, "user", client_id, client, approver)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
		r.Time, a.opts.Replica, r.Session, r.Seq, r.Event, r.Server, r.Tool, r.Decision, r.Rule, r.Why,
		r.DurationMs, r.Outcome, r.ArgsBytes, r.ResultBytes, rawJSON(r.Args), rawJSON(r.Result), r.Script, r.User, r.ClientID, r.Client, r.Approver)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %v: %w", a.opts.Timeout, err)
		}
		return fmt.Errorf("writing the audit trail to the shared store: %w", err)
	}
	return nil
}

// rawJSON is a JSON value as a parameter: NULL for none.
func rawJSON(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	return string(m)
}

// Read returns the records that pass f in the order they reached the
// database, each session's in the order of its Seq: no replica's clock
// decides the order.
func (a *PostgresAuditor) Read(ctx context.Context, f Filter) (*Trail, error) {
	var where []string
	var args []any
	if f.Server != "" {
		args = append(args, f.Server)
		where = append(where, fmt.Sprintf("server = $%d", len(args)))
	}
	if f.User != "" {
		args = append(args, f.User)
		where = append(where, fmt.Sprintf(`"user" = $%d`, len(args)))
	}
	if !f.Since.IsZero() {
		args = append(args, f.Since)
		where = append(where, fmt.Sprintf("time >= $%d", len(args)))
	}
	q := `SELECT id, time, replica, session, seq, event, server, tool, decision, rule, why,
		duration_ms, outcome, args_bytes, result_bytes, args, result, script, "user", client_id, client, approver FROM ` + auditTable
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := a.db.QueryContext(ctx, q+" ORDER BY id", args...)
	if err != nil {
		return nil, fmt.Errorf("reading the audit trail from the shared store: %w", err)
	}
	defer rows.Close()
	t := &Trail{}
	for rows.Next() {
		var r Record
		var args, result sql.NullString
		if err := rows.Scan(&r.ID, &r.Time, &r.Replica, &r.Session, &r.Seq, &r.Event, &r.Server, &r.Tool, &r.Decision,
			&r.Rule, &r.Why, &r.DurationMs, &r.Outcome, &r.ArgsBytes, &r.ResultBytes, &args, &result, &r.Script, &r.User, &r.ClientID, &r.Client, &r.Approver); err != nil {
			return nil, fmt.Errorf("reading the audit trail from the shared store: %w", err)
		}
		r.Time = r.Time.UTC()
		if args.Valid {
			r.Args = json.RawMessage(args.String)
		}
		if result.Valid {
			r.Result = json.RawMessage(result.String)
		}
		t.Records = append(t.Records, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the audit trail from the shared store: %w", err)
	}
	inSessionOrder(t.Records)
	if f.Server == "" && f.User == "" {
		t.Missing = missing(t.Records)
	}
	return t, nil
}

// Close does nothing: the caller owns the database.
func (a *PostgresAuditor) Close() error { return nil }
