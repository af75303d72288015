package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// TestEncodeRoundTrip encodes spans of every shape (each attribute type,
// events, links, statuses, kinds, a remote parent, two resources and two
// scopes) and decodes them with the generated OTLP types.
func TestEncodeRoundTrip(t *testing.T) {
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, _ := trace.ParseTraceState("k=v")
	sc := func(sid byte, remote bool) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{sid, 0, 0, 0, 0, 0, 0, 1},
			TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: remote})
	}
	resA := resource.NewSchemaless(attribute.String("service.name", "switchboard"))
	resB := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.40.0", attribute.String("service.name", "other"))
	scope1 := instrumentation.Scope{Name: "switchboard", Version: "v1"}
	scope2 := instrumentation.Scope{Name: "two", Attributes: attribute.NewSet(attribute.Bool("b", true))}
	t0 := time.Unix(1700000000, 123)
	attrs := []attribute.KeyValue{
		attribute.String("s", "text"), attribute.String("empty", ""), attribute.Bool("t", true), attribute.Bool("f", false),
		attribute.Int64("i", -42), attribute.Int64("zero", 0), attribute.Float64("d", 2.5),
		attribute.StringSlice("ss", []string{"a", ""}), attribute.Int64Slice("is", []int64{1, -1}),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.Float64Slice("ds", []float64{0.5}),
	}
	stubs := tracetest.SpanStubs{
		{Name: "server", SpanContext: sc(1, false), Parent: sc(9, true), SpanKind: trace.SpanKindServer,
			StartTime: t0, EndTime: t0.Add(time.Millisecond), Attributes: attrs,
			Events: []sdktrace.Event{{Name: "attempt", Time: t0.Add(time.Microsecond), Attributes: []attribute.KeyValue{attribute.Int("n", 1)}, DroppedAttributeCount: 2}},
			Links:  []sdktrace.Link{{SpanContext: sc(7, true), Attributes: []attribute.KeyValue{attribute.String("l", "x")}}},
			Status: sdktrace.Status{Code: codes.Error, Description: "boom"}, DroppedAttributes: 3, DroppedEvents: 4, DroppedLinks: 5,
			Resource: resA, InstrumentationScope: scope1},
		{Name: "client", SpanContext: sc(2, false), Parent: sc(1, false), SpanKind: trace.SpanKindClient,
			StartTime: t0, EndTime: t0, Status: sdktrace.Status{Code: codes.Ok}, Resource: resA, InstrumentationScope: scope2},
		{Name: "root", SpanContext: sc(3, false), SpanKind: trace.SpanKindInternal, StartTime: t0, EndTime: t0,
			Resource: resB, InstrumentationScope: scope1},
		{Name: "again", SpanContext: sc(4, false), Resource: resA, InstrumentationScope: scope1},
	}
	var got coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(encodeSpans(stubs.Snapshots()), &got); err != nil {
		t.Fatal(err)
	}

	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	boolean := func(b bool) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
	}
	integer := func(i int64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
	}
	double := func(d float64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: d}}
	}
	array := func(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
	}
	kv := func(k string, v *commonpb.AnyValue) *commonpb.KeyValue { return &commonpb.KeyValue{Key: k, Value: v} }
	sid := func(b byte) []byte { return []byte{b, 0, 0, 0, 0, 0, 0, 1} }
	nanos := uint64(t0.UnixNano())
	const sampled, hasRemote, remote = 1, 0x100, 0x200
	want := &coltrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{
			Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", str("switchboard"))}},
			ScopeSpans: []*tracepb.ScopeSpans{
				{Scope: &commonpb.InstrumentationScope{Name: "switchboard", Version: "v1"}, Spans: []*tracepb.Span{
					{TraceId: tid[:], SpanId: sid(1), TraceState: "k=v", ParentSpanId: sid(9), Flags: sampled | hasRemote | remote,
						Name: "server", Kind: tracepb.Span_SPAN_KIND_SERVER, StartTimeUnixNano: nanos, EndTimeUnixNano: nanos + 1e6,
						Attributes: []*commonpb.KeyValue{
							kv("bs", array(boolean(true), boolean(false))), kv("d", double(2.5)), kv("ds", array(double(0.5))),
							kv("empty", str("")), kv("f", boolean(false)), kv("i", integer(-42)), kv("is", array(integer(1), integer(-1))),
							kv("s", str("text")), kv("ss", array(str("a"), str(""))), kv("t", boolean(true)), kv("zero", integer(0)),
						},
						DroppedAttributesCount: 3,
						Events: []*tracepb.Span_Event{{TimeUnixNano: nanos + 1000, Name: "attempt",
							Attributes: []*commonpb.KeyValue{kv("n", integer(1))}, DroppedAttributesCount: 2}},
						DroppedEventsCount: 4,
						Links: []*tracepb.Span_Link{{TraceId: tid[:], SpanId: sid(7), TraceState: "k=v",
							Attributes: []*commonpb.KeyValue{kv("l", str("x"))}, Flags: hasRemote | remote}},
						DroppedLinksCount: 5,
						Status:            &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "boom"},
					},
					{TraceId: tid[:], SpanId: sid(4), TraceState: "k=v", Flags: sampled | hasRemote, Name: "again",
						StartTimeUnixNano: 0, EndTimeUnixNano: 0},
				}},
				{Scope: &commonpb.InstrumentationScope{Name: "two", Attributes: []*commonpb.KeyValue{kv("b", boolean(true))}}, Spans: []*tracepb.Span{
					{TraceId: tid[:], SpanId: sid(2), TraceState: "k=v", ParentSpanId: sid(1), Flags: sampled | hasRemote,
						Name: "client", Kind: tracepb.Span_SPAN_KIND_CLIENT, StartTimeUnixNano: nanos, EndTimeUnixNano: nanos,
						Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}},
				}},
			},
		},
		{
			Resource:  &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", str("other"))}},
			SchemaUrl: "https://opentelemetry.io/schemas/1.40.0",
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: "switchboard", Version: "v1"}, Spans: []*tracepb.Span{
				{TraceId: tid[:], SpanId: sid(3), TraceState: "k=v", Flags: sampled | hasRemote, Name: "root",
					Kind: tracepb.Span_SPAN_KIND_INTERNAL, StartTimeUnixNano: nanos, EndTimeUnixNano: nanos},
			}}},
		},
	}}
	// The zero time is before 1970: its span times are 0, as "unset".
	if diff := cmp.Diff(want, &got, protocmp.Transform(),
		protocmp.SortRepeated(func(a, b *commonpb.KeyValue) bool { return a.Key < b.Key })); diff != "" {
		t.Errorf("decoded request (-want +got):\n%s", diff)
	}
}

