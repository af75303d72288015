package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/panel"
)

func approvalsCommand() *command {
	return &command{
		name: "approvals", summary: "list, allow or deny the calls waiting for an approver group",
		usage: "--attach URL [--token-file FILE] [list | allow ID | deny ID] [--json]",
		help: `A call that an approval rule with approvers covers ({"when": …,
"approvers": ["leads"]}, docs/policy.md) waits, within its request
timeout, for a member of one of those groups to allow or deny it, over
the admin endpoint of the switchboard serve --http it was made to.
list (the default) shows the calls you may decide; allow ID and deny ID
decide one. The decision is recorded in the audit trail with both names,
the caller's and yours.

The bearer token comes from --token-file (a file of yours, mode 600) or
$SWITCHBOARD_TOKEN: with settings.identity, your access token from the
team's authorization server; without, the gateway's token. It is sent
over http:// only to loopback.

Examples:
  switchboard approvals --attach http://127.0.0.1:8080
  switchboard approvals --attach http://127.0.0.1:8080 allow 3`,
		run: runApprovals,
	}
}

func runApprovals(ctx context.Context, e *env, args []string) error {
	f := newFlags("approvals", true)
	attach := f.String("attach", "", "the gateway at `URL` (switchboard serve --http)")
	tokenFile := f.String("token-file", "", "read the bearer token from `FILE` (else $SWITCHBOARD_TOKEN)")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if *attach == "" {
		return usagef("approvals needs --attach URL, the switchboard serve --http whose calls wait")
	}
	verb := "list"
	if len(pos) > 0 {
		verb = pos[0]
	}
	switch {
	case verb == "list" && len(pos) <= 1:
	case (verb == "allow" || verb == "deny") && len(pos) == 2:
	default:
		return usagef("approvals takes list, allow ID or deny ID, not %q", strings.Join(pos, " "))
	}
	token, err := e.serveToken(serveOptions{tokenFile: *tokenFile})
	if err != nil {
		return err
	}
	remote, err := panel.NewRemote(*attach, token)
	if err != nil {
		return usagef("%v", err)
	}
	if err := checkCleartext(*attach, token); err != nil {
		return err
	}
	if verb != "list" {
		if err := remote.Decide(ctx, pos[1], verb == "allow"); err != nil {
			return err
		}
		done := map[string]string{"allow": "allowed", "deny": "denied"}[verb]
		fmt.Fprintf(e.stdout, "%s approval %s\n", done, pos[1])
		return nil
	}
	ps, err := remote.Approvals(ctx)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(e.stdout, map[string]any{"approvals": ps})
	}
	if len(ps) == 0 {
		fmt.Fprintln(e.stdout, "no call waits for your approval")
		return nil
	}
	for _, p := range ps {
		who := p.Requester
		if who == "" {
			who = "-"
		}
		fmt.Fprintf(e.stdout, "%s\t%s/%s\tby %s\tapprovers %s\tsince %s\n", p.ID, p.Server, p.Tool, who,
			strings.Join(p.Approvers, ","), p.Since.UTC().Format("2006-01-02 15:04:05Z"))
	}
	return nil
}
