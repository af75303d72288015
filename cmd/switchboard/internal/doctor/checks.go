package doctor

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the catalog's driver

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/config/hosts"
)

// installHints say how to get the commands MCP servers are usually started
// with.
var installHints = map[string]string{
	"npx":     "install Node.js (https://nodejs.org), which provides node, npm and npx",
	"npm":     "install Node.js (https://nodejs.org), which provides node, npm and npx",
	"node":    "install Node.js (https://nodejs.org), which provides node, npm and npx",
	"uvx":     "install uv (https://docs.astral.sh/uv/), which provides uv and uvx",
	"uv":      "install uv (https://docs.astral.sh/uv/), which provides uv and uvx",
	"docker":  "install Docker (https://docs.docker.com/get-docker/)",
	"python":  "install Python 3",
	"python3": "install Python 3",
	"deno":    "install Deno (https://deno.com)",
	"bun":     "install Bun (https://bun.sh)",
}

// versionTimeout bounds one "--version".
const versionTimeout = 3 * time.Second

// checkCommands finds each usable stdio server's command: on PATH (as
// serve would see it) or at its path, and its version where asking is
// cheap (the commands of installHints).
func checkCommands(ctx context.Context, o Options) []Finding {
	pathEnv, _ := o.LookupEnv("PATH")
	type found struct {
		path string
		err  error
	}
	seen := map[string]found{}
	var out []Finding
	var okNames []string
	for _, s := range usable(o.Config) {
		if s.Type != config.TransportStdio {
			continue
		}
		f, ok := seen[s.Command]
		if !ok {
			p, err := lookPath(s.Command, pathEnv, s.Cwd)
			f = found{p, err}
			seen[s.Command] = f
		}
		if f.err == nil {
			continue
		}
		base := filepath.Base(s.Command)
		fix := installHints[strings.TrimSuffix(base, ".exe")]
		if fix == "" {
			fix = "install " + base
		}
		fix += fmt.Sprintf(", or give its full path as \"command\" in %s", o.Pretty(s.Source.Path))
		out = append(out, Finding{Check: CheckCommand, Severity: Error, Server: s.Name,
			What: fmt.Sprintf("server %q runs %q: %v", s.Name, s.Command, f.err), Where: o.where(s, s.Path+".command"), Fix: fix})
	}
	for cmd, f := range seen {
		if f.err == nil {
			okNames = append(okNames, cmd)
		}
	}
	sort.Strings(okNames)
	versions := make([]string, len(okNames))
	var wg sync.WaitGroup
	for i, cmd := range okNames {
		if _, cheap := installHints[strings.TrimSuffix(filepath.Base(cmd), ".exe")]; cheap {
			wg.Go(func() { versions[i] = o.Version(ctx, seen[cmd].path) })
		}
	}
	wg.Wait()
	for i, cmd := range okNames {
		what := fmt.Sprintf("%s is %s", cmd, seen[cmd].path)
		if versions[i] != "" {
			what += " (" + versions[i] + ")"
		}
		out = append(out, Finding{Check: CheckCommand, Severity: OK, What: what})
	}
	return out
}

