package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/tailscale/hujson"
)

// A ${cmd:COMMAND ARGS…} reference takes its value from what a command
// prints, as a password manager's CLI prints a token
// (${cmd:op read op://vault/github/token}). It runs when the server
// connects, with no shell unless one is written (${cmd:sh -c '…'}), stdin
// closed, a 10 second bound and a 1 MiB cap on what it prints; trailing
// line breaks are dropped. It may be written only in the user's own
// user-global files: a project or another host's file must not make
// Switchboard run a command.

const cmdPrefix = "cmd:"

// Bounds of a ${cmd:…} reference.
const (
	CommandTimeout = 10 * time.Second
	CommandOutput  = 1 << 20
)

// splitCommand splits the text of a ${cmd:…} reference into arguments, as
// a shell would split words: blanks separate them, '…' quotes literally,
// "…" quotes with \" and \\ escapes, and \ outside quotes escapes the next
// character. Nothing is expanded.
func splitCommand(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated ' quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New(`unterminated " quote`)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, errors.New("no command")
	}
	return args, nil
}

// RunCommand runs the command of a ${cmd:…} reference and returns what it
// printed, without trailing line breaks: no shell, stdin closed, at most
// CommandTimeout and CommandOutput. Its errors never hold what the command
// printed, on stdout or stderr: that may be the secret.
func RunCommand(ctx context.Context, argv []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = nil // the null device
	out := &capped{max: CommandOutput}
	cmd.Stdout = out
	cmd.WaitDelay = time.Second // a grandchild holding stdout open does not hold us
	err := cmd.Run()
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return nil, fmt.Errorf("the command %q did not finish within %s", argv[0], CommandTimeout)
	case out.over:
		return nil, fmt.Errorf("the command %q printed more than %d bytes", argv[0], CommandOutput)
	case err != nil:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("the command %q failed (%s; what it printed is not shown; hint: run it yourself to see why)", argv[0], exit.ProcessState)
		}
		return nil, fmt.Errorf("the command %q: %w", argv[0], err)
	}
	return bytes.TrimRight(out.buf.Bytes(), "\r\n"), nil
}

// capped keeps at most max bytes and notes whether more came.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) > c.max {
		c.over = true
		return 0, io.ErrShortWrite
	}
	return c.buf.Write(p)
}

// runRef runs a ${cmd:…} reference with l.Commands.
func (l Lookup) runRef(r ref) (string, error) {
	if l.Commands == nil {
		return "", errors.New("a ${cmd:…} reference runs its command only when the server connects")
	}
	argv, err := splitCommand(r.name)
	if err != nil {
		return "", err
	}
	out, err := l.Commands(argv)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

func hasCommand(refs []ref) bool {
	for _, r := range refs {
		if r.cmd {
			return true
		}
	}
	return false
}

// commandRefAllowed reports whether the file may hold ${cmd:…} references:
// only the user's own user-global files, and a file named with --config.
func (d *decoder) commandRefAllowed() bool {
	switch d.src.Kind {
	case KindUser, KindExplicit, KindShared, KindAgents:
		return true
	}
	return false
}

// references checks the reference syntax of a value that may hold them and
// returns how many it holds.
func (d *decoder) references(v *hujson.Value, path, value string) int {
	refs, err := parseRefs(value)
	if err != nil {
		d.errorf(v, path, "%v", err)
		return 0
	}
	if hasCommand(refs) {
		d.errorf(v, path, "a ${cmd:…} reference is allowed only in a server's env and headers values")
		return 0
	}
	return len(refs)
}
