package registry

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Runtimes by package type, in the order they are tried.
var runtimes = map[string][]string{
	TypeNPM:   {"npx"},
	TypePyPI:  {"uvx"},
	TypeNuGet: {"dnx"},
	TypeOCI:   {"docker", "podman"},
}

// Choice is the package or remote of an entry that fits this machine.
type Choice struct {
	Server  *Server
	Package *Package   // nil for a remote
	Remote  *Transport // nil for a package
	Runtime string     // the command that runs the package: npx, uvx, dnx, docker, podman; "" for mcpb and remotes
}

// Kind is the package's registry type, or "remote".
func (c *Choice) Kind() string {
	if c.Remote != nil {
		return "remote"
	}
	return c.Package.RegistryType
}

// ErrNoRuntime is wrapped by Choose's error when every package needs a
// runtime that is not installed and there is no remote.
var ErrNoRuntime = errors.New("no installed runtime runs this server")

// Choose picks the first package, in the entry's order, whose runtime is
// installed (lookPath finds it), else the first usable remote. use, when
// not "", restricts the choice to one package type or "remote". Packages
// and remotes that break the format are passed over; when nothing is left
// the error says why each was, and which runtime to install.
func Choose(s *Server, lookPath func(string) (string, error), use string) (*Choice, error) {
	var why []string
	var missing []string
	for i := range s.Packages {
		p := &s.Packages[i]
		if use != "" && use != p.RegistryType {
			continue
		}
		if err := checkPackage(p); err != nil {
			why = append(why, err.Error())
			continue
		}
		if p.RegistryType == TypeMCPB {
			return &Choice{Server: s, Package: p}, nil
		}
		for _, rt := range runtimes[p.RegistryType] {
			if _, err := lookPath(rt); err == nil {
				return &Choice{Server: s, Package: p, Runtime: rt}, nil
			}
		}
		missing = append(missing, fmt.Sprintf("%s (for the %s package %s)", strings.Join(runtimes[p.RegistryType], " or "), p.RegistryType, p.Identifier))
	}
	for i := range s.Remotes {
		r := &s.Remotes[i]
		if use != "" && use != "remote" {
			continue
		}
		if err := checkRemote(r); err != nil {
			why = append(why, err.Error())
			continue
		}
		return &Choice{Server: s, Remote: r}, nil
	}
	switch {
	case len(missing) > 0:
		msg := fmt.Sprintf("%s: install %s", ErrNoRuntime, strings.Join(missing, ", or "))
		if len(why) > 0 {
			msg += "; passed over: " + strings.Join(why, "; ")
		}
		return nil, errors.New(msg)
	case len(why) > 0:
		return nil, fmt.Errorf("%s@%s has no package or remote that can be used: %s", s.Name, s.Version, strings.Join(why, "; "))
	case use != "":
		return nil, fmt.Errorf("%s@%s has no %s package or remote", s.Name, s.Version, use)
	}
	return nil, fmt.Errorf("%s@%s lists no package and no remote", s.Name, s.Version)
}

// Question is a value the user is asked for.
type Question struct {
	Key   string // the name given with --arg KEY=VALUE (or the variable's)
	What  string // "argument", "environment variable", "header", "variable"
	Input Input
}

// Asker answers a question: the value to write, which for a secret must
// be a reference (${secret:NAME}); ok false leaves an optional input out.
type Asker func(q Question) (value string, ok bool, err error)

// Install is what to write for a choice.
type Install struct {
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Type    string // "stdio", "http" or "sse"
	Headers map[string]string
	// Pin is the exact version written: "name@1.2.3", "image:tag", the
	// bundle's URL.
	Pin string
}

// Resolve turns the choice into what to write, asking for the values the
// entry leaves open.
func (c *Choice) Resolve(ask Asker) (*Install, error) {
	if c.Remote != nil {
		return c.resolveRemote(ask)
	}
	p := c.Package
	in := &Install{Command: c.Runtime, Type: "stdio"}
	runtimeArgs, err := arguments(p.RuntimeArguments, ask)
	if err != nil {
		return nil, err
	}
	pkgArgs, err := arguments(p.PackageArguments, ask)
	if err != nil {
		return nil, err
	}
	if in.Env, err = keyValues(p.EnvironmentVariables, "environment variable", ask); err != nil {
		return nil, err
	}
	switch p.RegistryType {
	case TypeNPM:
		in.Pin = p.Identifier + "@" + p.Version
		in.Args = append(append(runtimeArgs, "-y", in.Pin), pkgArgs...)
	case TypePyPI:
		in.Pin = p.Identifier + "==" + p.Version
		in.Args = append(append(runtimeArgs, in.Pin), pkgArgs...)
	case TypeNuGet:
		in.Pin = p.Identifier + "@" + p.Version
		in.Args = append(append(runtimeArgs, in.Pin, "--yes"), pkgArgs...)
	case TypeOCI:
		in.Pin = ociRef(p)
		if in.Pin == "" {
			return nil, fmt.Errorf("the oci package %s names no tag or digest and no version, and Switchboard pins an exact one", p.Identifier)
		}
		args := []string{"run", "-i", "--rm"}
		for _, name := range slices.Sorted(maps.Keys(in.Env)) {
			args = append(args, "-e", name)
		}
		in.Args = append(append(append(args, runtimeArgs...), in.Pin), pkgArgs...)
	case TypeMCPB:
		in.Pin = p.Identifier
	}
	return in, nil
}

