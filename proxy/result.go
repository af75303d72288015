package proxy

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/bound"
)

// Result is what one operation returns: text for the model (the same text
// the CLI prints), images that pass through, and structured details for
// programs. The text and the details say the same thing. The three
// together are within settings.output, plus the notes that name spill
// files: the engine bounds every result before it returns it.
type Result struct {
	Text    string
	Images  []*mcp.ImageContent
	IsError bool
	Details Details

	// SpillName is what the result's spill files are named after, if it
	// must be spilled.
	SpillName string

	// Content is a tool call's content, block by block, as
	// `switchboard call --json` prints it beside the details (see JSON);
	// the mcp tool's answer does not carry it (its text does).
	Content []bound.Block
}

// The details below are the machine-readable answer of every operation:
// the structured content of the mcp tool's results, and what the CLI's
// --json prints. They are a stable interface: fields are only ever added,
// never renamed, removed or given another meaning, and a field that is
// empty is left out (omitempty) unless it says so below.

// Details is the machine-readable side of a result.
type Details struct {
	Operation string         `json:"operation"`
	Server    string         `json:"server,omitempty"`
	IsError   bool           `json:"isError"`
	Error     string         `json:"error,omitempty"`
	Count     int            `json:"count"`
	Total     int            `json:"total,omitempty"`
	Spills    []bound.Spill  `json:"spills,omitempty"`
	Servers   []ServerStatus `json:"servers,omitempty"`
	Tools     []ToolInfo     `json:"tools,omitempty"`
	Tool      *ToolDetail    `json:"tool,omitempty"`
	Resources []ResourceInfo `json:"resources,omitempty"`
	Templates []TemplateInfo `json:"templates,omitempty"`
	Prompts   []PromptInfo   `json:"prompts,omitempty"`
	Search    *SearchInfo    `json:"search,omitempty"`
	// Config says what is wrong with the configuration, and which project
	// files it ignores (status only, when there is something to say).
	Config *ConfigStatus `json:"config,omitempty"`
	// Failed are the servers that could not be searched, with why.
	Failed []ServerError `json:"failed,omitempty"`
	// Structured is a tool's structured content, as it came when it fits
	// the output limits with the rest of the result, else in a spill file.
	Structured any `json:"structured,omitempty"`
	// Auth is the login an auth-start started.
	Auth *AuthInfo `json:"auth,omitempty"`
	// Script is a code-mode script's run (operation "script"); its answer
	// is Structured.
	Script *ScriptInfo `json:"script,omitempty"`
}

// ScriptInfo is a code-mode script's run: what identifies it, what it
// did and wrote, and why it failed, if it did.
type ScriptInfo struct {
	SHA256 string       `json:"sha256"` // of the script's text, as the audit trail names it
	Calls  int          `json:"calls"`  // inner calls: search, describe and call
	Logs   []string     `json:"logs,omitempty"`
	Error  *ScriptError `json:"error,omitempty"`
}

// ScriptError is why a script failed: a code (such as "syntax_error",
// "thrown", "timeout", "call_limit", "memory_limit", "cancelled") and a
// message; Line and Col place it in the script when known (1-based).
type ScriptError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
}

// ToolInfo is one tool in a listing or a search.
type ToolInfo struct {
	Server      string  `json:"server"`
	Name        string  `json:"name"`
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description,omitempty"` // first line
	Score       float64 `json:"score,omitempty"`
	Changed     bool    `json:"changed,omitempty"` // quarantined: the server offers a definition not approved; shown is the approved one
	Held        bool    `json:"held,omitempty"`    // quarantined with no approved definition: only the name is shown

	// Search only. Need is the query the tool answers, when a search had
	// several; Implied the capability a query implies that the tool serves
	// ("write a file" for "save it to /tmp/x.md"); Also the other servers
	// that offer the same tool (same name and description).
	Need    string   `json:"need,omitempty"`
	Implied string   `json:"implied,omitempty"`
	Also    []string `json:"also,omitempty"`
	// CannotRun names, of the tool's server and Also, those that cannot
	// run now (a failed connection, an unset variable): search lists a
	// copy that can run when there is one.
	CannotRun []string `json:"cannotRun,omitempty"`
	// Why says what placed the tool where it is (search with explain).
	Why []string `json:"why,omitempty"`
	// InputShape is the tool's parameters as a TypeScript type (search
	// with includeSchemas; see tsShape).
	InputShape string `json:"inputShape,omitempty"`
	// Disabled marks a tool of a disabled server, found in what the
	// catalog kept of it (search with includeDisabled): it cannot be
	// called until the server is enabled.
	Disabled bool `json:"disabled,omitempty"`
}

// ToolDetail is one tool described in full.
type ToolDetail struct {
	Server       string               `json:"server"`
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  any                  `json:"inputSchema,omitempty"`
	OutputSchema any                  `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	Changed      bool                 `json:"changed,omitempty"` // quarantined: the fields above are the definition approved
	Held         bool                 `json:"held,omitempty"`    // quarantined with no approved definition: the fields above are empty
	// Offered is, for a quarantined tool, the definition the server offers
	// instead (as a diff against the approved one), wrapped as untrusted
	// data.
	Offered string `json:"offered,omitempty"`
	// InputShape and OutputShape are the schemas as TypeScript types
	// (describe with includeSchemas; see tsShape); OutputShape only when
	// the tool declares an output schema.
	InputShape  string `json:"inputShape,omitempty"`
	OutputShape string `json:"outputShape,omitempty"`
	// Unportable names what in the input schema the dialects hosts map
	// tool schemas onto reject (see Portable); empty when it has none.
	Unportable []string `json:"unportable,omitempty"`
}

// ResourceInfo is one resource, named by an opaque reference.
type ResourceInfo struct {
	Ref         string `json:"ref"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Description string `json:"description,omitempty"`
	URI         string `json:"uri"` // shown without credentials or query
}

