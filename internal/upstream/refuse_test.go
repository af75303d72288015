package upstream

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// FuzzStdioConn holds the connection to a stdio server to what it promises
// of what the server writes: go-sdk reads messages from it until the
// output ends, and it never fails (which would end the connection): what
// cannot be read is refused line by line, a response as an error for its
// id.
func FuzzStdioConn(f *testing.F) {
	deep := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"v":` + deep + `}}`,
		`{"result":{"v":` + deep + `},"jsonrpc":"2.0","id":"sb-raw-1"}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"v":` + deep + `}}`,
		`[{"jsonrpc":"2.0","id":1,"result":{"v":` + deep[1:len(deep)-1] + `}}]`,
		"[]\n{}\n{\"id\":1.5,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":1}\n",
	} {
		f.Add([]byte(s + "\n"))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		c := newStdioConn(newLineReader(bytes.NewReader(out), 4<<10, slog.New(slog.DiscardHandler)), discardCloser{io.Discard}, nil)
		defer c.Close()
		for {
			if _, err := c.Read(t.Context()); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("the connection failed: %v", err)
				}
				return
			}
		}
	})
}
