package main

// Output of auth:
//   - login: the authorization URL and what to do on stderr; "logged in to
//     NAME (…)" on stderr when done.
//   - logout: "logged out of NAME …" on stderr; a failed revocation is a
//     warning there, and the tokens are removed all the same.
//   - status: a table on stdout (SERVER, STORE, LOGIN, SCOPES, EXPIRES), or
//     {"servers": […]} with --json. Never a token.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboard-mcp/switchboard"
)

func authCommand() *command {
	return &command{
		name:    "auth",
		summary: "log in to remote servers with OAuth, log out, and show logins",
		usage:   "login SERVER [--no-browser] | logout SERVER | status [--json]",
		help: `Subcommands:
  login SERVER   log in to an HTTP server with OAuth: opens the authorization
                 URL with $BROWSER, else the system's browser, and receives
                 the redirect on 127.0.0.1 (within 5 minutes). With
                 --no-browser, prints the URL and reads the URL the browser
                 was sent to from standard input, for a browser on another
                 machine. Then connects to the server with the new token.
  logout SERVER  revoke the server's tokens where its authorization server
                 allows it, and remove them and its client registration
  status         list each HTTP server: where its tokens are kept, whether it
                 is logged in, its scopes and when its token expires (it is
                 refreshed before then when it can be). Never a token.

Commands that use a server (call, tools, search, index, …) log in by
themselves when the server needs it and a browser can be opened ($BROWSER is
set, or a terminal with a display); --no-login turns that off, and the
command then fails with the command to run. Tokens are kept in the state
directory (see switchboard config paths), bound to the server's URL and
client: a changed URL never receives the old token. See docs/auth.md.`,
		run: runAuth,
	}
}

func runAuth(ctx context.Context, e *env, args []string) error {
	f := newFlags("auth", true)
	noBrowser := f.Bool("no-browser", false, "print the URL and read the redirect URL from standard input")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("auth needs one of login, logout, status")
	}
	switch sub, rest := pos[0], pos[1:]; sub {
	case "login", "logout":
		if len(rest) != 1 {
			return usagef("auth %s needs one SERVER", sub)
		}
		if sub == "login" {
			return e.authLogin(ctx, f.config, rest[0], *noBrowser)
		}
		return e.authLogout(ctx, f.config, rest[0])
	case "status":
		if len(rest) != 0 {
			return usagef("auth status takes no arguments")
		}
		return e.authStatus(ctx, f.config, f.json)
	}
	return usagef("unknown auth subcommand %q: use login, logout or status", pos[0])
}

func (e *env) authLogin(ctx context.Context, explicit, server string, noBrowser bool) (err error) {
	eng, err := e.openEngine(ctx, explicit, false)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, eng.Close()) }()
	prompt := e.browserPrompter(true)
	if noBrowser {
		prompt = e.pastePrompter()
	}
	if err := eng.Login(ctx, server, prompt); err != nil {
		return err
	}
	st, err := authStatusOf(ctx, eng, server)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "logged in to %s%s\n", server, describeLogin(st, time.Now()))
	return nil
}

func authStatusOf(ctx context.Context, eng *switchboard.Engine, server string) (*switchboard.AuthStatus, error) {
	all, err := eng.AuthStatus(ctx)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].Server == server {
			return &all[i], nil
		}
	}
	return nil, fmt.Errorf("no login found for %q after logging in", server)
}

// describeLogin says what a login holds: " (scopes a b; expires in 59m,
// refreshed before then)".
func describeLogin(st *switchboard.AuthStatus, now time.Time) string {
	var parts []string
	if len(st.Scopes) > 0 {
		parts = append(parts, "scopes "+strings.Join(st.Scopes, " "))
	}
	if exp := expires(st, now); exp != "" {
		parts = append(parts, exp)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// expires says when a token expires, and whether it is refreshed.
func expires(st *switchboard.AuthStatus, now time.Time) string {
	switch {
	case st.Expiry.IsZero():
		return ""
	case !st.Expiry.After(now) && st.Refreshable:
		return "expired; refreshed at next use"
	case !st.Expiry.After(now):
		return "expired"
	}
	s := "expires in " + st.Expiry.Sub(now).Round(time.Second).String()
	if st.Refreshable {
		s += ", refreshed before then"
	}
	return s
}

func (e *env) authLogout(ctx context.Context, explicit, server string) (err error) {
	eng, err := e.openEngine(ctx, explicit, false)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, eng.Close()) }()
	removed, revokeErr, err := eng.Logout(ctx, server)
	if err != nil {
		return err
	}
	if revokeErr != nil {
		fmt.Fprintf(e.stderr, "warning: %v (the tokens are removed all the same)\n", revokeErr)
	}
	if removed == 0 {
		fmt.Fprintf(e.stderr, "%s was not logged in; nothing removed\n", server)
		return nil
	}
	fmt.Fprintf(e.stderr, "logged out of %s\n", server)
	return nil
}

// authStatusJSON is the stable --json shape of auth status.
type authStatusJSON struct {
	Servers []switchboard.AuthStatus `json:"servers"`
}

func (e *env) authStatus(ctx context.Context, explicit string, asJSON bool) (err error) {
	eng, err := e.openEngine(ctx, explicit, false)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, eng.Close()) }()
	all, err := eng.AuthStatus(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		if all == nil {
			all = []switchboard.AuthStatus{}
		}
		return writeJSON(e.stdout, authStatusJSON{Servers: all})
	}
	if len(all) == 0 {
		fmt.Fprintln(e.stderr, "no HTTP servers configured")
		return nil
	}
	w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SERVER\tSTORE\tLOGIN\tSCOPES\tEXPIRES")
	now := time.Now()
	for _, st := range all {
		login, scopes, exp := "not logged in", "-", "-"
		switch {
		case !st.OAuth:
			login = "no OAuth (" + st.Reason + ")"
		case st.LoggedIn:
			login = "logged in"
			if st.Grant == "client_credentials" {
				login += " (client credentials)"
			}
			if len(st.Scopes) > 0 {
				scopes = strings.Join(st.Scopes, " ")
			}
			if s := expires(&st, now); s != "" {
				exp = s
			}
		case st.Reason != "":
			login = "unknown: " + st.Reason
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", st.Server, st.Store, login, scopes, exp)
	}
	return w.Flush()
}
