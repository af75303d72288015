package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// Action is what a request asks for.
type Action string

// Actions, one per row of the request table in DESIGN.md.
const (
	ActionStatus        Action = "status"
	ActionServer        Action = "server" // connect a server and list its tools
	ActionSearch        Action = "search"
	ActionDescribe      Action = "describe"
	ActionCall          Action = "call"
	ActionResourcesList Action = "resources.list"
	ActionResourcesRead Action = "resources.read"
	ActionPromptsList   Action = "prompts.list"
	ActionPromptsGet    Action = "prompts.get"
	ActionInstructions  Action = "instructions"
	ActionReconnect     Action = "reconnect"
	ActionConnect       Action = "connect"       // connect now, or again: {"connect": s}
	ActionAuthStart     Action = "auth-start"    // start an OAuth login: the URL to open
	ActionAuthComplete  Action = "auth-complete" // finish it with the pasted redirect
)

// Operations are the values of the "operation" field.
var Operations = []Action{ActionResourcesList, ActionResourcesRead, ActionPromptsList, ActionPromptsGet, ActionInstructions, ActionReconnect,
	ActionConnect, ActionAuthStart, ActionAuthComplete}

// Request is a validated request.
type Request struct {
	Action   Action
	Server   string
	Query    string   // search: the query, or the queries joined by "; "
	Queries  []string // search given a list: one need per query
	Limit    int      // search; default DefaultLimit
	Offset   int      // search
	Regex    bool     // search
	Name     string   // describe, call
	Args     map[string]any
	Resource string // resources.read
	Prompt   string // prompts.get

	// auth-complete: the redirect URL the browser was sent to, or the code
	// alone; exactly one is set.
	RedirectURL string
	Code        string
	// IncludeSchemas (search, describe) adds each tool's parameters as a
	// compact TypeScript shape (see tsShape); describe adds its output's.
	IncludeSchemas bool
	// IncludeDisabled (search) also searches what the catalog kept of
	// disabled servers, marking their tools; it never starts them.
	IncludeDisabled bool
	// Explain (search) says of each tool what placed it: which fields the
	// query's words matched, and which understanding steps (the query's
	// action, the server's topic, the copy that works) moved it.
	Explain bool
}

// Search limits.
const (
	DefaultLimit = 10
	MaxLimit     = 50
	MaxNeeds     = 8 // queries in one search
)

// Needs returns the queries of a search: the list it was given, or its one
// query.
func (r *Request) Needs() []string {
	if len(r.Queries) > 0 {
		return r.Queries
	}
	return []string{r.Query}
}

// RequestError is a request that cannot be carried out as written. It says
// what is wrong and shows a request that would work.
type RequestError struct {
	Msg     string
	Example string
}

func (e *RequestError) Error() string {
	if e.Example == "" {
		return "invalid request: " + e.Msg
	}
	return "invalid request: " + e.Msg + "\nexample: " + e.Example
}

func reqErr(example, format string, args ...any) *RequestError {
	return &RequestError{Msg: fmt.Sprintf(format, args...), Example: example}
}

// Examples shown in errors, one per action.
var examples = map[Action]string{
	ActionStatus:        `{}`,
	ActionServer:        `{"server": "github"}`,
	ActionSearch:        `{"search": "create issue", "limit": 5}`,
	ActionDescribe:      `{"describe": "create_issue", "server": "github"}`,
	ActionCall:          `{"tool": "create_issue", "server": "github", "args": {"title": "Bug"}}`,
	ActionResourcesList: `{"operation": "resources.list", "server": "filesystem"}`,
	ActionResourcesRead: `{"operation": "resources.read", "server": "filesystem", "resource": "r1"}`,
	ActionPromptsList:   `{"operation": "prompts.list", "server": "everything"}`,
	ActionPromptsGet:    `{"operation": "prompts.get", "server": "everything", "prompt": "simple-prompt", "args": {}}`,
	ActionInstructions:  `{"operation": "instructions", "server": "github"}`,
	ActionReconnect:     `{"operation": "reconnect", "server": "github"}`,
	ActionConnect:       `{"connect": "github"}`,
	ActionAuthStart:     `{"action": "auth-start", "server": "github"}`,
	ActionAuthComplete:  `{"action": "auth-complete", "server": "github", "args": {"redirectUrl": "http://127.0.0.1:PORT/callback?code=…&state=…"}}`,
}

