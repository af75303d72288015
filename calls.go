package switchboard

import (
	"sync"

	"github.com/switchboard-mcp/switchboard/proxy"
)

// CallLog keeps the most recent tool calls, for a person watching the
// engine (switchboard panel, the admin endpoint of switchboard serve):
// pass its Add as Options.OnCall. Make one with NewCallLog. Its methods
// are safe for concurrent use.
type CallLog struct {
	mu   sync.Mutex
	ring []proxy.CallRecord // once full, next is the oldest
	next int
	full bool
}

// DefaultCallLogSize is how many calls NewCallLog keeps when told 0.
const DefaultCallLogSize = 200

// NewCallLog returns a log of the last n calls (DefaultCallLogSize when n
// is 0 or less).
func NewCallLog(n int) *CallLog {
	if n <= 0 {
		n = DefaultCallLogSize
	}
	return &CallLog{ring: make([]proxy.CallRecord, n)}
}

// Add records a call, dropping the oldest when the log is full.
func (l *CallLog) Add(c proxy.CallRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ring) == 0 {
		return
	}
	l.ring[l.next] = c
	l.next = (l.next + 1) % len(l.ring)
	if l.next == 0 {
		l.full = true
	}
}

// Recent returns the calls recorded, newest first.
func (l *CallLog) Recent() []proxy.CallRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.next
	if l.full {
		n = len(l.ring)
	}
	out := make([]proxy.CallRecord, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, l.ring[(l.next-i+len(l.ring))%len(l.ring)])
	}
	return out
}
