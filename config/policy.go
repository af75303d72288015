package config

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/tailscale/hujson"
)

// ApproveMode says which calls of a server's tools ask a person first.
type ApproveMode string

// Approval modes (docs/policy.md).
const (
	// ApproveNever: no call asks (the default).
	ApproveNever ApproveMode = "never"
	// ApproveAlways: every call asks.
	ApproveAlways ApproveMode = "always"
	// ApproveDestructive: calls of tools whose annotations do not say
	// readOnlyHint: true and do not say destructiveHint: false ask; by the
	// protocol's defaults, a tool without annotations counts.
	ApproveDestructive ApproveMode = "destructive"
	// ApproveTools: calls of the tools whose original or prefixed names
	// match one of Approval.Tools ask.
	ApproveTools ApproveMode = "tools"
)

// Approval is an approval rule as written: settings.approve, or a server's
// approve, which replaces it for that server. The zero value asks nothing.
type Approval struct {
	Mode  ApproveMode
	Tools []string // globs, for ApproveTools
	// Approvers, when set, are the groups (settings.identity) whose
	// members approve the calls the rule covers, over the admin API
	// (switchboard approvals), instead of the caller: written
	// {"when": MODE-OR-GLOBS, "approvers": ["leads"]}.
	Approvers []string

	// Where the rule is written, for the errors and prompts that name it.
	File string
	Line int
	Path string // settings.approve or mcpServers.NAME.approve
}

// Set reports whether the rule asks for anything.
func (a Approval) Set() bool { return a.Mode != "" && a.Mode != ApproveNever }

// Where names the rule as file:line: path.
func (a Approval) Where() string {
	if a.File == "" {
		return "the default (never)"
	}
	if a.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", a.File, a.Line, a.Path)
	}
	return a.File + ": " + a.Path
}

// PinMode says how tool definitions are pinned (docs/policy.md).
type PinMode string

// Pin modes.
const (
	// PinOn quarantines a known tool whose definition changed; new tools
	// are reported and callable. The default.
	PinOn PinMode = "on"
	// PinStrict also quarantines tools that are new on a known server.
	PinStrict PinMode = "strict"
	// PinOff pins nothing.
	PinOff PinMode = "off"
)

// Audit configures the audit trail (settings.audit).
type Audit struct {
	// Payloads records calls' arguments and results too. Default false:
	// only names, decisions, durations, outcomes and sizes.
	Payloads bool
	// MaxBytes is the size at which the file is rotated; 0 means
	// DefaultAuditBytes.
	MaxBytes int64
}

// DefaultAuditBytes is the size at which the audit file is rotated.
const DefaultAuditBytes = 10 << 20

// policySettings holds the policy settings a file sets; nil fields are unset.
type policySettings struct {
	approve *Approval
	pin     *PinMode
	audit   *Audit
	offline *bool
}

// policyServer decodes a server's policy fields. It reports whether key is
// one of them.
func (d *decoder) policyServer(r *rawServer, key string, v *hujson.Value, p string) bool {
	switch key {
	case "approve":
		r.Approve = d.approval(v, p)
	case "pin":
		if m, ok := d.pinMode(v, p); ok {
			r.Pin = m
		}
	default:
		return false
	}
	return true
}

// policySetting decodes a policy setting. It reports whether key is one.
func (d *decoder) policySetting(s *fileSettings, key string, v *hujson.Value, p string) bool {
	switch key {
	case "approve":
		s.policy.approve = d.approval(v, p)
	case "pin":
		if m, ok := d.pinMode(v, p); ok {
			s.policy.pin = &m
		}
	case "audit":
		s.policy.audit = d.audit(v, p)
	case "offline":
		if b, ok := d.boolean(v, p); ok {
			s.policy.offline = &b
		}
	default:
		return false
	}
	return true
}

func (d *decoder) approval(v *hujson.Value, p string) *Approval {
	line, _ := d.position(v)
	a := &Approval{File: d.src.Path, Line: line, Path: p}
	if obj, ok := v.Value.(*hujson.Object); ok {
		return d.approvalObject(v, obj, p, a)
	}
	if _, ok := v.Value.(*hujson.Array); ok {
		globs, ok := d.strings(v, p)
		if !ok {
			return nil
		}
		for i, g := range globs {
			if why := badGlob(g); why != "" {
				d.errorf(v, fmt.Sprintf("%s[%d]", p, i), "invalid glob %q: %s", truncate(g, 80), why)
				return nil
			}
		}
		a.Mode, a.Tools = ApproveTools, globs
		return a
	}
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		d.errorf(v, p, `must be "never", "always", "destructive" or an array of tool-name globs such as ["write_*", "github_create_*"], not %s`, kindName(v))
		return nil
	}
	switch m := ApproveMode(lit.String()); m {
	case ApproveNever, ApproveAlways, ApproveDestructive:
		a.Mode = m
		return a
	}
	d.errorf(v, p, `must be "never", "always", "destructive" or an array of tool-name globs such as ["write_*"], not %q`, truncate(lit.String(), 40))
	return nil
}

