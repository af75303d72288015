package front

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
)

// TestAdminStatusProblemsJSON pins the problems of /admin/status, byte for
// byte: errors, then warnings, each with its severity and the fields it
// has (the panel and other tools read them). One server's error blocks
// nothing else (issue 30).
func TestAdminStatusProblemsJSON(t *testing.T) {
	home := t.TempDir()
	d := config.Dirs{Home: home}
	if err := os.MkdirAll(filepath.Dir(d.UserFile()), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := "{\n  \"mcpServers\": {\n    \"ok\": {\"command\": \"x\", \"args\": [\"${TOKEN}\"]},\n    \"bad\": {\"command\": 5}\n  }\n}\n"
	if err := os.WriteFile(d.UserFile(), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(AdminStatusOf(nil, config.Load(d), nil))
	if err != nil {
		t.Fatal(err)
	}
	file, _ := json.Marshal(d.UserFile())
	want := strings.ReplaceAll(`{"servers":[],"problems":[`+
		`{"severity":"error","file":FILE,"line":4,"col":24,"path":"mcpServers.bad.command","server":"bad","message":"must be a string, not a number"},`+
		`{"severity":"warning","file":FILE,"line":3,"col":11,"path":"mcpServers.ok.args","server":"ok","message":"args is passed literally: the reference ${TOKEN} is not expanded there (only in env, headers and url)"}`+
		`]}`, "FILE", string(file))
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
