// Package registry reads the MCP registry (registry.modelcontextprotocol.io
// and the servers that run its code): API v0.1, the server.json format of
// schema 2025-12-11. Its answers are untrusted input: they are decoded
// with bounds, and an entry that breaks the format's rules is refused (see
// Check and decodeList).
package registry

import (
	"time"
)

// Entry is one version of a server as the registry lists it: the
// publisher's server.json and the registry's own metadata.
type Entry struct {
	Server Server `json:"server"`
	Meta   struct {
		Official *Official `json:"io.modelcontextprotocol.registry/official,omitempty"`
	} `json:"_meta"`
}

// Status is the registry's status of the entry; "active" when the registry
// says nothing.
func (e *Entry) Status() string {
	if e.Meta.Official == nil || e.Meta.Official.Status == "" {
		return StatusActive
	}
	return e.Meta.Official.Status
}

// Statuses.
const (
	StatusActive     = "active"
	StatusDeprecated = "deprecated"
	StatusDeleted    = "deleted"
)

// Official is the registry's metadata of an entry.
type Official struct {
	Status        string    `json:"status"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	PublishedAt   time.Time `json:"publishedAt,omitzero"`
	UpdatedAt     time.Time `json:"updatedAt,omitzero"`
	IsLatest      bool      `json:"isLatest"`
}

// Server is a server.json.
type Server struct {
	Schema      string      `json:"$schema,omitempty"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Title       string      `json:"title,omitempty"`
	Version     string      `json:"version"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Transport `json:"remotes,omitempty"`
}

// Repository is where the server's source is.
type Repository struct {
	URL       string `json:"url,omitempty"`
	Source    string `json:"source,omitempty"`
	Subfolder string `json:"subfolder,omitempty"`
}

// Package registry types.
const (
	TypeNPM   = "npm"
	TypePyPI  = "pypi"
	TypeOCI   = "oci"
	TypeNuGet = "nuget"
	TypeMCPB  = "mcpb"
)

// Transport types.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "streamable-http"
	TransportSSE   = "sse"
)

// Package is one way to run the server locally.
type Package struct {
	RegistryType         string          `json:"registryType"`
	RegistryBaseURL      string          `json:"registryBaseUrl,omitempty"`
	Identifier           string          `json:"identifier"`
	Version              string          `json:"version,omitempty"`
	FileSHA256           string          `json:"fileSha256,omitempty"`
	RuntimeHint          string          `json:"runtimeHint,omitempty"`
	Transport            Transport       `json:"transport"`
	RuntimeArguments     []Argument      `json:"runtimeArguments,omitempty"`
	PackageArguments     []Argument      `json:"packageArguments,omitempty"`
	EnvironmentVariables []KeyValueInput `json:"environmentVariables,omitempty"`
}

// Transport is a package's transport, or a remote.
type Transport struct {
	Type      string           `json:"type"`
	URL       string           `json:"url,omitempty"`
	Headers   []KeyValueInput  `json:"headers,omitempty"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Input is a value the user may have to give.
type Input struct {
	Description string   `json:"description,omitempty"`
	IsRequired  bool     `json:"isRequired,omitempty"`
	Format      string   `json:"format,omitempty"`
	Value       string   `json:"value,omitempty"`
	IsSecret    bool     `json:"isSecret,omitempty"`
	Default     string   `json:"default,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Choices     []string `json:"choices,omitempty"`
	// Variables fill the {name} templates of Value.
	Variables map[string]Input `json:"variables,omitempty"`
}

// KeyValueInput is an environment variable or a header.
type KeyValueInput struct {
	Input
	Name string `json:"name"`
}

// Argument is a runtime or package argument.
type Argument struct {
	Input
	Type       string `json:"type"` // "positional" or "named"
	Name       string `json:"name,omitempty"`
	ValueHint  string `json:"valueHint,omitempty"`
	IsRepeated bool   `json:"isRepeated,omitempty"`
}

// Argument types.
const (
	ArgPositional = "positional"
	ArgNamed      = "named"
)

// NeedsSecret reports whether some input of the server is secret.
func (s *Server) NeedsSecret() bool {
	secret := func(in Input) bool {
		if in.IsSecret {
			return true
		}
		for _, v := range in.Variables {
			if v.IsSecret {
				return true
			}
		}
		return false
	}
	for _, p := range s.Packages {
		for _, kv := range p.EnvironmentVariables {
			if secret(kv.Input) {
				return true
			}
		}
		for _, a := range append(append([]Argument{}, p.RuntimeArguments...), p.PackageArguments...) {
			if secret(a.Input) {
				return true
			}
		}
	}
	for _, r := range s.Remotes {
		for _, kv := range r.Headers {
			if secret(kv.Input) {
				return true
			}
		}
		for _, v := range r.Variables {
			if v.IsSecret {
				return true
			}
		}
	}
	return false
}

// Transports lists the transports of the server's packages and remotes,
// each once: "stdio", "streamable-http", "sse".
func (s *Server) Transports() []string {
	var out []string
	add := func(t string) {
		for _, o := range out {
			if o == t {
				return
			}
		}
		out = append(out, t)
	}
	for _, p := range s.Packages {
		add(p.Transport.Type)
	}
	for _, r := range s.Remotes {
		add(r.Type)
	}
	return out
}