// approvalObject decodes {"when": MODE-OR-GLOBS, "approvers": [GROUP…]}.
func (d *decoder) approvalObject(v *hujson.Value, obj *hujson.Object, p string, a *Approval) *Approval {
	var when *Approval
	var whenSet, approversSet bool
	for _, m := range d.members(obj, p) {
		mp := joinPath(p, m.key)
		switch m.key {
		case "when":
			whenSet = true
			if _, nested := m.value.Value.(*hujson.Object); nested {
				d.errorf(m.value, mp, `must be "never", "always", "destructive" or an array of tool-name globs, not an object`)
				return nil
			}
			if when = d.approval(m.value, mp); when == nil {
				return nil
			}
		case "approvers":
			approversSet = true
			groups, ok := d.strings(m.value, mp)
			if !ok {
				return nil
			}
			if len(groups) == 0 || slices.Contains(groups, "") {
				d.errorf(m.value, mp, `must name at least one group (settings.identity's groups claim), and no empty one; leave "approvers" out to ask the caller`)
				return nil
			}
			a.Approvers = groups
		default:
			d.errorf(m.value, mp, `unknown field %q (known fields: when, approvers)`, m.key)
			return nil
		}
	}
	if !whenSet || !approversSet {
		d.errorf(v, p, `an approval rule written as an object needs "when" (as "approve" takes it: "always", "destructive" or tool-name globs) and "approvers" (the groups that approve)`)
		return nil
	}
	a.Mode, a.Tools = when.Mode, when.Tools
	return a
}

// badGlob says what is wrong with a glob of an approval rule, or "". Only
// '*' and '?' are special; the syntax of other glob dialects would never
// match a tool name, and so would quietly ask for nothing.
func badGlob(g string) string {
	switch {
	case g == "":
		return "it is empty"
	case len(g) > 200:
		return "it is longer than 200 bytes"
	case strings.ContainsAny(g, "[]{}\\"):
		return "only * (any run of characters) and ? (one character) are special: [classes], {alternatives} and \\ escapes are not supported"
	}
	for _, r := range g {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return "tool names hold no spaces or control characters"
		}
	}
	return ""
}

func (d *decoder) pinMode(v *hujson.Value, p string) (PinMode, bool) {
	if lit, ok := v.Value.(hujson.Literal); ok {
		switch {
		case lit.Kind() == 't':
			return PinOn, true
		case lit.Kind() == 'f':
			return PinOff, true
		case lit.Kind() == '"' && lit.String() == "strict":
			return PinStrict, true
		}
	}
	d.errorf(v, p, `must be true (the default: a changed tool is quarantined), false (nothing is pinned) or "strict" (new tools are quarantined too)`)
	return "", false
}

func (d *decoder) audit(v *hujson.Value, path string) *Audit {
	obj, ok := d.object(v, path)
	if !ok {
		return nil
	}
	a := &Audit{}
	for _, m := range d.members(obj, path) {
		p := joinPath(path, m.key)
		switch m.key {
		case "payloads":
			a.Payloads, _ = d.boolean(m.value, p)
		case "maxBytes":
			if n, ok := d.integer(m.value, p, 64<<10, 1<<30); ok {
				a.MaxBytes = n
			}
		default:
			d.unknown(m.value, path, m.key, []string{"payloads", "maxBytes"})
		}
	}
	return a
}

func (st *Settings) mergePolicy(ps policySettings) {
	if ps.approve != nil {
		st.Approve = *ps.approve
	}
	if ps.pin != nil {
		st.Pin = *ps.pin
	}
	if ps.audit != nil {
		st.Audit = *ps.audit
	}
	if ps.offline != nil {
		st.Offline = *ps.offline
	}
}

// ApprovalRule returns the approval rule for the server's calls: its own
// approve, else settings.approve.
func (c *Config) ApprovalRule(s *Server) Approval {
	if s != nil && s.Approve != nil {
		return *s.Approve
	}
	return c.Settings.Approve
}

// PinModeOf returns how the server's tools are pinned: its own pin, else
// settings.pin, else PinOn.
func (c *Config) PinModeOf(s *Server) PinMode {
	if s != nil && s.Pin != "" {
		return s.Pin
	}
	if c.Settings.Pin != "" {
		return c.Settings.Pin
	}
	return PinOn
}
