// Package otlptest is an OTLP/HTTP trace receiver for tests: an httptest
// server that decodes the protobuf export requests an exporter posts to
// /v1/traces and keeps their spans, and the raw bodies, so a test can
// check that something never appears in them.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver receives spans.
type Receiver struct {
	URL string // the base URL, as OTEL_EXPORTER_OTLP_ENDPOINT

	mu    sync.Mutex
	spans []Span
	raw   [][]byte
	got   chan struct{} // signalled after each export
}

// Span is a received span, with its attributes as strings.
type Span struct {
	Name           string
	Kind           tracepb.Span_SpanKind
	TraceID        string
	SpanID, Parent string
	Attrs          map[string]string
	Events         []string
	Status         tracepb.Status_StatusCode
}

// New starts a receiver, closed when the test ends.
func New(t testing.TB) *Receiver {
	r := &Receiver{got: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Method != http.MethodPost {
		http.NotFound(w, req)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(data, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.raw = append(r.raw, data)
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, convert(s))
			}
		}
	}
	r.mu.Unlock()
	select {
	case r.got <- struct{}{}:
	default:
	}
	resp, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(resp)
}

func convert(s *tracepb.Span) Span {
	out := Span{Name: s.Name, Kind: s.Kind, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
		Parent: hex.EncodeToString(s.ParentSpanId), Attrs: map[string]string{}}
	for _, kv := range s.Attributes {
		out.Attrs[kv.Key] = value(kv.Value)
	}
	for _, e := range s.Events {
		out.Events = append(out.Events, e.Name)
	}
	if s.Status != nil {
		out.Status = s.Status.Code
	}
	return out
}

func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	}
	return v.String()
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Contains reports whether any export request held s, anywhere.
func (r *Receiver) Contains(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.raw {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// Received is signalled after an export request has been received.
func (r *Receiver) Received() <-chan struct{} { return r.got }
