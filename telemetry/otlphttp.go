package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// An exporter posts spans to an OTLP/HTTP receiver as protobuf (the
// http/protobuf protocol of the OTLP specification), one request per batch
// the SDK's batcher hands it. It is switchboard's own: the OpenTelemetry
// exporter module brought gRPC and the protobuf runtime into the binary
// (10 MB of its 43, and their start-up), for a request this file makes
// with net/http and otlpwire.go.
type exporter struct {
	url      string
	headers  map[string]string
	gzip     bool
	timeout  time.Duration
	client   *http.Client
	stop     context.Context // cancelled by Shutdown: ends an export in flight
	shutdown context.CancelFunc
	once     sync.Once
}

// Defaults and bounds of the OTLP exporter specification.
const (
	defaultExportTimeout = 10 * time.Second
	maxRetryWait         = 30 * time.Second
	firstRetryWait       = time.Second
)

// exporterConfig reads the OTEL_EXPORTER_OTLP_* variables (the traces
// variant of each first), as the specification defines them: the endpoint
// (a base URL, to which /v1/traces is added; the traces endpoint is taken
// as it is), headers ("k=v,k2=v2", URL-encoded), the timeout of an export
// in milliseconds, the compression (gzip or none), and the certificates to
// trust and to present. base is settings.telemetry.endpoint's traces URL,
// used when no endpoint variable is set.
func newExporter(getenv func(string) string, base string) (*exporter, error) {
	env := func(name string) (key, val string) {
		if v := getenv("OTEL_EXPORTER_OTLP_TRACES_" + name); v != "" {
			return "OTEL_EXPORTER_OTLP_TRACES_" + name, v
		}
		return "OTEL_EXPORTER_OTLP_" + name, getenv("OTEL_EXPORTER_OTLP_" + name)
	}
	e := &exporter{url: base, timeout: defaultExportTimeout, headers: map[string]string{}}
	if v := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
		e.url = v
	} else if v := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		u, err := tracesURL(v)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
		}
		e.url = u
	}
	if u, err := url.Parse(e.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the OTLP traces endpoint %q is not an http(s) URL such as http://127.0.0.1:4318/v1/traces", e.url)
	}
	if k, v := env("HEADERS"); v != "" {
		h, err := parseHeaders(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		e.headers = h
	}
	if k, v := env("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("%s is %q: want a number of milliseconds", k, v)
		}
		e.timeout = time.Duration(ms) * time.Millisecond
	}
	switch k, v := env("COMPRESSION"); strings.ToLower(strings.TrimSpace(v)) {
	case "gzip":
		e.gzip = true
	case "", "none":
	default:
		return nil, fmt.Errorf("%s is %q: want gzip or none", k, v)
	}
	tlsConfig, err := tlsFromEnv(env)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tlsConfig != nil {
		tr.TLSClientConfig = tlsConfig
	}
	e.client = &http.Client{Transport: tr}
	e.stop, e.shutdown = context.WithCancel(context.Background())
	return e, nil
}

// parseHeaders parses "k=v,k2=v2", keys and values URL-encoded.
func parseHeaders(s string) (map[string]string, error) {
	h := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k, err1 := url.PathUnescape(strings.TrimSpace(k))
		v, err2 := url.PathUnescape(strings.TrimSpace(v))
		if !ok || k == "" || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%q is not key=value", pair)
		}
		h[k] = v
	}
	return h, nil
}

// tlsFromEnv reads the CA certificate to trust and the client certificate
// and key to present, if set; nil when none is.
func tlsFromEnv(env func(string) (string, string)) (*tls.Config, error) {
	kCA, ca := env("CERTIFICATE")
	kCert, cert := env("CLIENT_CERTIFICATE")
	kKey, key := env("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	c := &tls.Config{}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kCA, err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate", kCA, ca)
		}
	}
	if cert != "" || key != "" {
		if cert == "" || key == "" {
			return nil, fmt.Errorf("%s and %s go together: set both or neither", kCert, kKey)
		}
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", kCert, kKey, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// ExportSpans posts spans, within the export timeout, retrying while the
// receiver says it is busy or unavailable (429, 502, 503, 504: after its
// Retry-After, or a wait that doubles from a second) or cannot be reached.
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body := encodeSpans(spans)
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = buf.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	defer context.AfterFunc(e.stop, cancel)()
	wait := firstRetryWait
	for {
		retry, after, err := e.post(ctx, body)
		if !retry {
			return err
		}
		if after <= 0 {
			after, wait = wait, min(2*wait, maxRetryWait)
		}
		t := time.NewTimer(after)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("exporting spans to %s: %w (last: %v)", e.url, ctx.Err(), err)
		}
	}
}

// post makes one request. It says whether to retry, and after how long if
// the receiver said.
func (e *exporter) post(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "switchboard OTLP/HTTP exporter")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return ctx.Err() == nil, 0, fmt.Errorf("exporting spans: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 == 2 {
		return false, 0, nil
	}
	err = fmt.Errorf("exporting spans to %s: %s", e.url, resp.Status)
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return true, min(time.Duration(secs)*time.Second, maxRetryWait), err
	}
	if len(msg) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/") {
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(msg)))
	}
	return false, 0, err
}

// Shutdown ends an export in flight and closes idle connections. The SDK
// flushes what it holds before calling it.
func (e *exporter) Shutdown(ctx context.Context) error {
	e.once.Do(func() {
		e.shutdown()
		e.client.CloseIdleConnections()
	})
	return nil
}

var _ sdktrace.SpanExporter = (*exporter)(nil)
