package policy

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"
)

// Audit events.
const (
	EventCall       = "call"       // a tool call, sent or not
	EventApproval   = "approval"   // an approval asked and answered
	EventQuarantine = "quarantine" // a tool whose definition changed was quarantined
	EventRelease    = "release"    // a quarantined tool's new definition was accepted
	EventNewTool    = "new-tool"   // a tool new on a known server
)

// Record is one entry of the audit trail. It holds no argument or result
// unless settings.audit.payloads asks for them.
type Record struct {
	// ID is the entry's number in the shared store, in the order entries
	// reached it; 0 in the file.
	ID   int64     `json:"id,omitempty"`
	Time time.Time `json:"time"` // the clock of the process that wrote it
	// Replica is the process that wrote the entry to the shared store
	// (see NewReplicaID); "" in the file.
	Replica string `json:"replica,omitempty"`
	Session string `json:"session,omitempty"`
	// Seq numbers the entries of one session (of one replica) from 1, in
	// the order they happened there: entries read back in that order
	// whatever the replicas' clocks say, and a missing one leaves a gap.
	// Entries of no session are numbered per replica. The shared store
	// needs it; the file does not keep it.
	Seq      int64  `json:"seq,omitempty"`
	Event    string `json:"event"`
	Server   string `json:"server"`
	Tool     string `json:"tool,omitempty"`
	Decision string `json:"decision,omitempty"` // allow-once, allow-session, deny; for a call: allowed, not-needed, denied, quarantined
	Rule     string `json:"rule,omitempty"`     // file:line: path of the approval rule
	Why      string `json:"why,omitempty"`
	// DurationMs is how long a call took at the server, or how long a
	// person took to answer.
	DurationMs  float64         `json:"durationMs,omitempty"`
	Outcome     string          `json:"outcome,omitempty"` // ok, tool-error, error, not-sent
	ArgsBytes   int             `json:"argsBytes,omitempty"`
	ResultBytes int             `json:"resultBytes,omitempty"`
	Args        json.RawMessage `json:"args,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	// Script is the SHA-256 (hex) of the code-mode script that made the
	// call or asked the approval; "" for any other.
	Script string `json:"script,omitempty"`
	// User is the subject of the access token of the session's user
	// (settings.identity); "" for a gateway without identity.
	User string `json:"user,omitempty"`
	// ClientID is the OAuth client the user's token was issued to.
	ClientID string `json:"clientId,omitempty"`
	// Client is the MCP client's name (its clientInfo).
	Client string `json:"client,omitempty"`
	// Approver is who decided an approval an approver group decides (a
	// token's subject); User is who asked for the call.
	Approver string `json:"approver,omitempty"`
}

// Auditor is the audit trail: a file of one machine (OpenAudit) or a table
// of the store that replicas share (OpenPostgresAudit). Its methods are
// safe for concurrent use.
type Auditor interface {
	// Write appends r, stamped with the time when it has none, without
	// its arguments and result unless Payloads. It returns within a
	// bound, whatever ctx says, and an error when r was not written.
	Write(ctx context.Context, r Record) error
	// Read returns the records that pass f.
	Read(ctx context.Context, f Filter) (*Trail, error)
	// Payloads reports whether records keep arguments and results
	// (settings.audit.payloads).
	Payloads() bool
	// Close releases what the trail holds. It is idempotent.
	Close() error
}

// Filter selects records to read.
type Filter struct {
	Server string    // "" for all
	Since  time.Time // zero for all
	User   string    // "" for all: the subject of a user (Record.User)
}

// Trail is what Auditor.Read returns.
type Trail struct {
	// Records are oldest first: in the order they were written, each
	// session's in the order of its Seq.
	Records []Record
	// Unreadable counts lines of the file that could not be read.
	Unreadable int
	// Missing counts records absent from their session's sequence
	// between two that were read: writes that failed (the writer's log
	// says why). It is counted only when no Filter.Server was given,
	// since a session's calls go to many servers.
	Missing int
}

// prepare stamps r with the time and drops what payloads do not keep.
func prepare(r Record, payloads bool) Record {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Time = r.Time.UTC()
	if !payloads {
		r.Args, r.Result = nil, nil
	}
	return r
}

// NewReplicaID returns a name for this process in the shared store: its
// host name and process id, for a person to find it, and 4 random bytes,
// since a restarted container has the same host name and, often, pid 1.
func NewReplicaID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

type sessionKey struct{ replica, session string }

// inSessionOrder puts the records of each session (of each replica) in the
// order of their Seq, each in a place its session's records held: the
// order of recs otherwise stays. Writes of one session that raced reach the
// store in either order; Seq says which came first.
func inSessionOrder(recs []Record) {
	places := map[sessionKey][]int{}
	for i, r := range recs {
		k := sessionKey{r.Replica, r.Session}
		places[k] = append(places[k], i)
	}
	for _, idx := range places {
		if len(idx) < 2 {
			continue
		}
		group := make([]Record, len(idx))
		for j, i := range idx {
			group[j] = recs[i]
		}
		slices.SortStableFunc(group, func(a, b Record) int { return cmp.Compare(a.Seq, b.Seq) })
		for j, i := range idx {
			recs[i] = group[j]
		}
	}
}

// missing counts the numbers absent between the lowest and highest Seq of
// each session in recs. Records without a Seq are not counted.
func missing(recs []Record) int {
	type span struct{ lo, hi, n int64 }
	spans := map[sessionKey]*span{}
	for _, r := range recs {
		if r.Seq <= 0 {
			continue
		}
		k := sessionKey{r.Replica, r.Session}
		s := spans[k]
		if s == nil {
			spans[k] = &span{r.Seq, r.Seq, 1}
			continue
		}
		s.lo, s.hi, s.n = min(s.lo, r.Seq), max(s.hi, r.Seq), s.n+1
	}
	n := 0
	for _, s := range spans {
		n += int(s.hi - s.lo + 1 - s.n)
	}
	return n
}
