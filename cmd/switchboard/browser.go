package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/switchboard-mcp/switchboard/oauth"
)

// canOpenBrowser reports whether a command may take the user to a browser
// to log in: $BROWSER says how, or a person is at a terminal with a
// display (on Linux, $DISPLAY or $WAYLAND_DISPLAY).
func (e *env) canOpenBrowser() bool {
	if e.getenv("BROWSER") != "" {
		return true
	}
	if !isTerminal(e.stderr) {
		return false
	}
	return e.goos != "linux" || e.getenv("DISPLAY") != "" || e.getenv("WAYLAND_DISPLAY") != ""
}

// browserPrompter opens the authorization URL in a browser, and prints it
// in case none opens. asked says the user asked to log in (auth login),
// rather than a command meeting a server that needs it.
func (e *env) browserPrompter(asked bool) oauth.Prompter {
	return func(ctx context.Context, server, authURL string) (string, error) {
		what := server + " needs a login"
		if asked {
			what = "logging in to " + server
		}
		fmt.Fprintf(e.stderr, "switchboard: %s; opening the browser (if it does not open, visit this URL):\n  %s\n", what, authURL)
		if err := e.openBrowser(ctx, authURL); err != nil {
			return "", fmt.Errorf("%v; hint: switchboard auth login %s --no-browser", err, server)
		}
		return "", nil
	}
}

// maxPastedURL bounds the URL pasted after a login in a browser elsewhere:
// the redirect to the loopback listener, with its code and state.
const maxPastedURL = 64 << 10

// pastePrompter prints the authorization URL and reads the URL the
// browser was redirected to, for a browser on another machine. The
// loopback listener still takes a redirect that reaches it.
func (e *env) pastePrompter() oauth.Prompter {
	return func(ctx context.Context, server, authURL string) (string, error) {
		fmt.Fprintf(e.stderr, "Open this URL in a browser and log in to %s:\n  %s\nThen paste here the URL the browser was sent to (it starts with http://127.0.0.1:):\n", server, authURL)
		line, err := readLine(ctx, e.stdin, maxPastedURL)
		if err != nil {
			return "", fmt.Errorf("reading the pasted URL: %w", err)
		}
		return strings.TrimSpace(string(line)), nil
	}
}

// openBrowser opens u with $BROWSER (a colon-separated list of commands,
// each with %s for the URL or taking it as its last argument; the first
// that starts is used), else the platform's opener, which must succeed.
// A $BROWSER command is not waited for: it may be the browser itself.
func (e *env) openBrowser(ctx context.Context, u string) error {
	if b := e.getenv("BROWSER"); b != "" {
		var errs []error
		for _, c := range strings.Split(b, ":") {
			args := browserArgs(c, u)
			if len(args) == 0 {
				continue
			}
			cmd := exec.Command(args[0], args[1:]...)
			if err := cmd.Start(); err != nil {
				errs = append(errs, err)
				continue
			}
			go cmd.Wait() // reaps it whenever it ends; the login does not wait for it
			return nil
		}
		return fmt.Errorf("$BROWSER: no command could be started: %w", errors.Join(errs...))
	}
	var args []string
	switch e.goos {
	case "darwin":
		args = []string{"open", u}
	case "windows":
		args = []string{"rundll32", "url.dll,FileProtocolHandler", u}
	default:
		args = []string{"xdg-open", u}
	}
	if out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("no browser could be opened (%s: %v: %s)", args[0], err, strings.TrimSpace(string(out)))
	}
	return nil
}

// browserArgs splits one $BROWSER command into arguments, with the URL in
// place of %s, or last.
func browserArgs(c, u string) []string {
	fields := strings.Fields(c)
	replaced := false
	for i, f := range fields {
		if strings.Contains(f, "%s") {
			fields[i] = strings.ReplaceAll(f, "%s", u)
			replaced = true
		}
	}
	if len(fields) > 0 && !replaced {
		fields = append(fields, u)
	}
	return fields
}