// fields lists the fields each action accepts besides its own key.
var fields = map[Action][]string{
	ActionStatus:        {},
	ActionServer:        {"server"},
	ActionSearch:        {"search", "server", "limit", "offset", "regex", "includeSchemas", "includeDisabled", "include_disabled", "explain"},
	ActionDescribe:      {"describe", "server", "includeSchemas"},
	ActionCall:          {"tool", "server", "args"},
	ActionResourcesList: {"operation", "server"},
	ActionResourcesRead: {"operation", "server", "resource"},
	ActionPromptsList:   {"operation", "server"},
	ActionPromptsGet:    {"operation", "server", "prompt", "args"},
	ActionInstructions:  {"operation", "server"},
	ActionReconnect:     {"operation", "server"},
	ActionConnect:       {"connect", "operation", "server"},
	ActionAuthStart:     {"operation", "server"},
	ActionAuthComplete:  {"operation", "server", "args"},
}

var allFields = []string{"server", "search", "limit", "offset", "regex", "includeSchemas", "includeDisabled", "describe", "tool", "args", "operation", "action", "connect", "resource", "prompt", "explain"}

// unlisted are fields Parse accepts that Schema leaves out (see Schema):
// "action" is pi-mcp-adapter's name of "operation", for requests written
// for it; "explain" (search) is for a person reading why a tool ranked
// where it did (docs/search.md), not for the model, whose every token of
// the tool's definition counts.
var unlisted = []string{"action", "explain"}

// aliases are other spellings of fields, accepted as the field they name
// (include_disabled is mcp-plugin's) and not listed in errors.
var aliases = map[string]string{"include_disabled": "includeDisabled"}

// Parse validates the arguments of the proxy tool. It accepts nothing it
// does not understand: unknown fields, two actions at once, fields that do
// not belong to the action and empty strings are errors with an example.
func Parse(raw []byte) (*Request, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	m, ok := scanFields(raw)
	if !ok {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, reqErr(examples[ActionSearch], "arguments must be a JSON object: %v", err)
		}
	}
	for k := range m {
		if !contains(allFields, k) && aliases[k] == "" {
			return nil, reqErr(examples[ActionSearch], "unknown field %q (fields: %s)", k, strings.Join(allFields, ", "))
		}
	}
	if raw, ok := m["action"]; ok {
		// "action" is another name of "operation" (pi-mcp-adapter's).
		if _, both := m["operation"]; both {
			return nil, reqErr(examples[ActionAuthStart], `"action" is another name of "operation": give one of them`)
		}
		m["operation"] = raw
		delete(m, "action")
	}
	action, err := actionOf(m)
	if err != nil {
		return nil, err
	}
	for k := range m {
		if !contains(fields[action], k) {
			return nil, reqErr(examples[action], "field %q does not belong to a %s request (it takes %s)", k, action, describeFields(action))
		}
	}
	r := &Request{Action: action, Limit: DefaultLimit}
	if err := r.decode(m); err != nil {
		return nil, err
	}
	return r, nil
}

// scanFields reads the fields of a request as json.Unmarshal into a map
// would (the last of a repeated key wins), without its allocations: the
// keys are the names of allFields and aliases, the values slices of raw,
// which the caller decodes before it returns. It reports false, having
// read nothing, for anything it is not sure of (not valid JSON, not an
// object, a key with an escape or not a field's name, nesting past
// jsonscan's bound): the caller decodes with encoding/json then, which
// gives the same fields, or the error.
func scanFields(raw []byte) (map[string]json.RawMessage, bool) {
	if !json.Valid(raw) {
		return nil, false
	}
	m := make(map[string]json.RawMessage, 4)
	ok := jsonscan.Members(raw, func(key, value []byte) bool {
		name := fieldName(key)
		if name == "" {
			return false
		}
		m[name] = value
		return true
	})
	return m, ok
}

