package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodePolicy(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want string // in the first error; "" for none
	}{
		{"modes", srv(`{"command": "x", "approve": "destructive", "pin": "strict"}`), ""},
		{"globs", srv(`{"command": "x", "approve": ["write_*", "fs_?m"], "pin": false}`), ""},
		{"bad mode", srv(`{"command": "x", "approve": "sometimes"}`), `mcpServers.s.approve: must be "never", "always", "destructive" or an array`},
		{"bad type", srv(`{"command": "x", "approve": true}`), `not a boolean`},
		{"empty glob", srv(`{"command": "x", "approve": [""]}`), `mcpServers.s.approve[0]: invalid glob "": it is empty`},
		{"class glob", srv(`{"command": "x", "approve": ["write_[ab]"]}`), `invalid glob "write_[ab]": only * (any run of characters) and ? (one character) are special`},
		{"space glob", srv(`{"command": "x", "approve": ["write file"]}`), `no spaces`},
		{"bad pin", srv(`{"command": "x", "pin": "loose"}`), `mcpServers.s.pin: must be true`},
		{"settings", `{"settings": {"approve": ["*_delete"], "pin": true, "audit": {"payloads": true, "maxBytes": 65536}, "offline": true}}`, ""},
		{"audit unknown", `{"settings": {"audit": {"payload": true}}}`, `unknown field "payload"`},
		{"audit small", `{"settings": {"audit": {"maxBytes": 10}}}`, `must be a whole number from 65536`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems, _ := decode(KindUser, tc.text)
			var got string
			for _, p := range problems {
				if p.Severity == SeverityError {
					got = p.Error()
					break
				}
			}
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("first error %q, want one containing %q", got, tc.want)
			}
		})
	}
}

func TestPolicySettings(t *testing.T) {
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.user, `{
  "settings": {"approve": "destructive", "pin": "strict", "audit": {"payloads": true}, "offline": true},
  "mcpServers": {
    "a": {"command": "x"},
    "b": {"command": "x",
      "approve": ["write_*"], "pin": false}
  }
}`)
	c := Load(d)
	noErrors(t, c)
	a, _ := c.Server("a")
	b, _ := c.Server("b")
	want := Approval{Mode: ApproveDestructive, File: p.user, Line: 2, Path: "settings.approve"}
	if diff := cmp.Diff(want, c.ApprovalRule(a)); diff != "" {
		t.Errorf("a's rule (-want +got):\n%s", diff)
	}
	want = Approval{Mode: ApproveTools, Tools: []string{"write_*"}, File: p.user, Line: 6, Path: "mcpServers.b.approve"}
	if diff := cmp.Diff(want, c.ApprovalRule(b)); diff != "" {
		t.Errorf("b's rule (-want +got):\n%s", diff)
	}
	if got := c.ApprovalRule(b).Where(); got != p.user+":6: mcpServers.b.approve" {
		t.Errorf("Where = %q", got)
	}
	if c.PinModeOf(a) != PinStrict || c.PinModeOf(b) != PinOff || !c.Settings.Audit.Payloads || !c.Settings.Offline {
		t.Errorf("pin %s %s, audit %+v, offline %v", c.PinModeOf(a), c.PinModeOf(b), c.Settings.Audit, c.Settings.Offline)
	}
	if got := Load(newDirs(t)); got.PinModeOf(nil) != PinOn || got.ApprovalRule(nil).Set() {
		t.Errorf("defaults: pin %s, approve %+v; want on, never", got.PinModeOf(nil), got.ApprovalRule(nil))
	}
}
