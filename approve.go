package switchboard

import (
	"context"
	"errors"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/policy"
)

// Quarantined returns a server's quarantined tools, sorted by name, each
// with what changed: tools whose definition (description, schemas,
// annotations, …) differs from the one the user approved, and under
// settings.pin "strict" tools new on a known server (docs/policy.md). A
// quarantined tool cannot be called, and the model sees it as it was
// approved; a host shows its user the changes (Quarantine.Diff), and
// accepts the ones the user agrees to with Approve. It never connects.
// A Quarantine whose Err is set means the pins could not be read.
func (e *Engine) Quarantined(ctx context.Context, server string) ([]*policy.Quarantine, error) {
	return e.core.Quarantined(ctx, server)
}

// ErrNotQuarantined is matched (errors.Is) by the error of Approve for a
// tool that is not quarantined: its definition is the one accepted.
var ErrNotQuarantined = errors.New("not quarantined")

// Approve accepts the definition of a quarantined tool that the catalog
// holds (the one Quarantined and describe show), which makes the tool
// callable again, and records the acceptance in the audit trail. It
// returns what was accepted. It connects the server only when the catalog
// does not know it. Should the server offer yet another definition by
// now, the next listing quarantines that one in turn.
func (e *Engine) Approve(ctx context.Context, server, tool string) (*policy.Quarantine, error) {
	q, err := e.core.Approve(ctx, server, tool)
	if errors.Is(err, gateway.ErrNotQuarantined) {
		err = notQuarantined{err}
	}
	return q, err
}

// notQuarantined is the engine's error for a tool that is not
// quarantined, which ErrNotQuarantined matches.
type notQuarantined struct{ error }

func (notQuarantined) Is(target error) bool { return target == ErrNotQuarantined }
func (n notQuarantined) Unwrap() error      { return n.error }
