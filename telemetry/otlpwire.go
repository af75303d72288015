package telemetry

import (
	"encoding/binary"
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// This file encodes spans as an OTLP ExportTraceServiceRequest in protobuf
// (opentelemetry-proto, collector/trace/v1/trace_service.proto and
// trace/v1/trace.proto), by hand: the protobuf module's own wire package
// would bring back its descriptor runtime's initialisation (it hashes the
// executable at start-up), and the exporter module gRPC's. The field
// numbers are the proto's; TestEncodeRoundTrip decodes the output with the
// generated go.opentelemetry.io/proto/otlp types.

// Wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(appendTag(b, field, wireVarint), v)
}

func appendFixed64Field(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(appendTag(b, field, wireFixed64), v)
}

func appendFixed32Field(b []byte, field int, v uint32) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint32(appendTag(b, field, wireFixed32), v)
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

func appendStringField(b []byte, field int, v string) []byte {
	if v == "" {
		return b
	}
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

// appendMessage appends a length-delimited message that enc encodes, even
// an empty one (a present but empty message is not an absent one).
func appendMessage(b []byte, field int, enc func([]byte) []byte) []byte {
	msg := enc(nil)
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(msg)))
	return append(b, msg...)
}

// encodeSpans encodes spans as an ExportTraceServiceRequest, grouped by
// resource, then by instrumentation scope, in the order they come.
func encodeSpans(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct {
		res   *resource.Resource
		scope instrumentation.Scope
	}
	var resources []*resource.Resource
	scopes := map[*resource.Resource][]instrumentation.Scope{}
	byScope := map[scopeKey][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		k := scopeKey{s.Resource(), s.InstrumentationScope()}
		if _, ok := scopes[k.res]; !ok {
			resources = append(resources, k.res)
		}
		if _, ok := byScope[k]; !ok {
			scopes[k.res] = append(scopes[k.res], k.scope)
		}
		byScope[k] = append(byScope[k], s)
	}
	var b []byte
	for _, res := range resources {
		b = appendMessage(b, 1, func(b []byte) []byte { // ResourceSpans
			b = appendMessage(b, 1, func(b []byte) []byte { // Resource
				if res == nil {
					return b
				}
				for _, kv := range res.Attributes() {
					b = appendKeyValue(b, 1, kv)
				}
				return b
			})
			for _, sc := range scopes[res] {
				b = appendMessage(b, 2, func(b []byte) []byte { // ScopeSpans
					b = appendMessage(b, 1, func(b []byte) []byte { // InstrumentationScope
						b = appendStringField(b, 1, sc.Name)
						b = appendStringField(b, 2, sc.Version)
						for _, kv := range sc.Attributes.ToSlice() {
							b = appendKeyValue(b, 3, kv)
						}
						return b
					})
					for _, s := range byScope[scopeKey{res, sc}] {
						b = appendMessage(b, 2, func(b []byte) []byte { return appendSpan(b, s) })
					}
					return appendStringField(b, 3, sc.SchemaURL)
				})
			}
			if res != nil {
				b = appendStringField(b, 3, res.SchemaURL())
			}
			return b
		})
	}
	return b
}

// Span flags (trace.proto SpanFlags): the W3C trace flags in the low byte,
// and whether the parent is remote, and known to be or not.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytesField(b, 1, tid[:])
	b = appendBytesField(b, 2, sid[:])
	b = appendStringField(b, 3, sc.TraceState().String())
	if parent.SpanID().IsValid() {
		psid := parent.SpanID()
		b = appendBytesField(b, 4, psid[:])
	}
	b = appendStringField(b, 5, s.Name())
	b = appendVarintField(b, 6, uint64(spanKind(s.SpanKind())))
	b = appendFixed64Field(b, 7, unixNano(s.StartTime()))
	b = appendFixed64Field(b, 8, unixNano(s.EndTime()))
	for _, kv := range s.Attributes() {
		b = appendKeyValue(b, 9, kv)
	}
	b = appendVarintField(b, 10, uint64(max(s.DroppedAttributes(), 0)))
	for _, e := range s.Events() {
		b = appendMessage(b, 11, func(b []byte) []byte {
			b = appendFixed64Field(b, 1, unixNano(e.Time))
			b = appendStringField(b, 2, e.Name)
			for _, kv := range e.Attributes {
				b = appendKeyValue(b, 3, kv)
			}
			return appendVarintField(b, 4, uint64(max(e.DroppedAttributeCount, 0)))
		})
	}
	b = appendVarintField(b, 12, uint64(max(s.DroppedEvents(), 0)))
	for _, l := range s.Links() {
		b = appendMessage(b, 13, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = appendBytesField(b, 1, ltid[:])
			b = appendBytesField(b, 2, lsid[:])
			b = appendStringField(b, 3, l.SpanContext.TraceState().String())
			for _, kv := range l.Attributes {
				b = appendKeyValue(b, 4, kv)
			}
			b = appendVarintField(b, 5, uint64(max(l.DroppedAttributeCount, 0)))
			return appendFixed32Field(b, 6, spanFlags(l.SpanContext))
		})
	}
	b = appendVarintField(b, 14, uint64(max(s.DroppedLinks(), 0)))
	if st := s.Status(); st.Code != codes.Unset || st.Description != "" {
		b = appendMessage(b, 15, func(b []byte) []byte {
			b = appendStringField(b, 2, st.Description)
			return appendVarintField(b, 3, uint64(statusCode(st.Code)))
		})
	}
	return appendFixed32Field(b, 16, spanFlags(parent)|uint32(sc.TraceFlags()))
}