// TemplateInfo is one resource template.
type TemplateInfo struct {
	Name        string `json:"name"`
	URITemplate string `json:"uriTemplate"`
	MIMEType    string `json:"mimeType,omitempty"`
	Description string `json:"description,omitempty"`
}

// PromptInfo is one prompt with its arguments.
type PromptInfo struct {
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description,omitempty"`
	Arguments   []PromptArg `json:"arguments,omitempty"`
}

// PromptArg is one argument of a prompt.
type PromptArg struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// SearchInfo says how a search ran.
type SearchInfo struct {
	Query   string   `json:"query"`
	Queries []string `json:"queries,omitempty"` // the queries of a search of several needs
	Mode    string   `json:"mode"`              // "hybrid", "lexical" or "regex"
	Reason  string   `json:"reason,omitempty"`  // why a search with settings.embeddings is lexical
	Offset  int      `json:"offset"`
	Limit   int      `json:"limit"`
	Servers []string `json:"servers"`          // the servers searched
	Failed  []string `json:"failed,omitempty"` // servers that could not be indexed
	// Disabled are the disabled servers searched (includeDisabled), from
	// what the catalog kept of them; Unknown those of them the catalog has
	// nothing of (never indexed while enabled, or since changed).
	Disabled []string `json:"disabled,omitempty"`
	Unknown  []string `json:"unknown,omitempty"`
}

// ServerStatus is what is known of one configured server, without
// connecting to it.
type ServerStatus struct {
	Name       string    `json:"name"`
	State      string    `json:"state"` // see the State constants
	Transport  string    `json:"transport"`
	Tools      int       `json:"tools"` // -1 when not known
	ErrorClass string    `json:"errorClass,omitempty"`
	Error      string    `json:"error,omitempty"`
	ErrorAt    time.Time `json:"errorAt,omitzero"`
	IndexedAt  time.Time `json:"indexedAt,omitzero"`
	Headline   string    `json:"headline,omitempty"` // first line of the server's instructions
	// Quarantined counts the tools whose definition changed since it was
	// approved (docs/policy.md).
	Quarantined int `json:"quarantined,omitempty"`
	// Warnings are problems of the server's policy found against its
	// tools, such as an approve glob that matches none, and what else the
	// user should know of the server, such as a URL without a type that
	// is reached over legacy SSE because it rejected Streamable HTTP.
	Warnings []string `json:"warnings,omitempty"`
}

// ServerError is a server that could not answer a request, and why.
type ServerError struct {
	Server     string `json:"server"`
	ErrorClass string `json:"errorClass,omitempty"` // as in ServerStatus
	Error      string `json:"error"`
}

// ConfigStatus is what status says of the configuration itself: the errors
// that keep servers from being used, and the project files left out.
type ConfigStatus struct {
	// Errors are the configuration's errors, each naming its file and,
	// where known, line and column.
	Errors []ConfigProblem `json:"errors,omitempty"`
	// Blocked is set when an error fails the configuration closed: no
	// server is usable until it is fixed.
	Blocked bool `json:"blocked,omitempty"`
	// Ignored is the project's files that do not count until the project
	// is trusted.
	Ignored *IgnoredProject `json:"ignored,omitempty"`
}

// ConfigProblem is one configuration error.
type ConfigProblem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Path    string `json:"path,omitempty"` // JSON path, such as mcpServers.github.env
	Server  string `json:"server,omitempty"`
	Message string `json:"message"`
}

// IgnoredProject is a project whose files are ignored until it is trusted.
type IgnoredProject struct {
	Dir    string        `json:"dir"`
	Reason string        `json:"reason"`
	Files  []IgnoredFile `json:"files"`
	Hint   string        `json:"hint"` // what to do: review, then switchboard trust
}

// IgnoredFile is one ignored project file and the servers it defines.
type IgnoredFile struct {
	Path    string   `json:"path"`
	Servers []string `json:"servers"`
}

// MCP returns the result as the result of a tools/call: text and images as
// content, details as structured content.
func (r *Result) MCP() *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r.IsError, StructuredContent: r.Details}
	out.Content = append(out.Content, &mcp.TextContent{Text: r.Text})
	for _, img := range r.Images {
		out.Content = append(out.Content, img)
	}
	return out
}

// JSON returns the details as indented JSON, as --json prints them, with
// a call's content blocks as "content".
func (r *Result) JSON() []byte {
	b, err := json.MarshalIndent(struct {
		Details
		Content []bound.Block `json:"content,omitempty"`
	}{r.Details, r.Content}, "", "  ")
	if err != nil {
		return []byte(fmt.Sprintf(`{"operation": %q, "isError": true, "error": %q}`, r.Details.Operation, err))
	}
	return append(b, '\n')
}