// fieldName returns the name in allFields or aliases that key spells, or
// "" for none, without allocating.
func fieldName(key []byte) string {
	for _, f := range allFields {
		if string(key) == f {
			return f
		}
	}
	for a := range aliases {
		if string(key) == a {
			return a
		}
	}
	return ""
}

func describeFields(a Action) string {
	var names []string
	for _, f := range fields[a] {
		if aliases[f] == "" {
			names = append(names, f)
		}
	}
	if len(names) == 0 {
		return "no fields"
	}
	return strings.Join(names, ", ")
}

// actionOf finds the one action a request asks for.
func actionOf(m map[string]json.RawMessage) (Action, error) {
	var keys []string
	for _, k := range []string{"search", "describe", "tool", "operation", "connect"} {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	switch len(keys) {
	case 0:
		if _, ok := m["server"]; ok {
			return ActionServer, nil
		}
		return ActionStatus, nil
	case 1:
	default:
		sort.Strings(keys)
		return "", reqErr(examples[ActionSearch], "one action at a time: %s were given together; send separate requests", quoteJoin(keys))
	}
	switch keys[0] {
	case "search":
		return ActionSearch, nil
	case "describe":
		return ActionDescribe, nil
	case "tool":
		return ActionCall, nil
	case "connect":
		if _, ok := m["server"]; ok {
			return "", reqErr(examples[ActionConnect], `"connect" names the server: leave out "server"`)
		}
		return ActionConnect, nil
	}
	var op string
	if err := json.Unmarshal(m["operation"], &op); err != nil {
		return "", reqErr(examples[ActionResourcesList], "operation must be a string")
	}
	for _, a := range Operations {
		if string(a) == op {
			return a, nil
		}
	}
	return "", reqErr(examples[ActionResourcesList], "unknown operation %q (operations: %s)", op, quoteJoin(actionStrings(Operations)))
}

func (r *Request) decode(m map[string]json.RawMessage) error {
	ex := examples[r.Action]
	var err error
	str := func(key string, dst *string) {
		if raw, ok := m[key]; ok && err == nil {
			if v, plain := jsonscan.PlainString(raw); plain {
				*dst = v // what decoding gives, without a decoder
				if strings.TrimSpace(v) == "" {
					err = reqErr(ex, "%s must not be empty", key)
				}
			} else if e := json.Unmarshal(raw, dst); e != nil {
				err = reqErr(ex, "%s must be a string", key)
			} else if strings.TrimSpace(*dst) == "" {
				err = reqErr(ex, "%s must not be empty", key)
			}
		}
	}
	str("server", &r.Server)
	str("connect", &r.Server)
	if raw, ok := m["search"]; ok && err == nil {
		err = r.decodeQueries(raw)
	}
	str("describe", &r.Name)
	str("tool", &r.Name)
	str("resource", &r.Resource)
	str("prompt", &r.Prompt)
	if err != nil {
		return err
	}
	if err := r.decodeSearch(m, ex); err != nil {
		return err
	}
	if raw, ok := m["args"]; ok {
		args, err := parseArgs(raw)
		if err != nil {
			return reqErr(ex, "%v", err)
		}
		r.Args = args
	}
	if r.Action == ActionAuthComplete {
		if err := r.decodeRedirect(ex); err != nil {
			return err
		}
	}
	if r.Args == nil && (r.Action == ActionCall || r.Action == ActionPromptsGet) {
		r.Args = map[string]any{}
	}
	return r.required(ex)
}

// decodeQueries reads the query of a search, or its list of queries, one
// need each.
func (r *Request) decodeQueries(raw json.RawMessage) error {
	const ex = `{"search": ["write a file", "current date"]}`
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		if json.Unmarshal(raw, &r.Query) != nil {
			return reqErr(ex, "search must be a string or a list of strings")
		}
		if strings.TrimSpace(r.Query) == "" {
			return reqErr(examples[ActionSearch], "search must not be empty")
		}
		return nil
	}
	if err := json.Unmarshal(raw, &r.Queries); err != nil {
		return reqErr(ex, "search must be a string or a list of strings")
	}
	switch {
	case len(r.Queries) == 0:
		return reqErr(ex, "search must not be an empty list: give one query per need")
	case len(r.Queries) > MaxNeeds:
		return reqErr(ex, "search takes at most %d queries; got %d: search the other needs in a second request", MaxNeeds, len(r.Queries))
	}
	for i, q := range r.Queries {
		if strings.TrimSpace(q) == "" {
			return reqErr(ex, "search query %d of %d is empty", i+1, len(r.Queries))
		}
	}
	r.Query = strings.Join(r.Queries, "; ")
	return nil
}