// spanFlags says whether sc, a parent or a link, is remote.
func spanFlags(sc trace.SpanContext) uint32 {
	f := uint32(flagHasIsRemote)
	if sc.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// unixNano is t in nanoseconds since 1970; 0, "unset", for the zero time
// or any time before 1970.
func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(max(t.UnixNano(), 0))
}

// spanKind maps a span kind to trace.proto's Span.SpanKind: the numbers
// are the same, unspecified (0) to consumer (5).
func spanKind(k trace.SpanKind) int {
	if k < trace.SpanKindUnspecified || k > trace.SpanKindConsumer {
		return 0
	}
	return int(k)
}

// statusCode maps a status code to trace.proto's Status.StatusCode, whose
// numbers differ: OK is 1 and ERROR 2 there.
func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

// appendKeyValue appends a common.proto KeyValue.
func appendKeyValue(b []byte, field int, kv attribute.KeyValue) []byte {
	return appendMessage(b, field, func(b []byte) []byte {
		b = appendStringField(b, 1, string(kv.Key))
		return appendMessage(b, 2, func(b []byte) []byte { return appendValue(b, kv.Value) })
	})
}

// appendValue appends the fields of a common.proto AnyValue: string 1,
// bool 2, int 3, double 4, array 5 (ArrayValue: values 1), kvlist 6
// (KeyValueList: values 1), bytes 7. A oneof is set even when zero.
func appendValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		return appendBool(b, v.AsBool())
	case attribute.INT64:
		return appendInt(b, v.AsInt64())
	case attribute.FLOAT64:
		return appendDouble(b, v.AsFloat64())
	case attribute.STRING:
		return appendString(b, v.AsString())
	case attribute.BYTESLICE:
		s := v.AsByteSlice()
		b = binary.AppendUvarint(appendTag(b, 7, wireBytes), uint64(len(s)))
		return append(b, s...)
	case attribute.BOOLSLICE:
		return appendArray(b, v.AsBoolSlice(), appendBool)
	case attribute.INT64SLICE:
		return appendArray(b, v.AsInt64Slice(), appendInt)
	case attribute.FLOAT64SLICE:
		return appendArray(b, v.AsFloat64Slice(), appendDouble)
	case attribute.STRINGSLICE:
		return appendArray(b, v.AsStringSlice(), appendString)
	case attribute.SLICE:
		return appendArray(b, v.AsSlice(), appendValue)
	case attribute.MAP:
		return appendMessage(b, 6, func(b []byte) []byte {
			for _, kv := range v.AsMap() {
				b = appendKeyValue(b, 1, kv)
			}
			return b
		})
	}
	return b // EMPTY: an AnyValue with nothing set
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(appendTag(b, 1, wireBytes), uint64(len(s)))
	return append(b, s...)
}

func appendBool(b []byte, v bool) []byte {
	n := uint64(0)
	if v {
		n = 1
	}
	return binary.AppendUvarint(appendTag(b, 2, wireVarint), n)
}

func appendInt(b []byte, v int64) []byte {
	return binary.AppendUvarint(appendTag(b, 3, wireVarint), uint64(v))
}

func appendDouble(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, 4, wireFixed64), math.Float64bits(v))
}

func appendArray[T any](b []byte, vs []T, each func([]byte, T) []byte) []byte {
	return appendMessage(b, 5, func(b []byte) []byte {
		for _, v := range vs {
			b = appendMessage(b, 1, func(b []byte) []byte { return each(b, v) })
		}
		return b
	})
}
