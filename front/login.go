package front

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// prompter returns how the gateway lets its user log in to a server that
// needs an OAuth login: it sends the authorization URL as a URL-mode
// elicitation (MCP 2025-11-25) to the client whose call needs the login:
// the one client session with a call to that server in flight, if it
// declared URL elicitation (see bridge.callerOf). The client opens it, and
// the login completes on the gateway's loopback listener (so the browser
// must run on the gateway's machine, as it does for a gateway over stdio).
// The client is told when the login is over
// (notifications/elicitation/complete). Without such a client, fallback is
// used; without a fallback, the call fails with needs-auth and the command
// to run. New makes it the engine's Options.Prompt, with the host's own
// Prompt as the fallback. A user's own login (per-user credentials,
// upstream.ConnUser) goes to that user's client or nowhere: never to the
// fallback, a browser on the gateway's machine, where whoever logged in
// would be taken for the user.
func (b *bridge) prompter(fallback oauth.Prompter) oauth.Prompter {
	return func(ctx context.Context, server, authURL string) (string, error) {
		r, err := b.callerOf(ctx, server, "login URL", "URL elicitation", func(c *mcp.ClientCapabilities) bool {
			return c.Elicitation != nil && c.Elicitation.URL != nil
		})
		if err != nil {
			if fallback != nil && upstream.ConnUser(ctx) == "" {
				return fallback(ctx, server, authURL)
			}
			why := err.Error()
			var rf *refusal
			if errors.As(err, &rf) {
				why = rf.why
			}
			return "", &oauth.NeedsLoginError{Server: server, Reason: "the server requires an OAuth login, and no client can be sent its authorization URL: " + why}
		}
		id := b.inputID()
		// The login ends ctx when it is over, logged in or not, maybe
		// before the client answers (its user may be that quick): the
		// client is told then. The goroutine lives no longer than the
		// login.
		go func() {
			<-ctx.Done()
			_ = r.ss.NotifyElicitationComplete(context.WithoutCancel(ctx), &mcp.ElicitationCompleteParams{ElicitationID: id})
		}()
		res, err := b.askURL(ctx, r, &mcp.ElicitParams{
			Mode: "url", URL: authURL, ElicitationID: id,
			Message: fmt.Sprintf("[server %q needs a login] Log in to %s to go on: Switchboard needs your authorization to use it.", server, server),
			Meta:    mcp.Meta{metaServer: server},
		})
		switch {
		case err != nil:
			return "", fmt.Errorf("asking the client to open the authorization URL: %w", err)
		case res.Action != "accept":
			return "", &oauth.NeedsLoginError{Server: server, Reason: fmt.Sprintf("the user did not log in (the client answered %q)", res.Action)}
		}
		return "", nil
	}
}

// askURL sends a URL-mode elicitation to the client of the call r: as a
// request, or in an input-required result to a multi round-trip client.
func (b *bridge) askURL(ctx context.Context, r *route, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if r.susp == nil {
		cctx, stop := toClient(ctx, r)
		defer stop()
		return r.ss.Elicit(cctx, params)
	}
	resp, err := r.susp.askClient(ctx, b.inputID(), params)
	if err != nil {
		return nil, err
	}
	res, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return nil, fmt.Errorf("the client answered the elicitation with %T", resp)
	}
	return res, nil
}
