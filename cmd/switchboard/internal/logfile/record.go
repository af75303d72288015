package logfile

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// Record is one log line as logs --json prints it. Serve's own lines have
// stream "serve" and their message in Message; a stdio server's stderr
// has stream "stderr" and the line the server wrote in Message. The rest
// of the line's key=value pairs are in Fields, as the strings they were
// written as. A line that is not in slog's text format is all Message.
// Fields are only ever added to, never renamed.
type Record struct {
	Time    string            `json:"time,omitempty"`
	Level   string            `json:"level,omitempty"`
	Session string            `json:"session,omitempty"`
	Server  string            `json:"server,omitempty"`
	Stream  string            `json:"stream"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// Parse reads one line of the log (slog's text format, no newline).
func Parse(line string) Record {
	r := Record{Stream: "serve"}
	msg, hasMsg := "", false
	for k, v := range pairs(line) {
		switch k {
		case "time":
			r.Time = v
		case "level":
			r.Level = v
		case "session":
			r.Session = v
		case "server":
			r.Server = v
		case "msg":
			msg, hasMsg = v, true
		default:
			if r.Fields == nil {
				r.Fields = map[string]string{}
			}
			r.Fields[k] = v
		}
	}
	switch {
	case !hasMsg:
		return Record{Stream: "serve", Message: line}
	case msg == "stderr":
		r.Stream = "stderr"
		r.Message = r.Fields["line"]
		delete(r.Fields, "line")
		if len(r.Fields) == 0 {
			r.Fields = nil
		}
	default:
		r.Message = msg
	}
	return r
}

// JSONLines returns a writer that turns each log line written to it (one
// whole line per Write, as Show writes them) into a Record, written to w
// as one line of JSON.
func JSONLines(w io.Writer) io.Writer { return jsonLines{w} }

type jsonLines struct{ w io.Writer }

func (j jsonLines) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\r\n")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Parse(line)); err != nil {
		return 0, err
	}
	if _, err := j.w.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}