// ociRef is the image reference with its version: the identifier when it
// has a tag or digest, else identifier:version.
func ociRef(p *Package) string {
	last := p.Identifier[strings.LastIndex(p.Identifier, "/")+1:]
	if strings.Contains(last, ":") || strings.Contains(p.Identifier, "@sha256:") {
		if strings.HasSuffix(p.Identifier, ":latest") {
			return ""
		}
		return p.Identifier
	}
	if p.Version == "" {
		return ""
	}
	return p.Identifier + ":" + p.Version
}

func (c *Choice) resolveRemote(ask Asker) (*Install, error) {
	r := c.Remote
	in := &Install{Type: "http", Pin: r.URL}
	if r.Type == TransportSSE {
		in.Type = "sse"
	}
	u, err := fill(r.URL, Input{Value: r.URL, Variables: r.Variables}, "url", ask)
	if err != nil {
		return nil, err
	}
	if strings.Contains(u, "${secret:") {
		// A secret in a URL ends up in logs and errors.
		return nil, fmt.Errorf("the remote %s puts a secret in its URL, which Switchboard does not write: refused", r.URL)
	}
	in.URL = u
	if in.Headers, err = keyValues(r.Headers, "header", ask); err != nil {
		return nil, err
	}
	return in, nil
}

func arguments(list []Argument, ask Asker) ([]string, error) {
	var out []string
	for i, a := range list {
		key := a.ValueHint
		if a.Type == ArgNamed {
			key = strings.TrimLeft(a.Name, "-")
		}
		if key == "" {
			key = fmt.Sprintf("arg%d", i+1)
		}
		if a.Type != ArgNamed && a.Type != ArgPositional {
			return nil, fmt.Errorf("argument %s has the unknown type %q (known: positional, named)", key, clip(a.Type))
		}
		if a.IsSecret || anySecret(a.Variables) {
			return nil, fmt.Errorf("argument %s is a secret, and Switchboard passes secrets only in environment variables or headers, never on a command line other users can read: add the server by hand (switchboard add NAME -- COMMAND…)", key)
		}
		if a.Type == ArgNamed && a.Value == "" && a.Default == "" && !a.IsRequired && a.Format == "boolean" {
			continue // a flag left off
		}
		v, err := fill(key, a.Input, "argument", ask)
		if errors.Is(err, errSkipped) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if a.Type == ArgNamed {
			out = append(out, a.Name)
			if v == "" {
				continue
			}
		}
		out = append(out, v)
	}
	return out, nil
}

func anySecret(vars map[string]Input) bool {
	for _, v := range vars {
		if v.IsSecret {
			return true
		}
	}
	return false
}

func keyValues(list []KeyValueInput, what string, ask Asker) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range list {
		if !envNameRE().MatchString(kv.Name) && what == "environment variable" || kv.Name == "" || len(kv.Name) > 256 || !token(kv.Name) {
			return nil, fmt.Errorf("invalid %s name %q", what, clip(kv.Name))
		}
		v, err := fill(kv.Name, kv.Input, what, ask)
		if errors.Is(err, errSkipped) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[kv.Name] = v
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

var envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

var errSkipped = errors.New("optional input left out")

var templateRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_.-]*)\}`) })

// fill gives an input its value: its fixed value with each {variable}
// answered, or the answer to a question about the input itself.
func fill(key string, in Input, what string, ask Asker) (string, error) {
	if in.Value == "" {
		v, ok, err := ask(Question{Key: key, What: what, Input: in})
		if err != nil {
			return "", err
		}
		if !ok {
			return "", errSkipped
		}
		return v, nil
	}
	var ferr error
	out := templateRE().ReplaceAllStringFunc(in.Value, func(m string) string {
		name := m[1 : len(m)-1]
		vin, ok := in.Variables[name]
		if !ok || ferr != nil {
			return m
		}
		if !vin.IsRequired && vin.Default == "" {
			vin.IsRequired = in.IsRequired
		}
		v, ok, err := ask(Question{Key: name, What: "variable", Input: vin})
		switch {
		case err != nil:
			ferr = err
		case !ok:
			ferr = errSkipped
		}
		return v
	})
	if ferr != nil {
		return "", ferr
	}
	return out, nil
}

// Pin is the argument or URL that pins the choice's version, as Resolve
// writes it.
func (c *Choice) Pin() string {
	if c.Remote != nil {
		return c.Remote.URL
	}
	p := c.Package
	switch p.RegistryType {
	case TypeNPM, TypeNuGet:
		return p.Identifier + "@" + p.Version
	case TypePyPI:
		return p.Identifier + "==" + p.Version
	case TypeOCI:
		return ociRef(p)
	}
	return p.Identifier
}
