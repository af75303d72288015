package front

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// With settings.trace, each client session gets a file of JSON lines in
// the trace directory: the session's client and revision, then each call
// (the mcp tool's operation, or a direct tool), with its server, tool,
// outcome and duration, and the session's end. Nothing that was sent or
// answered is written: no arguments, results, prompts, URLs or
// credentials. A file is bounded (settings.trace.maxBytes, maxEvents):
// past either, one last line says the rest was dropped.

// traceEvent is one line of a trace file.
type traceEvent struct {
	Time      string `json:"t"`
	Event     string `json:"event"` // "session", "call", "dropped", "end"
	Client    string `json:"client,omitempty"`
	Protocol  string `json:"protocol,omitempty"`
	Via       string `json:"via,omitempty"` // "mcp" or "direct"
	Operation string `json:"operation,omitempty"`
	Server    string `json:"server,omitempty"`
	Tool      string `json:"tool,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	ErrorType string `json:"errorType,omitempty"`
	Ms        int64  `json:"ms,omitempty"`
}

// traceFile is one client session's trace.
type traceFile struct {
	mu                  sync.Mutex
	f                   *os.File
	bytes, events       int
	maxBytes, maxEvents int
	full                bool
}

// openTrace makes the trace file of a client session, or returns nil
// (no settings.trace, or a file that cannot be made, which is logged
// once per session).
func (s *Server) openTrace(ss *mcp.ServerSession) *traceFile {
	t := s.cfg.Settings.Trace
	if t == nil || ss == nil {
		return nil
	}
	dir := s.cfg.TraceDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.log.Warn("making the trace directory", "err", err)
		return nil
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	name := fmt.Sprintf("%s-%s.jsonl", time.Now().UTC().Format("20060102T150405Z"), hex.EncodeToString(id[:]))
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		s.log.Warn("making a trace file", "err", err)
		return nil
	}
	tf := &traceFile{f: f, maxBytes: t.MaxBytes, maxEvents: t.MaxEvents}
	ev := traceEvent{Event: "session"}
	if p := ss.InitializeParams(); p != nil {
		ev.Protocol = p.ProtocolVersion
		if p.ClientInfo != nil {
			ev.Client = p.ClientInfo.Name + " " + p.ClientInfo.Version
		}
	}
	tf.write(ev)
	return tf
}

// write appends an event, unless the file is full.
func (tf *traceFile) write(ev traceEvent) {
	if tf == nil {
		return
	}
	ev.Time = time.Now().UTC().Format(time.RFC3339Nano)
	line, err := json.Marshal(ev)
	if err != nil {
		return
	}
	line = append(line, '\n')
	tf.mu.Lock()
	defer tf.mu.Unlock()
	if tf.full || tf.f == nil {
		return
	}
	// Room is kept for the line that says the rest was dropped.
	if tf.events+2 > tf.maxEvents || tf.bytes+len(line)+128 > tf.maxBytes {
		tf.full = true
		line, _ = json.Marshal(traceEvent{Time: ev.Time, Event: "dropped"})
		line = append(line, '\n')
	}
	n, _ := tf.f.Write(line)
	tf.bytes += n
	tf.events++
}

// close writes the session's end and closes the file.
func (tf *traceFile) close() {
	if tf == nil {
		return
	}
	tf.write(traceEvent{Event: "end"})
	tf.mu.Lock()
	defer tf.mu.Unlock()
	if tf.f != nil {
		_ = tf.f.Close()
		tf.f = nil
	}
}

// trace returns the trace of a client session, opening it on first use;
// nil without settings.trace or a session.
func (s *Server) trace(ss *mcp.ServerSession) *traceFile {
	if s.cfg.Settings.Trace == nil || ss == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.sessions[ss]
	if !ok {
		return nil
	}
	if cs.trace == nil {
		cs.trace = s.openTrace(ss)
	}
	return cs.trace
}
