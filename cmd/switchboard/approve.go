package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/switchboard-mcp/switchboard/policy"
)

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
			return policy.Deny, errors.New("standard input is not a terminal, so no one can be asked; pass --yes to approve this call")
		}
		fmt.Fprintf(e.stderr, "The call of %q on %q needs approval (rule at %s).\nArguments:\n%s\nAllow it? [o]nce, [s]ession, [d]eny (default deny): ",
			req.Tool, req.Server, req.Rule.Where(), policy.ArgsPreview(req.Args, 2000))
		answer, err := readAnswer(ctx, tty)
		if err != nil {
			return policy.Deny, err
		}
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "o", "once", "y", "yes":
			return policy.AllowOnce, nil
		case "s", "session":
			return policy.AllowSession, nil
		}
		return policy.Deny, nil
	}
}

// readAnswer reads one line from the terminal. The read itself cannot be
// stopped; on ctx's end it is abandoned, and ends with the process.
func readAnswer(ctx context.Context, tty io.Reader) (string, error) {
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		s, err := bufio.NewReaderSize(tty, 256).ReadString('\n')
		got <- line{s, err}
	}()
	select {
	case l := <-got:
		if l.err != nil && !errors.Is(l.err, io.EOF) {
			return "", fmt.Errorf("reading the answer: %w", l.err)
		}
		return l.s, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