func (r *Request) decodeSearch(m map[string]json.RawMessage, ex string) error {
	if raw, ok := m["limit"]; ok {
		n, ok := whole(raw, 1, MaxLimit)
		if !ok {
			return reqErr(ex, "limit must be a whole number from 1 to %d", MaxLimit)
		}
		r.Limit = n
	}
	if raw, ok := m["offset"]; ok {
		n, ok := whole(raw, 0, math.MaxInt32)
		if !ok {
			return reqErr(ex, "offset must be a whole number, 0 or more")
		}
		r.Offset = n
	}
	for _, f := range []struct {
		key string
		dst *bool
	}{{"regex", &r.Regex}, {"includeSchemas", &r.IncludeSchemas}, {"includeDisabled", &r.IncludeDisabled}, {"explain", &r.Explain}} {
		if err := flag(m, f.key, f.dst, ex); err != nil {
			return err
		}
	}
	return nil
}

// whole reads a whole number from lo to hi written in any JSON form, as
// JSON Schema's "integer" takes it (2, 2.0, 2e0); null, as an omitted
// field, is not one.
func whole(raw json.RawMessage, lo, hi int) (int, bool) {
	var f float64
	if json.Unmarshal(raw, &f) != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, false
	}
	return int(f), true
}

// flag reads a true-or-false field, under its name or an alias of it
// (not both).
func flag(m map[string]json.RawMessage, key string, dst *bool, ex string) error {
	raw, ok := m[key]
	for alias, name := range aliases {
		if a, given := m[alias]; given && name == key {
			if ok {
				return reqErr(ex, "%s and %s are the same field: give one", key, alias)
			}
			raw, ok, key = a, true, alias
		}
	}
	if ok && (json.Unmarshal(raw, dst) != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))) {
		return reqErr(ex, "%s must be true or false", key)
	}
	return nil
}

// parseArgs accepts an object, or a string holding a JSON object (some
// models send arguments that way). null means no arguments.
func parseArgs(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return map[string]any{}, nil
	}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("args must be an object or a string holding a JSON object")
		}
		if strings.TrimSpace(s) == "" {
			return map[string]any{}, nil
		}
		raw = []byte(s)
	}
	if args, ok := flatArgs(raw); ok {
		return args, nil
	}
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil || args == nil || dec.More() {
		return nil, fmt.Errorf("args must be a JSON object such as {\"path\": \"/tmp\"}")
	}
	return args, nil
}

// flatArgs decodes args that are one object of plain values (strings of
// printable ASCII without escapes, numbers, true, false, null) as
// parseArgs' decoder does (numbers as json.Number, the last of a repeated
// key winning), without a decoder: what agents send most. It reports
// false for anything else (nesting, escapes, other text, not valid JSON),
// which the decoder reads (FuzzFlatArgs holds the two to one answer).
func flatArgs(raw []byte) (map[string]any, bool) {
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil, false
	}
	args := make(map[string]any, 4)
	ok := jsonscan.Members(raw, func(key, v []byte) bool {
		var val any
		switch c := v[0]; {
		case c == '"':
			s, plain := jsonscan.PlainString(v)
			if !plain {
				return false
			}
			val = s
		case c == 't':
			val = true
		case c == 'f':
			val = false
		case c == 'n':
			val = nil
		case c == '-' || c >= '0' && c <= '9':
			val = json.Number(v)
		default:
			return false // an object or an array
		}
		for _, c := range key { // its bytes are its value: printable ASCII
			if c < 0x20 || c > 0x7e {
				return false
			}
		}
		args[string(key)] = val
		return true
	})
	return args, ok
}

