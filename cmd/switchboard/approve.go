package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/switchboard-mcp/switchboard/policy"
)

// errNoTerminal denies a call no one can be asked about, at the CLI: it
// matches policy.ErrNoApprover.
var errNoTerminal error = noTerminal{}

type noTerminal struct{}

func (noTerminal) Error() string {
	return "standard input is not a terminal, so no one can be asked; pass --yes to approve this call"
}

func (noTerminal) Is(target error) bool { return target == policy.ErrNoApprover }

// maxAnswer bounds the answer to an approval prompt.
const maxAnswer = 1 << 10

// cliApprover asks the person at the terminal whether a call an approval
// rule covers may go ahead (docs/policy.md). Without a terminal on
// standard input no one can be asked, and the call is denied unless yes
// (--yes) approves it; the approval is named on stderr either way.
func (e *env) cliApprover(yes bool) policy.Approver {
	return func(ctx context.Context, req *policy.Request) (policy.Decision, error) {
		if yes {
			fmt.Fprintf(e.stderr, "switchboard: --yes approves the call of %q on %q (approval rule at %s)\n", req.Tool, req.Server, req.Rule.Where())
			return policy.AllowOnce, nil
		}
		tty, ok := e.stdin.(*os.File)
		if !ok || !isTerminal(tty) {
			// No one can be asked (policy.ErrNoApprover): the denial's hint
			// then offers only what works without a terminal, not an
			// answer no one can give.
			return policy.Deny, errNoTerminal
		}
		fmt.Fprintf(e.stderr, "The call of %q on %q needs approval (rule at %s).\nArguments:\n%s\nAllow it? [o]nce, [s]ession, [d]eny (default deny): ",
			req.Tool, req.Server, req.Rule.Where(), policy.ArgsPreview(req.Args, 2000))
		answer, err := readLine(ctx, tty, maxAnswer)
		if err != nil && !errors.Is(err, io.EOF) {
			return policy.Deny, fmt.Errorf("reading the answer: %w", err)
		}
		switch strings.ToLower(strings.TrimSpace(string(answer))) {
		case "o", "once", "y", "yes":
			return policy.AllowOnce, nil
		case "s", "session":
			return policy.AllowSession, nil
		}
		return policy.Deny, nil
	}
}