// lookPath finds command as exec.LookPath would in an environment whose
// PATH is pathEnv; a command with a separator is taken relative to cwd.
func lookPath(command, pathEnv, cwd string) (string, error) {
	if strings.ContainsAny(command, `/\`) {
		p := command
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		if err := executable(p); err != nil {
			return "", err
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			continue
		}
		for _, name := range candidates(command) {
			p := filepath.Join(dir, name)
			if executable(p) == nil {
				return p, nil
			}
		}
	}
	return "", errors.New("not found on PATH")
}

func candidates(command string) []string {
	if runtime.GOOS != "windows" || filepath.Ext(command) != "" {
		return []string{command}
	}
	return []string{command + ".exe", command + ".cmd", command + ".bat", command}
}

func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file")
	case err != nil:
		return err
	case fi.IsDir():
		return errors.New("is a directory")
	case runtime.GOOS != "windows" && fi.Mode()&0o111 == 0:
		return errors.New("is not executable")
	}
	return nil
}

// runVersion returns the first line "path --version" prints, or "".
func runVersion(ctx context.Context, path string) string {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if len(line) > 80 {
		line = line[:80]
	}
	return strings.TrimSpace(line)
}

// checkHosts says which hosts mount Switchboard, and how, and reports the
// servers such a host still defines itself that Switchboard serves too:
// the host loads them twice.
func checkHosts(o Options) []Finding {
	var out []Finding
	served := map[string]bool{}
	for _, s := range usable(o.Config) {
		served[s.Name] = true
	}
	if len(served) == 0 {
		// First run: import before setup, or setup mounts an empty gateway.
		for _, h := range config.OtherHosts(o.Config.Dirs) {
			out = append(out, Finding{Check: CheckHost, Severity: Warning,
				What:  fmt.Sprintf("%s defines %d MCP %s that Switchboard does not use yet", h.Host, len(h.Servers), plural(len(h.Servers), "server")),
				Where: o.Pretty(h.Files[0]), Fix: config.ImportCommand(h.Host)})
		}
	}
	for _, host := range config.HostNames() {
		plan, err := hosts.PlanSetup(o.Config.Dirs.Hosts(), host, hosts.SetupOptions{Command: cmp.Or(o.SetupCommand, "switchboard")})
		if err != nil || plan.State == hosts.SetupNoFile {
			continue
		}
		file := o.Pretty(plan.File)
		switch plan.State {
		case hosts.SetupInvalid:
			out = append(out, Finding{Check: CheckHost, Severity: Warning, What: fmt.Sprintf("%s's file cannot be read: %v", plan.Title, plan.Err), Where: file,
				Fix: "fix the file, then: switchboard setup " + host})
			continue
		case hosts.SetupAbsent:
			out = append(out, Finding{Check: CheckHost, Severity: Info, What: plan.Title + " does not mount Switchboard", Where: file,
				Fix: "switchboard setup " + host + " --write"})
			continue
		}
		how := "as setup writes it"
		if plan.State == hosts.SetupDifferent {
			how = "with an entry of its own (not what switchboard setup " + host + " writes)"
		}
		out = append(out, Finding{Check: CheckHost, Severity: OK, What: fmt.Sprintf("%s mounts Switchboard as %q, %s", plan.Title, plan.Name, how), Where: file + " " + plan.Key})
		out = append(out, duplicates(o, host, plan, served)...)
	}
	return out
}

func duplicates(o Options, host string, plan *hosts.Setup, served map[string]bool) []Finding {
	var out []Finding
	for _, s := range config.ImportHost(o.Config.Dirs, host).Servers {
		if s.Name == plan.Name || !served[s.Name] || s.Disabled {
			continue
		}
		out = append(out, Finding{Check: CheckDuplicate, Severity: Warning, Server: s.Name,
			What:  fmt.Sprintf("%s loads %q itself and through Switchboard: its tools cost tokens twice", plan.Title, s.Name),
			Where: o.where(s, ""),
			Fix:   "switchboard setup " + host + " --migrate --write"})
	}
	return out
}

// checkDirectories checks that the state, cache and spill directories
// exist and can be written, or can be made.
func checkDirectories(o Options) []Finding {
	var out []Finding
	dirs := []struct{ what, path string }{
		{"state directory", o.Config.Dirs.StateDir()},
		{"cache directory", o.Config.Dirs.CacheDir()},
		{"spill directory", o.SpillDir},
	}
	for _, d := range dirs {
		if d.path == "" {
			continue
		}
		if err := writable(d.path); err != nil {
			out = append(out, Finding{Check: CheckDirectory, Severity: Error, What: fmt.Sprintf("the %s cannot be written: %v", d.what, err), Where: o.Pretty(d.path),
				Fix: "make it yours and writable: chmod u+rwx " + o.Pretty(d.path)})
			continue
		}
		out = append(out, Finding{Check: CheckDirectory, Severity: OK, What: "the " + d.what + " can be written", Where: o.Pretty(d.path)})
	}
	return out
}

// writable checks that a file can be made in dir, or in the nearest
// directory above it that exists (which dir would be made in).
func writable(dir string) error {
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			f, err := os.CreateTemp(dir, ".doctor-*")
			if err != nil {
				return err
			}
			f.Close()
			return os.Remove(f.Name())
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return err
		}
		dir = parent
	}
}

// checkCatalog runs SQLite's integrity check on the catalog, read-only.
func checkCatalog(ctx context.Context, o Options) []Finding {
	if o.CatalogPath == "" {
		return nil
	}
	where := o.Pretty(o.CatalogPath)
	if _, err := os.Stat(o.CatalogPath); errors.Is(err, fs.ErrNotExist) {
		return []Finding{{Check: CheckCatalog, Severity: Info, What: "there is no catalog yet: it is made on first use", Where: where, Fix: "switchboard index"}}
	}
	bad := func(err error) []Finding {
		return []Finding{{Check: CheckCatalog, Severity: Error, What: "the catalog is damaged: " + err.Error(), Where: where,
			Fix: fmt.Sprintf("remove it (it is a cache) and rebuild it: rm %s && switchboard index", where)}}
	}
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(o.CatalogPath)+"?mode=ro")
	if err != nil {
		return bad(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return bad(err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return bad(err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return bad(err)
	}
	if len(msgs) != 1 || msgs[0] != "ok" {
		return bad(errors.New(strings.Join(msgs, "; ")))
	}
	return []Finding{{Check: CheckCatalog, Severity: OK, What: "the catalog passes SQLite's integrity check", Where: where}}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
