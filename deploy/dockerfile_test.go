package deploy

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// stage is one FROM of a Dockerfile with its instructions, continuation
// lines joined.
type stage struct {
	from, name string
	lines      []string
}

func parseDockerfile(t *testing.T, path string) []stage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stages []stage
	var cur strings.Builder
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if rest, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(rest)
			continue
		}
		cur.WriteString(line)
		ins := strings.Join(strings.Fields(cur.String()), " ")
		cur.Reset()
		if from, ok := strings.CutPrefix(ins, "FROM "); ok {
			f := strings.Fields(from)
			var s stage
			for i := 0; i < len(f); i++ {
				switch {
				case strings.HasPrefix(f[i], "--"):
				case strings.EqualFold(f[i], "AS") && i+1 < len(f):
					s.name = f[i+1]
					i++
				default:
					s.from = f[i]
				}
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) > 0 {
			stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, ins)
		}
	}
	return stages
}

// TestDockerfile checks what can be checked without a container engine:
// the stages, and that the image's go build line, run as written, builds a
// static binary that reports the version it was given, with the flags of
// scripts/release.sh.
func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, "Dockerfile")
	byName := map[string]stage{}
	for _, s := range stages {
		byName[s.name] = s
	}
	build, node := byName["build"], byName["node"]
	last := stages[len(stages)-1]
	if !strings.HasPrefix(build.from, "golang:") {
		t.Errorf("no build stage FROM golang: %+v", stages)
	}
	if !strings.HasPrefix(last.from, "gcr.io/distroless/static") || !strings.HasSuffix(last.from, ":nonroot") ||
		!slices.Contains(last.lines, "USER nonroot:nonroot") {
		t.Errorf("the default (last) stage is FROM %s with %q: want distroless static, nonroot, USER nonroot:nonroot", last.from, last.lines)
	}
	if !strings.HasPrefix(node.from, "node:") || !slices.Contains(node.lines, "USER 65532:65532") {
		t.Errorf("no node stage FROM node: running as 65532 (the uid of the manifests): %+v", node)
	}
	for _, s := range []stage{node, last} {
		if !slices.Contains(s.lines, "COPY --from=build /out/switchboard /usr/local/bin/switchboard") ||
			!slices.Contains(s.lines, `ENTRYPOINT ["/usr/local/bin/switchboard"]`) {
			t.Errorf("stage %s does not copy the built binary and run it: %q", s.name, s.lines)
		}
	}

	// The go build line: the one RUN of the build stage that builds.
	var run string
	for _, l := range build.lines {
		if strings.HasPrefix(l, "RUN ") && strings.Contains(l, "go build") {
			if run != "" {
				t.Fatalf("two go build lines: %q and %q", run, l)
			}
			run = l
		}
	}
	// Drop RUN and its BuildKit flags (cache mounts): the rest is the shell's.
	f := strings.Fields(run)
	i := 1
	for i < len(f) && strings.HasPrefix(f[i], "--") {
		i++
	}
	cmdline := strings.Join(f[i:], " ")
	if cmdline == "" {
		t.Fatalf("no go build line in the build stage: %q", build.lines)
	}

	// The same flags as the release script, its $version being the image's $VERSION.
	release, err := os.ReadFile("../scripts/release.sh")
	if err != nil {
		t.Fatal(err)
	}
	ldRe := regexp.MustCompile(`-ldflags "([^"]*)"`)
	rl, dl := ldRe.FindSubmatch(release), ldRe.FindStringSubmatch(cmdline)
	if rl == nil || dl == nil {
		t.Fatalf("no -ldflags in scripts/release.sh or in %q", cmdline)
	}
	if want := strings.ReplaceAll(string(rl[1]), "$version", "$VERSION"); dl[1] != want {
		t.Errorf("the image's -ldflags %q differ from scripts/release.sh's %q", dl[1], want)
	}
	for _, flag := range []string{"CGO_ENABLED=0 ", " -trimpath ", " ./cmd/switchboard"} {
		if !strings.Contains(cmdline+" ", flag) {
			t.Errorf("the go build line %q lacks %q", cmdline, strings.TrimSpace(flag))
		}
	}
	for _, arg := range regexp.MustCompile(`\$([A-Z_]+)`).FindAllStringSubmatch(cmdline, -1) {
		if !slices.ContainsFunc(build.lines, func(l string) bool { return strings.HasPrefix(l, "ARG "+arg[1]+"=") }) {
			t.Errorf("the go build line uses $%s, which the build stage declares with no ARG default", arg[1])
		}
	}

	// Run it as written, but for where the binary goes.
	const out = "-o /out/switchboard "
	if strings.Count(cmdline, out) != 1 {
		t.Fatalf("the go build line %q does not write /out/switchboard (which the stages copy)", cmdline)
	}
	bin := filepath.Join(t.TempDir(), "switchboard")
	cmd := exec.Command("sh", "-c", strings.Replace(cmdline, out, "-o "+bin+" ", 1))
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "VERSION=v0.0.0-image-test", "TARGETOS="+runtime.GOOS, "TARGETARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, b)
	}
	got, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(got), "v0.0.0-image-test") {
		t.Errorf("switchboard version: %v: %s, want the version v0.0.0-image-test", err, got)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is not static (it has %v): distroless static has no libc", p.Type)
		}
	}
}
