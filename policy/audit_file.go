package policy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/privfile"
)

// AuditFile is the name of the audit trail in the state directory; the
// rotated one has ".1" appended.
const AuditFile = "audit.jsonl"

// FileAuditor appends records to the audit trail in a file: JSON lines
// of mode 0600, rotated when it would grow past its bound (the file before
// is kept as AuditFile.1, so the trail takes about twice the bound).
// Several processes may write the same file: each write is one append of
// whole lines, and a writer checks every second whether another rotated
// the file (then it opens the new one) or grew it (which counts toward the
// bound from then on). The file keeps no ID, Replica or Seq: its lines are
// in the order they were written, on one machine. Its methods are safe for
// concurrent use; a nil *FileAuditor records nothing.
//
// Records written at the same time go to the file together (a group
// commit): while one batch of lines is being written, the next gathers
// the lines that come meanwhile, and its first writer writes it after.
// Write returns once its line is in the file, with the error of its
// batch; under concurrent calls the file takes fewer appends than records.
type FileAuditor struct {
	path     string
	max      int64
	payloads bool

	mu      sync.Mutex
	next    *auditBatch // the batch lines join; nil when none is gathering
	writing bool        // a batch is being written (without mu); the file is its writer's
	idle    sync.Cond   // on mu: writing became false

	// The file, owned by whoever set writing (or holds mu while nothing
	// is written: Close).
	f       *os.File
	checked time.Time // when the file was last checked to be the one named path
	size    int64     // its size then, plus what this writer wrote since
}

// An auditBatch is lines written to the file in one append.
type auditBatch struct {
	lines *bytes.Buffer
	err   error         // set before done is closed
	done  chan struct{} // closed once the batch was written, or failed
}

// OpenAudit returns an auditor that writes to path, rotated at maxBytes.
// With payloads, records keep their arguments and results. Nothing is
// opened until the first record.
func OpenAudit(path string, maxBytes int64, payloads bool) *FileAuditor {
	if maxBytes <= 0 {
		maxBytes = config.DefaultAuditBytes
	}
	a := &FileAuditor{path: path, max: maxBytes, payloads: payloads}
	a.idle.L = &a.mu
	return a
}

// Path returns the file's path.
func (a *FileAuditor) Path() string { return a.path }

// Payloads reports whether records keep arguments and results.
func (a *FileAuditor) Payloads() bool { return a != nil && a.payloads }

// Write appends r, stamped with the time when it has none. Arguments and
// results are dropped unless payloads were asked for. A local file is not
// slow the way a database can be: ctx is not used.
func (a *FileAuditor) Write(_ context.Context, r Record) error {
	if a == nil {
		return nil
	}
	r = prepare(r, a.payloads)
	r.ID, r.Replica, r.Seq = 0, "", 0
	buf := lines.Get().(*bytes.Buffer)
	// The line as json.Marshal writes it, and its newline (Encode's).
	if err := json.NewEncoder(buf).Encode(&r); err != nil {
		putLine(buf)
		return fmt.Errorf("writing the audit trail: %w", err)
	}
	a.mu.Lock()
	if b := a.next; b != nil { // join the batch gathering, which its first writer writes
		b.lines.Write(buf.Bytes())
		a.mu.Unlock()
		putLine(buf)
		<-b.done
		return b.err
	}
	b := &auditBatch{lines: buf, done: make(chan struct{})}
	a.next = b
	for a.writing {
		a.idle.Wait() // the batch before is being written; lines join this one meanwhile
	}
	a.next, a.writing = nil, true
	a.mu.Unlock()
	b.err = a.write(b.lines.Bytes())
	if b.err != nil {
		b.err = fmt.Errorf("writing the audit trail %s: %w", a.path, b.err)
	}
	close(b.done)
	a.mu.Lock()
	a.writing = false
	a.idle.Broadcast()
	a.mu.Unlock()
	putLine(b.lines)
	return b.err
}

// lines holds the buffers Write encodes its records in.
var lines = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putLine returns buf to the pool, unless a record with large payloads
// (or a large batch) grew it.
func putLine(buf *bytes.Buffer) {
	if buf.Cap() <= 64<<10 {
		buf.Reset()
		lines.Put(buf)
	}
}

// Read reads the records of the file that pass f, oldest first.
func (a *FileAuditor) Read(_ context.Context, f Filter) (*Trail, error) {
	recs, skipped, err := ReadAudit(a.path, f)
	return &Trail{Records: recs, Unreadable: skipped}, err
}

func (a *FileAuditor) write(line []byte) error {
	if err := a.open(); err != nil {
		return err
	}
	if a.size > 0 && a.size+int64(len(line)) > a.max {
		if err := a.rotate(); err != nil {
			return err
		}
	}
	n, err := a.f.Write(line)
	a.size += int64(n)
	return err
}

// reopenAfter is how often a writer checks that another process has not
// rotated the file under it; records written meanwhile go to the rotated
// file, which is read too.
const reopenAfter = time.Second

// open opens the file, again when another process rotated it.
func (a *FileAuditor) open() error {
	if a.f != nil {
		if time.Since(a.checked) < reopenAfter {
			return nil
		}
		cur, err1 := a.f.Stat()
		named, err2 := os.Stat(a.path)
		if err1 == nil && err2 == nil && os.SameFile(cur, named) {
			// Other processes' records count from here on.
			a.checked, a.size = time.Now(), cur.Size()
			return nil
		}
		a.f.Close()
		a.f = nil
	}
	if err := privfile.MkdirAll(filepath.Dir(a.path)); err != nil {
		return err
	}
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := privfile.Restrict(a.path); err != nil {
		f.Close()
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	a.f, a.checked, a.size = f, time.Now(), st.Size()
	return nil
}

func (a *FileAuditor) rotate() error {
	a.f.Close()
	a.f = nil
	if err := privfile.Replace(a.path, a.path+".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return a.open()
}

// Close closes the file. It is idempotent.
func (a *FileAuditor) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.writing {
		a.idle.Wait()
	}
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

// maxAuditLine bounds a line read back: a record with payloads is bounded
// by the output limit, far below.
const maxAuditLine = 64 << 20

// ReadAudit reads the records of the trail at path (the rotated file
// first) that pass f, oldest first. Lines that do not parse are skipped
// and counted.
func ReadAudit(path string, f Filter) (recs []Record, skipped int, err error) {
	for _, p := range []string{path + ".1", path} {
		n, err := readAuditFile(p, f, &recs)
		skipped += n
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return recs, skipped, fmt.Errorf("reading the audit trail: %w", err)
		}
	}
	return recs, skipped, nil
}

func readAuditFile(path string, f Filter, recs *[]Record) (skipped int, err error) {
	file, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, 64<<10)
	for {
		line, err := readLine(r)
		if len(line) > 0 {
			var rec Record
			if json.Unmarshal(line, &rec) != nil {
				skipped++
			} else if (f.Server == "" || rec.Server == f.Server) && (f.User == "" || rec.User == f.User) && !rec.Time.Before(f.Since) {
				*recs = append(*recs, rec)
			}
		}
		if err == io.EOF {
			return skipped, nil
		}
		if err != nil {
			return skipped, err
		}
	}
}

// readLine reads one line, at most maxAuditLine bytes; a longer one is
// returned cut, and will not parse.
func readLine(r *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(out)+len(chunk) <= maxAuditLine {
			out = append(out, chunk...)
		}
		if err != bufio.ErrBufferFull {
			return out, err
		}
	}
}
