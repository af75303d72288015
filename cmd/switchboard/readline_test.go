package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReadLine: one line with its break, a last line without one, the end
// of the input, a line over the limit, and a read abandoned when the
// context ends while no one types.
func TestReadLine(t *testing.T) {
	tests := []struct {
		name, in string
		want     string
		err      string
	}{
		{"a line", "once\nnext\n", "once\n", ""},
		{"a last line without a break", "once", "once", ""},
		{"a line with CRLF", "once\r\n", "once\r\n", ""},
		{"the end of the input", "", "", "EOF"},
		{"a line over the limit", strings.Repeat("x", 40) + "\n", "", "the line is longer than 32 bytes"},
		{"exactly the limit", strings.Repeat("x", 31) + "\n", strings.Repeat("x", 31) + "\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readLine(t.Context(), strings.NewReader(tt.in), 32)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("readLine(%q) = %q, %v; want error %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("readLine(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
	if _, err := readLine(t.Context(), strings.NewReader(""), 32); !errors.Is(err, io.EOF) {
		t.Errorf("at the end of the input: %v, want io.EOF", err)
	}

	t.Run("abandoned", func(t *testing.T) {
		r, w := io.Pipe() // no one types
		defer w.Close()   // ends the abandoned read
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if got, err := readLine(ctx, r, 32); !errors.Is(err, context.Canceled) {
			t.Errorf("readLine after the context ended = %q, %v; want context.Canceled", got, err)
		}
	})
}