// required checks the fields an action cannot do without.
func (r *Request) required(ex string) error {
	switch r.Action {
	case ActionResourcesList, ActionResourcesRead, ActionPromptsList, ActionPromptsGet, ActionInstructions, ActionReconnect,
		ActionConnect, ActionAuthStart, ActionAuthComplete:
		if r.Server == "" {
			return reqErr(ex, "operation %q needs \"server\"", r.Action)
		}
	}
	switch {
	case r.Action == ActionResourcesRead && r.Resource == "":
		return reqErr(ex, "resources.read needs \"resource\": a reference from resources.list")
	case r.Action == ActionPromptsGet && r.Prompt == "":
		return reqErr(ex, "prompts.get needs \"prompt\": a name from prompts.list")
	}
	return nil
}

// decodeRedirect takes what an auth-complete carries in its args: the
// redirect URL ("redirectUrl") or the authorization code alone ("code"),
// one of them. The values are not repeated in errors: they are secret.
func (r *Request) decodeRedirect(ex string) error {
	for k := range r.Args {
		if k != "redirectUrl" && k != "code" {
			return reqErr(ex, "auth-complete takes \"redirectUrl\" or \"code\" in args, not %q", k)
		}
	}
	get := func(k string) (string, error) {
		v, ok := r.Args[k]
		if !ok {
			return "", nil
		}
		s, isStr := v.(string)
		if !isStr || strings.TrimSpace(s) == "" {
			return "", reqErr(ex, "args.%s must be a non-empty string", k)
		}
		return strings.TrimSpace(s), nil
	}
	var err error
	if r.RedirectURL, err = get("redirectUrl"); err != nil {
		return err
	}
	if r.Code, err = get("code"); err != nil {
		return err
	}
	switch {
	case r.RedirectURL == "" && r.Code == "":
		return reqErr(ex, "auth-complete needs args with \"redirectUrl\": the whole URL the browser was sent to after the login (from its address bar), or \"code\": the code alone")
	case r.RedirectURL != "" && r.Code != "":
		return reqErr(ex, "auth-complete takes \"redirectUrl\" or \"code\", not both")
	}
	r.Args = nil
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func quoteJoin(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func actionStrings(as []Action) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = string(a)
	}
	return out
}

// Schema is the JSON schema of the proxy tool's arguments. It is stable:
// agents cache tool definitions, so it changes only with the contract. The
// tool's description explains the fields; the schema stays lean (the
// whole definition under 400 tokens with ten servers). It does not forbid
// other properties: Parse refuses an unknown field itself, with the fields
// and an example, and accepts the aliases (include_disabled) that the
// schema does not list; a client's or go-sdk's validation against
// "additionalProperties": false would refuse those with a bare error on
// one face and not on another.
//
// Every subschema has one "type" (search, a string or a list, says so with
// anyOf): a type array such as ["object","string"] is legal JSON Schema,
// but hosts that map tool schemas onto a single-type dialect (the OpenAPI
// subset of Gemini's function declarations) reject the tool or drop the
// constraint. args is advertised as an object only; Parse still takes the
// object as a JSON string, as models sometimes send it. Portable holds the
// schema to that (TestSchemaIsPortable).
const Schema = `{"type":"object","properties":{` +
	`"search":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]},"describe":{"type":"string"},"tool":{"type":"string"},` +
	`"args":{"type":"object"},"server":{"type":"string"},` +
	`"operation":{"type":"string","enum":["resources.list","resources.read","prompts.list","prompts.get","instructions","reconnect","connect","auth-start","auth-complete"]},` +
	`"connect":{"type":"string"},` +
	`"resource":{"type":"string"},"prompt":{"type":"string"},` +
	`"limit":{"type":"integer"},"offset":{"type":"integer"},"regex":{"type":"boolean"},` +
	`"includeSchemas":{"type":"boolean"},"includeDisabled":{"type":"boolean"}}}`
