package policy_test

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/policy"
)

// Reading the last day's audit trail of every replica from the shared
// store (db is the database settings.store names), as switchboard audit
// does.
func ExampleOpenPostgresAudit() {
	ctx := context.Background()
	var db *sql.DB // the shared store, opened by the host
	trail, err := policy.OpenPostgresAudit(ctx, db, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	got, err := trail.Read(ctx, policy.Filter{Since: time.Now().Add(-24 * time.Hour)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range got.Records {
		fmt.Println(r.Replica, r.Session, r.Seq, r.Event, r.Server, r.Tool, r.Outcome)
	}
	if got.Missing > 0 {
		fmt.Printf("%d records were not written (see the replicas' logs)\n", got.Missing)
	}
}
