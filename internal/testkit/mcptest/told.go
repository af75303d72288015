package mcptest

import (
	"bytes"
	"io"
	"net/http"
)

// Told wraps a Streamable HTTP handler and sends on the returned channel
// (buffered, one value; more are dropped) when a POST carrying a message
// of the given method is accepted (answered 2xx). It observes what a
// client told the server: go-sdk's server queues a notification and may
// end the session (on the client's DELETE) before it handles it, so a
// receiving middleware would miss one the client did send.
func Told(h http.Handler, method string) (http.Handler, <-chan struct{}) {
	told := make(chan struct{}, 1)
	needle := []byte(`"method":"` + method + `"`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		if bytes.Contains(body, needle) && sw.status/100 == 2 {
			select {
			case told <- struct{}{}:
			default:
			}
		}
	}), told
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
