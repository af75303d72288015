package front

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// TestAdminEndpoint checks the admin endpoint over a real engine and the
// fixture server: it needs the bearer token, refuses a rebound Host, shows
// status with each server's source and last call, and the recent calls
// with their sizes, never an argument or a result.
func TestAdminEndpoint(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := t.TempDir()
	d := config.Dirs{Home: home}
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"f": fixture()}})
	os.MkdirAll(filepath.Dir(d.UserFile()), 0o755)
	if err := os.WriteFile(d.UserFile(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	calls := switchboard.NewCallLog(0)
	srv, err := New(t.Context(), config.Load(d), &Options{Engine: switchboard.Options{SpillDir: filepath.Join(home, "spill"), OnCall: calls.Add}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const token = "admin-test-token-0123456789"
	h, err := srv.Handler(HTTPOptions{Token: token, Admin: &Admin{Calls: calls, Version: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()

	const canary = "CANARY-4c1d-argument"
	g := &testGateway{srv: srv}
	if r := call(t, g.connect(t, nil), "mcp", map[string]any{"tool": "echo", "server": "f", "args": map[string]any{"text": canary}}); r.IsError {
		t.Fatalf("call: %s", text(r))
	}

	do := func(method, path string, mod func(*http.Request)) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if mod != nil {
			mod(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if strings.Contains(string(body), canary) || strings.Contains(string(body), token) {
			t.Errorf("%s %s shows an argument or the token:\n%s", method, path, body)
		}
		return resp.StatusCode, string(body)
	}
	for _, tt := range []struct {
		name, method, path string
		mod                func(*http.Request)
		want               int
	}{
		{"status without token", "GET", "/admin/status", func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusUnauthorized},
		{"calls without token", "GET", "/admin/calls", func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusUnauthorized},
		{"reconnect without token", "POST", "/admin/reconnect?server=f", func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusUnauthorized},
		{"wrong token", "GET", "/admin/status", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, http.StatusUnauthorized},
		{"rebinding host", "GET", "/admin/status", func(r *http.Request) { r.Host = "evil.example" }, http.StatusForbidden},
		{"foreign origin", "GET", "/admin/calls", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, http.StatusForbidden},
		{"reconnect by GET", "GET", "/admin/reconnect?server=f", nil, http.StatusMethodNotAllowed},
		{"reconnect no server", "POST", "/admin/reconnect", nil, http.StatusBadRequest},
		{"reconnect unknown server", "POST", "/admin/reconnect?server=nope", nil, http.StatusBadGateway},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, body := do(tt.method, tt.path, tt.mod); got != tt.want {
				t.Errorf("status %d, want %d; body:\n%s", got, tt.want, body)
			}
		})
	}

	code, body := do("GET", "/admin/calls", nil)
	var cs struct{ Calls []proxy.CallRecord }
	if err := json.Unmarshal([]byte(body), &cs); code != 200 || err != nil {
		t.Fatalf("calls: %d %v\n%s", code, err, body)
	}
	if len(cs.Calls) != 1 || cs.Calls[0].Server != "f" || cs.Calls[0].Tool != "echo" || cs.Calls[0].Outcome != "ok" ||
		cs.Calls[0].ArgsBytes != len(`{"text":"`+canary+`"}`) || cs.Calls[0].ResultBytes == 0 || cs.Calls[0].Start.IsZero() {
		t.Errorf("calls: %+v, want one ok call of echo on f with its sizes", cs.Calls)
	}

	code, body = do("GET", "/admin/status", nil)
	var st AdminStatus
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil {
		t.Fatalf("status: %d %v\n%s", code, err, body)
	}
	if st.Version != "test" || len(st.Servers) != 1 {
		t.Fatalf("status: %+v", st)
	}
	if s := st.Servers[0]; s.Name != "f" || s.State != "connected" || s.Source != d.UserFile() || s.LastCall.IsZero() || s.Tools <= 0 {
		t.Errorf("status of f: %+v, want connected, from %s, with a last call and its tools", s, d.UserFile())
	}

	if code, body := do("POST", "/admin/reconnect?server=f", nil); code != 200 || !strings.Contains(body, `"ok": true`) {
		t.Errorf("reconnect: %d\n%s", code, body)
	}

	// Without Admin, there is no admin endpoint.
	h2, _ := srv.Handler(HTTPOptions{Token: token})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/admin/status", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	h2.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound {
		t.Errorf("without Admin, /admin/status answers %d, want 404", rec.Code)
	}
}

func TestAdminByDefault(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:1": true, "[::1]:8080": true,
		"0.0.0.0:8080": false, ":8080": false, "192.0.2.1:80": false, "bad": false,
	} {
		if got := AdminByDefault(addr); got != want {
			t.Errorf("AdminByDefault(%q) = %v, want %v", addr, got, want)
		}
	}
}
