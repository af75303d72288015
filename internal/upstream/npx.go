package upstream

import (
	"bufio"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
)

// A server configured as "npx -y some-package@1.2.3" runs npm, which
// checks the registry (hundreds of milliseconds, and the network) and stays
// as the server's parent: signals, the end of stdin and the process tree
// reach npm, not the server. When the package is already installed where
// npx itself would take it from, Switchboard runs the package's bin
// directly instead. Only the cases where npx would run that very file
// without asking the registry are resolved; everything else runs npx as
// written.

// npxResolveEnv turns the resolution off when it is "0" (or "false", "off",
// "no"), in Switchboard's environment or in the server's env.
const npxResolveEnv = "SWITCHBOARD_NPX_RESOLVE"

// An npxCall is an npx command line taken apart.
type npxCall struct {
	spec    string   // the package argument as written: "name@1.2.3"
	name    string   // the package name: "name" or "@scope/name"
	version string   // the exact version asked for; "" for the name alone
	args    []string // the arguments of the package's bin
}

// parseNpx takes npx's arguments apart. It reports false for every form it
// does not resolve: flags other than -y/--yes, -q/--quiet and --no-install
// (-p/--package and -c change what runs; --cache, --registry and the other
// npm options change where it comes from), and specs that are not a
// registry package's name with, at most, an exact version (ranges and tags
// such as @latest make npx ask the registry; paths, URLs and git specs are
// not installed packages).
func parseNpx(args []string) (npxCall, bool) {
	for i, a := range args {
		switch a {
		case "-y", "--yes", "-q", "--quiet", "--no-install":
			continue
		case "--":
			if i+1 == len(args) {
				return npxCall{}, false
			}
			return parseSpec(args[i+1], args[i+2:])
		}
		if strings.HasPrefix(a, "-") {
			return npxCall{}, false
		}
		return parseSpec(a, args[i+1:])
	}
	return npxCall{}, false
}

