package proxy

import (
	"fmt"
	"time"
)

// AuthInfo is what an auth-start answer says of the login it started:
// the URL to open, the loopback callback the browser is sent back to, and
// how long the login waits. None of it is a credential: the URL carries
// the login's state, which only binds a redirect to this login.
type AuthInfo struct {
	AuthorizationURL string `json:"authorizationUrl"`
	Callback         string `json:"callback"`
	ExpiresIn        int    `json:"expiresIn"` // seconds
}

// Connected is the answer of a connect request that succeeded: the
// server's status line, with the number of tools it offers.
func Connected(st ServerStatus, now time.Time) *Result {
	r := &Result{Details: Details{Operation: string(ActionConnect), Server: st.Name, Count: max(st.Tools, 0), Servers: []ServerStatus{st}}}
	return r.lines("connect", []string{fmt.Sprintf("connected %q (%s)", st.Name, plural(max(st.Tools, 0), "tool", "tools")), serverLine(st, now)})
}

// AuthStarted is the answer of an auth-start request: the authorization
// URL for the user to open, and the two ways the login ends.
func AuthStarted(server string, info AuthInfo) *Result {
	r := &Result{Details: Details{Operation: string(ActionAuthStart), Server: server, Auth: &info}}
	wait := time.Duration(info.ExpiresIn) * time.Second
	return r.lines("auth-start", []string{
		fmt.Sprintf("to log in to %q, have the user open this URL in a browser and approve (the login waits %s):", server, wait),
		info.AuthorizationURL,
		fmt.Sprintf("If the browser runs on this machine, it is sent back to %s and the login completes by itself: then use the server again.", info.Callback),
		"If not (that page fails to load), have the user copy the whole URL from the browser's address bar, and send it:",
		fmt.Sprintf(`{"action": "auth-complete", "server": %q, "args": {"redirectUrl": "THE URL"}}`, server),
	})
}

// LoggedIn is the answer of a login that completed (auth-start for a
// login that needed no browser, auth-complete): the server's status line
// once connected with the new token.
func LoggedIn(op Action, st ServerStatus, now time.Time) *Result {
	r := &Result{Details: Details{Operation: string(op), Server: st.Name, Count: max(st.Tools, 0), Servers: []ServerStatus{st}}}
	return r.lines(string(op), []string{fmt.Sprintf("logged in to %q and connected (%s)", st.Name, plural(max(st.Tools, 0), "tool", "tools")), serverLine(st, now)})
}
