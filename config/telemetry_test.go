package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSettingsTelemetry(t *testing.T) {
	cases := []struct {
		name, settings, endpoint, problem string
	}{
		{"endpoint", `{"telemetry": {"endpoint": "http://127.0.0.1:4318"}}`, "http://127.0.0.1:4318", ""},
		{"not a URL", `{"telemetry": {"endpoint": "127.0.0.1:4318"}}`, "", "settings.telemetry.endpoint: must be the http(s) URL of an OTLP/HTTP receiver"},
		{"unknown field", `{"telemetry": {"endpoint": "https://otel.example", "protocol": "grpc"}}`, "https://otel.example", "protocol"},
		{"absent", `{}`, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Dirs{Home: t.TempDir()}
			os.MkdirAll(filepath.Dir(d.UserFile()), 0o755)
			if err := os.WriteFile(d.UserFile(), []byte(`{"settings": `+c.settings+`}`), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := Load(d)
			if got := cfg.Settings.Telemetry.Endpoint; got != c.endpoint {
				t.Errorf("endpoint %q, want %q", got, c.endpoint)
			}
			var problems []string
			for _, p := range cfg.Problems {
				problems = append(problems, p.Error())
			}
			all := strings.Join(problems, "\n")
			if c.problem == "" && all != "" || c.problem != "" && !strings.Contains(all, c.problem) {
				t.Errorf("problems %q, want one with %q", all, c.problem)
			}
		})
	}
}
