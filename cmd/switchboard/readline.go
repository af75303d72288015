package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// readLine reads one line, of at most limit bytes with its line break,
// from r: standard input or the terminal, where the person answers a
// prompt. A read of standard input cannot be interrupted, so when ctx ends
// first the read is abandoned, and ends with the process. The line keeps
// its line break; a last line without one is a line all the same. At the
// end of the input with nothing read, the error is io.EOF.
func readLine(ctx context.Context, r io.Reader, limit int) ([]byte, error) {
	type line struct {
		b   []byte
		err error
	}
	got := make(chan line, 1)
	go func() {
		b, err := bufio.NewReaderSize(r, limit).ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			err = fmt.Errorf("the line is longer than %d bytes", limit)
		case errors.Is(err, io.EOF) && len(b) > 0:
			err = nil
		}
		got <- line{bytes.Clone(b), err}
	}()
	select {
	case l := <-got:
		return l.b, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
