package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// Config says where traces go.
type Config struct {
	// Endpoint is settings.telemetry.endpoint: the base URL of an OTLP/HTTP
	// receiver (spans go to its /v1/traces). The standard environment
	// variables win over it.
	Endpoint string
	// Getenv reads the environment. Default: none is set.
	Getenv func(string) string
	// Version is the service version reported with the spans.
	Version string
}

// ShutdownTimeout bounds how long Shutdown waits for spans to be sent.
const ShutdownTimeout = 5 * time.Second

// Open returns a tracer exporting over OTLP/HTTP when an endpoint is
// configured (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT
// or Config.Endpoint), and nil otherwise, or when OTEL_SDK_DISABLED is true
// or OTEL_TRACES_EXPORTER is "none". The returned function sends the spans
// still buffered and stops the exporter, within ShutdownTimeout; it is
// never nil. The exporter (otlphttp.go) reads the other
// OTEL_EXPORTER_OTLP_* variables: headers, timeout, compression,
// certificates.
func Open(ctx context.Context, c Config) (*Tracer, func(), error) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	nothing := func() {}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return nil, nothing, nil
	}
	fromEnv := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	if !fromEnv && c.Endpoint == "" {
		return nil, nothing, nil
	}
	if e := getenv("OTEL_TRACES_EXPORTER"); e != "" && e != "otlp" {
		return nil, nothing, fmt.Errorf("OTEL_TRACES_EXPORTER is %q: switchboard exports traces with otlp (or none)", e)
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(k); p != "" && p != "http/protobuf" {
			return nil, nothing, fmt.Errorf("%s is %q: switchboard exports traces over http/protobuf only", k, p)
		}
	}
	var base string
	if !fromEnv {
		u, err := tracesURL(c.Endpoint)
		if err != nil {
			return nil, nothing, fmt.Errorf("settings.telemetry.endpoint: %w", err)
		}
		base = u
	}
	exp, err := newExporter(getenv, base)
	if err != nil {
		return nil, nothing, fmt.Errorf("starting the OTLP trace exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName(serviceName(getenv)), semconv.ServiceVersion(c.Version)))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	shutdown := func() {
		ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		_ = tp.Shutdown(ctx)
	}
	return New(tp), shutdown, nil
}

// tracesURL turns settings.telemetry.endpoint, a base URL like
// OTEL_EXPORTER_OTLP_ENDPOINT, into the URL spans are sent to.
func tracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL such as http://127.0.0.1:4318", endpoint)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	return u.String(), nil
}

func serviceName(getenv func(string) string) string {
	if n := getenv("OTEL_SERVICE_NAME"); n != "" {
		return n
	}
	return "switchboard"
}
