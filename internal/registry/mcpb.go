package registry

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Bounds on an MCPB bundle (https://github.com/modelcontextprotocol/mcpb):
// what is downloaded, and what it unpacks to.
const (
	MaxBundle       = 512 << 20 // the bundle as downloaded
	MaxUnpacked     = 1 << 30   // every file of the bundle, unpacked
	MaxBundleFiles  = 20000     // files and directories in the bundle
	maxManifestSize = 1 << 20
)

// ErrChecksum is wrapped by FetchBundle's error when the bundle is not the
// one the registry describes.
var ErrChecksum = errors.New("the bundle does not match its fileSha256")

// FetchBundle downloads an MCPB package's bundle into a new file in dir,
// checks it against the package's fileSha256, and returns the file's path;
// the caller removes it. The URL must be https (http only to a loopback
// address); the bundle is bounded by MaxBundle. A bundle that does not
// match is removed and refused, naming both checksums.
func FetchBundle(ctx context.Context, client *http.Client, p *Package, dir string) (path string, err error) {
	if err := checkPackage(p); err != nil {
		return "", err
	}
	if p.RegistryType != TypeMCPB {
		return "", fmt.Errorf("the %s package %s is not an mcpb bundle", p.RegistryType, p.Identifier)
	}
	u, _ := url.Parse(p.Identifier)
	if u.Scheme != "https" && !loopback(u.Hostname()) {
		return "", fmt.Errorf("the mcpb bundle %s is not served over https: refused", p.Identifier)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.Identifier, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("downloading the mcpb bundle %s: %w", p.Identifier, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("downloading the mcpb bundle %s: %s", p.Identifier, resp.Status)
	}
	f, err := os.CreateTemp(dir, "bundle-*.mcpb")
	if err != nil {
		return "", err
	}
	defer func() {
		f.Close()
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, MaxBundle+1))
	if err != nil {
		return "", fmt.Errorf("downloading the mcpb bundle %s: %w", p.Identifier, err)
	}
	if n > MaxBundle {
		return "", fmt.Errorf("the mcpb bundle %s is over %d MiB: refused", p.Identifier, MaxBundle>>20)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != p.FileSHA256 {
		return "", fmt.Errorf("%w: the mcpb bundle %s has SHA-256 %s, not the fileSha256 %s the registry lists: refused, nothing written", ErrChecksum, p.Identifier, got, p.FileSHA256)
	}
	return f.Name(), f.Close()
}

// loopback reports whether host is a loopback name or address.
func loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// Unpack unpacks the bundle at path into dir, which must not exist: every
// entry's name must stay inside dir (no absolute path, no "..", no
// backslash), symbolic links and other special files are refused, and the
// files are bounded by MaxBundleFiles and MaxUnpacked whatever the zip's
// headers say. On error dir is removed.
func Unpack(path, dir string) (err error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("opening the mcpb bundle: %w", err)
	}
	defer zr.Close()
	if len(zr.File) > MaxBundleFiles {
		return fmt.Errorf("the mcpb bundle has %d files, over %d: refused", len(zr.File), MaxBundleFiles)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	var total int64
	for _, zf := range zr.File {
		name := zf.Name
		if strings.Contains(name, `\`) || !filepath.IsLocal(filepath.FromSlash(strings.TrimSuffix(name, "/"))) {
			return fmt.Errorf("the mcpb bundle has the file %q, whose name leaves its directory: refused", clip(name))
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		mode := zf.Mode()
		switch {
		case mode.IsDir():
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		case !mode.IsRegular():
			return fmt.Errorf("the mcpb bundle has %q, which is not a regular file (%s): refused", clip(name), mode.Type())
		}
		n, err := unpackFile(zf, target, mode.Perm()&0o755|0o600, MaxUnpacked-total)
		if err != nil {
			return err
		}
		total += n
	}
	return nil
}

// unpackFile writes one file of at most limit bytes.
func unpackFile(zf *zip.File, target string, perm os.FileMode, limit int64) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return 0, err
	}
	r, err := zf.Open()
	if err != nil {
		return 0, fmt.Errorf("reading %q of the mcpb bundle: %w", clip(zf.Name), err)
	}
	defer r.Close()
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return 0, fmt.Errorf("unpacking %q of the mcpb bundle: %w", clip(zf.Name), err)
	}
	n, err := io.Copy(out, io.LimitReader(r, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("unpacking %q of the mcpb bundle: %w", clip(zf.Name), err)
	}
	if n > limit {
		return n, fmt.Errorf("the mcpb bundle unpacks to over %d MiB: refused", MaxUnpacked>>20)
	}
	return n, nil
}

// Manifest is the part of an MCPB bundle's manifest.json that says how
// to run its server.
type Manifest struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Server  struct {
		Type       string `json:"type"` // node, python, binary, uv
		EntryPoint string `json:"entry_point"`
		MCPConfig  struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcp_config"`
	} `json:"server"`
}

// ReadManifest reads the manifest.json of a bundle unpacked in dir.
func ReadManifest(dir string) (*Manifest, error) {
	f, err := os.Open(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("the mcpb bundle has no manifest.json: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManifestSize {
		return nil, fmt.Errorf("the mcpb bundle's manifest.json is over %d KiB: refused", maxManifestSize>>10)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("the mcpb bundle's manifest.json: %w", err)
	}
	return &m, nil
}

// Launch is the command that runs the manifest's server from dir, where
// the bundle is unpacked: mcp_config's command, arguments and environment
// with ${__dirname} replaced by dir. A value that asks for the bundle's
// own user_config (${user_config.NAME}) is refused: Switchboard does not
// fill those; so is any other ${…}, which the configuration would read as
// a reference to the user's environment or secrets. A binary server's command must be inside dir.
func (m *Manifest) Launch(dir string) (command string, args []string, env map[string]string, err error) {
	s := &m.Server
	switch s.Type {
	case "node", "python", "binary", "uv":
	default:
		return "", nil, nil, fmt.Errorf("the mcpb bundle's server type %q is not one Switchboard runs (node, python, binary, uv)", clip(s.Type))
	}
	c := s.MCPConfig
	if c.Command == "" {
		return "", nil, nil, errors.New("the mcpb bundle's manifest names no mcp_config.command")
	}
	fill := func(v string) (string, error) {
		if strings.Contains(v, "${user_config.") {
			return "", fmt.Errorf("the mcpb bundle asks for %q, one of its own user settings, which Switchboard does not fill: add it by hand", clip(v))
		}
		if !printable(v) || len(v) > maxString {
			return "", fmt.Errorf("the mcpb bundle's manifest has the value %q, not printable text of at most %d bytes", clip(v), maxString)
		}
		v = strings.ReplaceAll(v, "${__dirname}", dir)
		if strings.Contains(v, "${") {
			// Switchboard's configuration reads ${NAME} and ${secret:NAME}
			// as references: a bundle's manifest must not make it hand the
			// bundle the user's environment or stored secrets.
			return "", fmt.Errorf("the mcpb bundle's manifest has the value %q, with a ${…} reference other than ${__dirname}: refused", clip(v))
		}
		return v, nil
	}
	if command, err = fill(c.Command); err != nil {
		return "", nil, nil, err
	}
	if s.Type == "binary" && !pathInside(dir, command) {
		return "", nil, nil, fmt.Errorf("the mcpb bundle's binary server runs %q, outside the bundle: refused", clip(command))
	}
	if len(c.Args) > maxInputs || len(c.Env) > maxInputs {
		return "", nil, nil, fmt.Errorf("the mcpb bundle's manifest has over %d arguments or variables", maxInputs)
	}
	for _, a := range c.Args {
		v, err := fill(a)
		if err != nil {
			return "", nil, nil, err
		}
		args = append(args, v)
	}
	for _, k := range slices.Sorted(mapKeys(c.Env)) {
		if !envNameRE().MatchString(k) {
			return "", nil, nil, fmt.Errorf("the mcpb bundle's manifest has the invalid environment variable name %q", clip(k))
		}
		v, err := fill(c.Env[k])
		if err != nil {
			return "", nil, nil, err
		}
		if env == nil {
			env = map[string]string{}
		}
		env[k] = v
	}
	return command, args, env, nil
}

func pathInside(dir, path string) bool {
	rel, err := filepath.Rel(dir, filepath.Clean(path))
	return err == nil && filepath.IsLocal(rel)
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
