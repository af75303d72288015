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

func TestSettingsStore(t *testing.T) {
	cases := []struct {
		name, settings string
		want           *Store
		problem        string
	}{
		{"absent", `{}`, nil, ""},
		{"references", `{"store": {"postgres": "${DATABASE_URL}", "key": "${SB_KEY}"}}`, &Store{Postgres: "${DATABASE_URL}", Key: "${SB_KEY}"}, ""},
		{"literal URL", `{"store": {"postgres": "postgres://u:hunter2@db/x", "key": "${K}"}}`, nil, "settings.store.postgres: must be one ${VAR} reference"},
		{"secret reference", `{"store": {"postgres": "${secret:DB}", "key": "${K}"}}`, nil, "settings.store.postgres: must be one ${VAR} reference"},
		{"reference inside text", `{"store": {"postgres": "postgres://${U}@db/x", "key": "${K}"}}`, nil, "settings.store.postgres: must be one ${VAR} reference"},
		{"no key", `{"store": {"postgres": "${DATABASE_URL}"}}`, nil, `settings.store: needs "key"`},
		{"no postgres", `{"store": {"key": "${K}"}}`, nil, `settings.store: needs "postgres"`},
		{"unknown field", `{"store": {"postgres": "${D}", "key": "${K}", "redis": "${R}"}}`, &Store{Postgres: "${D}", Key: "${K}"}, "redis"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Dirs{Home: t.TempDir()}
			os.MkdirAll(filepath.Dir(d.UserFile()), 0o755)
			if err := os.WriteFile(d.UserFile(), []byte(`{"settings": `+c.settings+`}`), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := Load(d)
			got := cfg.Settings.Store
			if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
				t.Errorf("Store = %+v, want %+v", got, c.want)
			}
			var problems []string
			for _, p := range cfg.Problems {
				problems = append(problems, p.Error())
			}
			all := strings.Join(problems, "\n")
			if c.problem == "" && all != "" || c.problem != "" && !strings.Contains(all, c.problem) {
				t.Errorf("problems %q, want one with %q", all, c.problem)
			}
			if strings.Contains(all, "hunter2") {
				t.Errorf("a problem shows the literal: %q", all)
			}
		})
	}
}

func TestStoreResolve(t *testing.T) {
	s := &Store{Postgres: "${DATABASE_URL}", Key: "${SB_KEY}"}
	env := map[string]string{}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if _, _, err := s.Resolve(lookup); err == nil || !strings.Contains(err.Error(), "DATABASE_URL is not set") {
		t.Fatalf("unset URL: %v", err)
	}
	env["DATABASE_URL"] = "postgres://u@127.0.0.1/db"
	if _, _, err := s.Resolve(lookup); err == nil || !strings.Contains(err.Error(), "SB_KEY is not set") {
		t.Fatalf("unset key: %v", err)
	}
	env["SB_KEY"] = "c2hvcnQ=" // "short"
	if _, _, err := s.Resolve(lookup); err == nil || !strings.Contains(err.Error(), "32 random bytes") || strings.Contains(err.Error(), "c2hvcnQ") {
		t.Fatalf("short key: %v", err)
	}
	env["SB_KEY"] = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n"
	dsn, key, err := s.Resolve(lookup)
	if err != nil || dsn != env["DATABASE_URL"] || len(key) != 32 || key[31] != 31 {
		t.Fatalf("Resolve = %q, %v, %v", dsn, key, err)
	}
}

// A trusted project still cannot move where credentials are kept.
func TestSettingsStoreNotInProject(t *testing.T) {
	d := Dirs{Home: t.TempDir(), Project: t.TempDir()}
	os.MkdirAll(filepath.Dir(d.ProjectFile()), 0o755)
	if err := os.WriteFile(d.ProjectFile(), []byte(`{"settings": {"store": {"postgres": "${DATABASE_URL}", "key": "${K}"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	trust(t, d)
	cfg := Load(d)
	if cfg.Settings.Store != nil {
		t.Errorf("a project's settings.store applied: %+v", cfg.Settings.Store)
	}
	var all []string
	for _, p := range cfg.Problems {
		all = append(all, p.Error())
	}
	if !strings.Contains(strings.Join(all, "\n"), "settings.store: belongs in your own configuration file") {
		t.Errorf("problems %q, want settings.store refused in a project", all)
	}
}
