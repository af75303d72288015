package policy

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The choices of an approval form, as the person sees them. They are plain
// enum values, which every client that supports form elicitation renders.
const (
	choiceOnce    = "allow once"
	choiceSession = "allow for this session"
	choiceDeny    = "deny"
)

// maxFormArgs bounds the arguments shown in an approval form.
const maxFormArgs = 4000

// ElicitParams returns the form-mode elicitation that asks the client's
// user about req: the tool, the server, the arguments as the server will
// see them (bounded to a few kilobytes; the form says when they were
// cut), and the three choices.
func ElicitParams(req *Request) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: formMessage(req),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{
					"type":        "string",
					"title":       "Decision",
					"description": fmt.Sprintf("Allow the call of %s on %s?", req.Tool, req.Server),
					"enum":        []any{choiceOnce, choiceSession, choiceDeny},
				},
			},
			"required": []any{"decision"},
		},
		Meta: mcp.Meta{"io.switchboard/approval": map[string]any{"server": req.Server, "tool": req.Tool, "rule": req.Rule.Where()}},
	}
}

func formMessage(req *Request) string {
	return fmt.Sprintf("Switchboard: an agent wants to call the tool %q on the server %q.\nThis needs approval by the rule at %s.\nArguments, as the server will see them:\n%s",
		req.Tool, req.Server, req.Rule.Where(), ArgsPreview(req.Args, maxFormArgs))
}

// ArgsPreview returns the arguments as indented JSON of at most max bytes,
// saying how much was left out.
func ArgsPreview(args any, max int) string {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.MarshalIndent(args, "", "  ")
	if err != nil {
		return fmt.Sprintf("(the arguments cannot be shown: %v)", err)
	}
	if len(b) <= max {
		return string(b)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return fmt.Sprintf("%s\n… (%d more bytes not shown)", b[:cut], len(b)-cut)
}

// Decide reads a client's answer to an approval form. Decline and cancel
// are Deny; an accept without one of the three choices is malformed, an
// error.
func Decide(res *mcp.ElicitResult) (Decision, error) {
	if res == nil {
		return Deny, fmt.Errorf("the client's answer was empty")
	}
	switch res.Action {
	case "decline", "cancel":
		return Deny, nil
	case "accept":
	default:
		return Deny, fmt.Errorf("the client's answer has the unknown action %q", truncate(res.Action, 40))
	}
	v, _ := res.Content["decision"].(string)
	switch v {
	case choiceOnce:
		return AllowOnce, nil
	case choiceSession:
		return AllowSession, nil
	case choiceDeny:
		return Deny, nil
	}
	return Deny, fmt.Errorf("the client's answer has no decision of %q, %q or %q", choiceOnce, choiceSession, choiceDeny)
}

// ErrNoElicitation is an approver's error when the client of the call did
// not declare elicitation, so it cannot be shown the approval form. It
// matches ErrNoApprover: the denial says how else the call can be approved.
var ErrNoElicitation error = noElicitation{}

type noElicitation struct{}

func (noElicitation) Error() string {
	return "the connected client did not declare elicitation, so it cannot be asked"
}

func (noElicitation) Is(target error) bool { return target == ErrNoApprover }

// unaskedText is the text of a denial because no one could be asked: the
// rule, and every way to have the call approved.
func unaskedText(req *Request, why string) string {
	return fmt.Sprintf("call of %q on %q not approved (%s), so it was sent nowhere: it needs approval by the rule at %s, and no one could be asked; "+
		"hint: to have it approved, make the call from a client that supports elicitation (it is shown an approval form), "+
		"run it from a terminal with switchboard call %s --server %s --yes (it asks there without --yes), "+
		"or change the rule at %s so that it does not cover %q (for example \"approve\": [\"tool globs\"] lists only the tools that ask)",
		req.Tool, req.Server, why, req.Rule.Where(), req.Tool, req.Server, req.Rule.Where(), req.Tool)
}
