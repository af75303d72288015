package upstream

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestSSEMarks: the marks go between an event stream's notifications and
// the answer after them, as whole events of their own before the answer's
// event (its id and name lines included), and nowhere else: not before an
// answer that comes first, not inside an event, not on a stream no call
// waits on. The call's slot names the mark, which stays outstanding until
// handled or forgotten.
func TestSSEMarks(t *testing.T) {
	const (
		note   = `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\n"
		answer = `data: {"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
		ask    = `data: {"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}` + "\n"
	)
	st := newSettle()
	markLine := func(n string) string {
		return `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + n + `","level":"debug","logger":"` + st.logger + `"}}` + "\n\n"
	}
	pass := func(in string, marks *sseMarks) string {
		t.Helper()
		b := &sseBody{rc: io.NopCloser(strings.NewReader(in)), max: 1 << 20, cancel: func() {}, marks: marks}
		b.r = bufio.NewReaderSize(b.rc, 32<<10)
		out, err := io.ReadAll(b)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	for _, tc := range []struct {
		name, in, want string
		slot           bool
		n              uint64 // the slot's mark
	}{
		{"answer alone", "id: 1\n" + answer + "\n", "id: 1\n" + answer + "\n", true, 0},
		{"note then answer", "event: message\nid: 1\n" + note + "\nevent: message\nid: 2\n" + answer + "\n",
			"event: message\nid: 1\n" + note + "\n" + markLine("1") + "event: message\nid: 2\n" + answer + "\n", true, 1},
		{"a request is not an answer", note + "\n" + ask + "\n" + answer + "\n",
			note + "\n" + ask + "\n" + markLine("2") + answer + "\n", true, 2},
		{"two data lines are one event", note + answer + "\n", note + answer + "\n", true, 0},
		{"no slot, no mark", note + "\n" + answer + "\n", note + "\n" + answer + "\n", false, 0},
		{"a stream's end flushes what was held", note + "\nid: 9\n", note + "\nid: 9\n", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var marks *sseMarks
			var slot *markSlot
			if tc.slot {
				_, slot = withMarkSlot(context.Background())
				marks = &sseMarks{st: st, slot: slot}
			}
			if got := pass(tc.in, marks); got != tc.want {
				t.Errorf("passed\n%s\nwant\n%s", got, tc.want)
			}
			if slot.load() != tc.n {
				t.Errorf("slot = %d, want %d", slot.load(), tc.n)
			}
		})
	}

	// The stream of everything in order (legacy SSE): a mark before each
	// answer that follows a notification, none before others.
	ordered := &sseMarks{st: st}
	got := pass(answer+"\n"+note+"\n"+note+"\n"+answer+"\n"+answer+"\n", ordered)
	if want := answer + "\n" + note + "\n" + note + "\n" + markLine("3") + answer + "\n" + answer + "\n"; got != want {
		t.Errorf("ordered stream passed\n%s\nwant\n%s", got, want)
	}
	if st.last.Load() != 3 {
		t.Errorf("last ordered mark = %d, want 3", st.last.Load())
	}

	// Marks 1 to 3 are outstanding: a wait for them lasts until they are
	// handled or forgotten.
	_, slot := withMarkSlot(context.Background())
	slot.n.Store(2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	st.wait(ctx, nil, slot)
	cancel()
	if ctx.Err() == nil {
		t.Fatal("wait returned with marks 2 and 3 outstanding")
	}
	st.forget(2)
	st.forget(3)
	st.wait(context.Background(), nil, slot) // returns: neither is outstanding
	st.forget(1)
	if len(st.outstanding) != 0 {
		t.Errorf("outstanding marks left: %v", st.outstanding)
	}
}

// TestSSEMarksHoldLittle: a hostile server's endless comment lines, with
// no event to end them, are not all held back: never more than maxHead of
// them at a time, and everything passes, in order, the mark included.
func TestSSEMarksHoldLittle(t *testing.T) {
	const (
		note   = `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\n\n"
		answer = `data: {"jsonrpc":"2.0","id":1,"result":{}}` + "\n\n"
	)
	comments := strings.Repeat(": keep-alive\n", 3*maxHead/13)
	_, slot := withMarkSlot(context.Background())
	// The stream comes in small pieces, and each time the body asks for
	// more, what it holds back is measured.
	src := &measuringReader{r: strings.NewReader(note + comments + answer)}
	b := &sseBody{rc: io.NopCloser(src), max: 1 << 20, cancel: func() {}, marks: &sseMarks{st: newSettle(), slot: slot}}
	src.b = b
	b.r = bufio.NewReaderSize(src, 16)
	var out strings.Builder
	buf := make([]byte, 512)
	for {
		n, err := b.Read(buf)
		out.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if src.held > maxHead {
		t.Errorf("%d bytes held back at once, more than %d", src.held, maxHead)
	}
	got := out.String()
	mark := strings.Index(got, `"logger":"switchboard-mark-`)
	if mark < 0 || slot.load() == 0 {
		t.Fatalf("no mark before the answer (slot %d)", slot.load())
	}
	// Without the mark's event, the stream is as it came.
	start := strings.LastIndex(got[:mark], "data: ")
	end := start + strings.Index(got[start:], "\n\n") + 2
	if rest := got[:start] + got[end:]; rest != note+comments+answer {
		t.Errorf("the stream changed beyond the mark (%d bytes, want %d)", len(rest), len(note+comments+answer))
	}
}

// measuringReader gives its stream 64 bytes at a time, noting the most
// that b held back whenever it was asked for more.
type measuringReader struct {
	r    io.Reader
	b    *sseBody
	held int
}

func (m *measuringReader) Read(p []byte) (int, error) {
	if m.b != nil {
		m.held = max(m.held, len(m.b.head))
	}
	return m.r.Read(p[:min(len(p), 64)])
}