// TestExporterEnvironment sends a batch through an exporter configured by
// the OTEL_EXPORTER_OTLP_* variables and checks the request the receiver
// got: URL, headers, compression.
func TestExporterEnvironment(t *testing.T) {
	type request struct {
		path, auth, tenant, encoding, ctype string
		spans                               int
	}
	var mu sync.Mutex
	var got []request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		data, _ := io.ReadAll(body)
		var msg coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(data, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, request{r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Tenant"),
			r.Header.Get("Content-Encoding"), r.Header.Get("Content-Type"), len(msg.ResourceSpans[0].ScopeSpans[0].Spans)})
		mu.Unlock()
	}))
	defer srv.Close()
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":        srv.URL + "/base/",
		"OTEL_EXPORTER_OTLP_HEADERS":         "ignored=1",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":  "Authorization=Bearer%20k, X-Tenant=a%2Cb",
		"OTEL_EXPORTER_OTLP_COMPRESSION":     "gzip",
		"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT":  "5000",
		"OTEL_EXPORTER_OTLP_CERTIFICATE":     "",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
	}
	e, err := newExporter(func(k string) string { return env[k] }, "")
	if err != nil {
		t.Fatal(err)
	}
	if e.timeout != 5*time.Second {
		t.Errorf("timeout %v, want 5s", e.timeout)
	}
	stubs := tracetest.SpanStubs{{Name: "a"}, {Name: "b"}}
	if err := e.ExportSpans(t.Context(), stubs.Snapshots()); err != nil {
		t.Fatal(err)
	}
	_ = e.Shutdown(t.Context())
	want := []request{{"/base/v1/traces", "Bearer k", "a,b", "gzip", "application/x-protobuf", 2}}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(request{})); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestExporterRefusesBadEnvironment names the variable at fault.
func TestExporterRefusesBadEnvironment(t *testing.T) {
	for _, c := range []struct{ key, val, want string }{
		{"OTEL_EXPORTER_OTLP_TIMEOUT", "soon", "OTEL_EXPORTER_OTLP_TIMEOUT"},
		{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "zstd", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"},
		{"OTEL_EXPORTER_OTLP_HEADERS", "novalue", "OTEL_EXPORTER_OTLP_HEADERS"},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem", "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{"OTEL_EXPORTER_OTLP_CLIENT_KEY", "/k.pem", "go together"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "localhost:4318", "not an http(s) URL"},
	} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", c.key: c.val}
		_, err := newExporter(func(k string) string { return env[k] }, "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%q: err %v, want it to say %q", c.key, c.val, err, c.want)
		}
	}
}

// TestExporterRetries answers 503 with Retry-After 0 once, then 200: the
// batch is sent again, the same bytes.
func TestExporterRetries(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, data)
		n := len(bodies)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	e, err := newExporter(func(string) string { return "" }, srv.URL+"/v1/traces")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown(context.Background())
	stubs := tracetest.SpanStubs{{Name: "a"}}
	if err := e.ExportSpans(t.Context(), stubs.Snapshots()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || !bytes.Equal(bodies[0], bodies[1]) {
		t.Fatalf("%d requests, want the same batch twice", len(bodies))
	}
}

// TestExporterShutdownEndsExport: an export to a receiver that never
// answers ends when the exporter is shut down, not at its timeout.
func TestExporterShutdownEndsExport(t *testing.T) {
	hung, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(hung)
		<-release
	}))
	defer srv.Close()
	defer close(release)
	e, err := newExporter(func(k string) string {
		if k == "OTEL_EXPORTER_OTLP_TIMEOUT" {
			return "3600000" // an hour: only Shutdown can end the export
		}
		return ""
	}, srv.URL+"/v1/traces")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	stubs := tracetest.SpanStubs{{Name: "a"}}
	go func() { done <- e.ExportSpans(context.Background(), stubs.Snapshots()) }()
	<-hung
	_ = e.Shutdown(context.Background())
	if err := <-done; err == nil {
		t.Fatal("the export ended without an error")
	}
}