// Built on first use, not at every command's start.
var (
	// npmNamePart is a package name, or a scope's name, as npm accepts
	// them: URL-safe, not starting with . or _, at most 214 characters.
	npmNamePart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9~-][A-Za-z0-9._~-]*$`) })
	// exactVersion is a semver version with no range, tag or build.
	exactVersion = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)
	})
)

// parseSpec takes apart "name", "@scope/name", "name@1.2.3" and
// "@scope/name@1.2.3".
func parseSpec(spec string, rest []string) (npxCall, bool) {
	if len(spec) > 214+64 {
		return npxCall{}, false
	}
	name, version := spec, ""
	scope := ""
	if strings.HasPrefix(spec, "@") {
		s, n, ok := strings.Cut(spec[1:], "/")
		if !ok || !npmNamePart().MatchString(s) {
			return npxCall{}, false
		}
		scope, name = "@"+s+"/", n
	}
	if n, v, ok := strings.Cut(name, "@"); ok {
		if !exactVersion().MatchString(v) {
			return npxCall{}, false
		}
		name, version = n, v
	}
	if !npmNamePart().MatchString(name) || len(scope)+len(name) > 214 {
		return npxCall{}, false
	}
	return npxCall{spec: spec, name: scope + name, version: version, args: rest}, true
}

// An npxTarget is what runs in npx's place.
type npxTarget struct {
	path string   // the program: node, or the bin itself
	args []string // its arguments: the bin first when path is node
	bin  string   // the bin, the real path of a file in the package
	pkg  string   // the package's directory
}

// resolveNpx returns what to run in place of command args (npx and its
// arguments) in dir with env, the child's environment, or false to run
// them as written. It is a no-op on Windows, where npx is a batch file and
// bins are shims.
func resolveNpx(command string, args []string, dir string, env []string) (npxTarget, bool) {
	if runtime.GOOS == "windows" || !isNpx(command) || npxOff(os.Getenv(npxResolveEnv)) || npxOff(getenv(env, npxResolveEnv)) {
		return npxTarget{}, false
	}
	call, ok := parseNpx(args)
	if !ok {
		return npxTarget{}, false
	}
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return npxTarget{}, false
	}
	pkg, bin, ok := findInstalled(call, dir, env)
	if !ok {
		return npxTarget{}, false
	}
	return runBin(pkg, bin, call.args, dir, env)
}

// isNpx reports whether command is npx: the bare name, or an absolute path
// to a file of that name.
func isNpx(command string) bool {
	return command == "npx" || (filepath.IsAbs(command) && filepath.Base(command) == "npx")
}

// npxOff reports whether a value of npxResolveEnv turns resolution off.
func npxOff(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "off", "no":
		return true
	}
	return false
}

// findInstalled finds the package npx would run for call, and the bin in it
// (the real path of a file inside the package), where npx itself would look
// without asking the registry: the local project (the nearest directory
// up from dir holding package.json or node_modules, npm's local prefix),
// whose top-level install of the name is taken at the exact version asked
// for or, for the name alone, at any version; then, for an exact version,
// npx's own cache, in the directory npx keys by the spec.
func findInstalled(call npxCall, dir string, env []string) (pkg, bin string, ok bool) {
	prefix := localPrefix(dir)
	pkg = filepath.Join(prefix, "node_modules", filepath.FromSlash(call.name))
	if bin, ok = packageBin(pkg, call); ok {
		if call.version != "" || !npxRunsOther(prefix, call.name, bin) {
			return pkg, bin, true
		}
		return "", "", false
	}
	if call.version == "" {
		return "", "", false // npx would ask the registry for the newest
	}
	install, ok := npxCacheDir(call.spec, env)
	if !ok {
		return "", "", false
	}
	// npm writes the hidden lockfile last: without it the install is not whole.
	if _, err := os.Stat(filepath.Join(install, "node_modules", ".package-lock.json")); err != nil {
		return "", "", false
	}
	pkg = filepath.Join(install, "node_modules", filepath.FromSlash(call.name))
	bin, ok = packageBin(pkg, call)
	return pkg, bin, ok
}

// localPrefix is npm's local prefix for dir: the nearest directory, from
// dir up, that holds package.json or node_modules; dir if none does.
func localPrefix(dir string) string {
	for d := dir; ; {
		if fileExists(filepath.Join(d, "package.json")) || dirExists(filepath.Join(d, "node_modules")) {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return dir
		}
		d = up
	}
}

// npxRunsOther reports whether npx, asked for a package by its name alone,
// would run something other than bin: a bin of that name in the project's
// own package.json, or a node_modules/.bin entry of that name, from the
// local prefix up, that is not bin.
func npxRunsOther(prefix, name, bin string) bool {
	var own manifest
	if readJSON(filepath.Join(prefix, "package.json"), &own) == nil {
		bins := map[string]string{}
		var one string
		if json.Unmarshal(own.Bin, &one) == nil { // npm names a lone bin for the package
			bins[own.Name[strings.LastIndex(own.Name, "/")+1:]] = one
		} else {
			_ = json.Unmarshal(own.Bin, &bins)
		}
		if bins[name] != "" {
			return true
		}
	}
	for d := prefix; ; {
		link := filepath.Join(d, "node_modules", ".bin", filepath.FromSlash(name))
		if fileExists(link) {
			real, err := filepath.EvalSymlinks(link)
			return err != nil || real != bin
		}
		up := filepath.Dir(d)
		if up == d {
			return false
		}
		d = up
	}
}

// npxCacheDir is the directory npx installs spec into: a hash of the spec
// under _npx in npm's cache ($npm_config_cache in env, else ~/.npm).
func npxCacheDir(spec string, env []string) (string, bool) {
	cache := getenvFold(env, "npm_config_cache", true)
	if cache == "" {
		home := getenv(env, "HOME")
		if home == "" {
			return "", false
		}
		cache = filepath.Join(home, ".npm")
	}
	if !filepath.IsAbs(cache) {
		return "", false
	}
	sum := sha512.Sum512([]byte(spec)) // npx hashes its sorted package list, here one spec
	return filepath.Join(cache, "_npx", hex.EncodeToString(sum[:])[:16]), true
}

// A manifest is what packageBin reads of a package.json.
type manifest struct {
	Name    string          `json:"name"`
	Version string          `json:"version"`
	Bin     json.RawMessage `json:"bin"`
}

// packageBin returns the real path of the bin npx would run from the
// package installed in pkg, if it is call's package at call's version (any
// version for none). Like npx, it takes the only bin (or the one all
// entries name), else the one named like the package without its scope.
// The bin must be a regular file inside the package, after symbolic links.
func packageBin(pkg string, call npxCall) (string, bool) {
	var m manifest
	if readJSON(filepath.Join(pkg, "package.json"), &m) != nil || m.Name != call.name {
		return "", false
	}
	if call.version != "" && m.Version != call.version {
		return "", false
	}
	rel, ok := pickBin(m)
	if !ok || rel == "" || filepath.IsAbs(rel) || strings.Contains(rel, "\x00") {
		return "", false
	}
	realPkg, err := filepath.EvalSymlinks(pkg)
	if err != nil {
		return "", false
	}
	joined := filepath.Join(realPkg, filepath.FromSlash(rel))
	if !inside(realPkg, joined) {
		return "", false
	}
	bin, err := filepath.EvalSymlinks(joined)
	if err != nil || !inside(realPkg, bin) || !fileExists(bin) {
		return "", false
	}
	return bin, true
}

// pickBin chooses the bin of m as npx does.
func pickBin(m manifest) (string, bool) {
	var one string
	if json.Unmarshal(m.Bin, &one) == nil {
		return one, true
	}
	var bins map[string]string
	if json.Unmarshal(m.Bin, &bins) != nil || len(bins) == 0 {
		return "", false
	}
	same := ""
	for _, v := range bins {
		if same != "" && v != same {
			same = ""
			break
		}
		same = v
	}
	if same != "" {
		return same, true
	}
	short := m.Name[strings.LastIndex(m.Name, "/")+1:]
	v, ok := bins[short]
	return v, ok
}

// inside reports whether path is dir or below it.
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// runBin decides how bin runs: under node when its first line is a node
// shebang (node found in the child's PATH, as the shebang would), else
// itself when it starts with a shebang and is executable. Anything else
// runs npx as written.
func runBin(pkg, bin string, args []string, dir string, env []string) (npxTarget, bool) {
	interp, ok := shebang(bin)
	if !ok {
		return npxTarget{}, false
	}
	if isNodeShebang(interp) {
		node, err := lookPath("node", dir, env)
		if err != nil {
			return npxTarget{}, false
		}
		return npxTarget{path: node, args: append([]string{bin}, args...), bin: bin, pkg: pkg}, true
	}
	if !isExecutable(bin) {
		return npxTarget{}, false
	}
	return npxTarget{path: bin, args: args, bin: bin, pkg: pkg}, true
}

// shebang returns the words of bin's "#!" line.
func shebang(bin string) ([]string, bool) {
	f, err := os.Open(bin)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false
	}
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return nil, false
	}
	words := strings.Fields(rest)
	return words, len(words) > 0
}

// isNodeShebang reports whether a shebang runs node with no options:
// "/usr/bin/env node" or a path to node.
func isNodeShebang(words []string) bool {
	switch len(words) {
	case 1:
		return filepath.Base(words[0]) == "node"
	case 2:
		return filepath.Base(words[0]) == "env" && words[1] == "node"
	}
	return false
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func dirExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// readJSON decodes the JSON file at path into v; it reads at most 4 MiB.
func readJSON(path string, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := json.NewDecoder(io.LimitReader(f, 4<<20)).Decode(v); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}
