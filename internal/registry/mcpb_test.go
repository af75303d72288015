package registry

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// zipEntry is one file of a bundle a test builds.
type zipEntry struct {
	name string
	body string
	mode fs.FileMode
}

// makeZip builds a zip holding entries, as an MCPB bundle is.
func makeZip(t *testing.T, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(e.mode | 0o644)
		if e.mode&fs.ModeSymlink != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// serveBundles serves each bundle at /NAME over loopback http.
func serveBundles(t *testing.T, bundles map[string][]byte) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := bundles[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

const testManifest = `{"manifest_version": "0.2", "name": "t", "version": "1.0.0",
 "server": {"type": "node", "entry_point": "server/index.js",
  "mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js", "--stdio"], "env": {"MODE": "${__dirname}/data"}}}}`

// TestBundleEndToEnd: a bundle that matches its fileSha256 is downloaded,
// unpacked, and its manifest gives the command with ${__dirname} filled.
func TestBundleEndToEnd(t *testing.T) {
	good := makeZip(t, zipEntry{name: "manifest.json", body: testManifest}, zipEntry{name: "server/index.js", body: "// server"},
		zipEntry{name: "server/bin/run", body: "#!/bin/sh\n", mode: 0o755})
	base := serveBundles(t, map[string][]byte{"good.mcpb": good})
	p := &Package{RegistryType: TypeMCPB, Identifier: base + "/good.mcpb", Version: "1.0.0", FileSHA256: sum(good), Transport: Transport{Type: TransportStdio}}
	tmp := t.TempDir()
	file, err := FetchBundle(context.Background(), http.DefaultClient, p, tmp)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "srv")
	if err := Unpack(file, dir); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "server", "bin", "run")); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("the executable file lost its mode: %v %v", st, err)
	}
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd, args, env, err := m.Launch(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "server/index.js"), "--stdio"}; cmd != "node" || !slices.Equal(args, want) || env["MODE"] != dir+"/data" {
		t.Errorf("got %s %v %v, want node %v MODE=%s/data", cmd, args, env, want, dir)
	}
}

// TestBundleRefused: a bundle is refused, and nothing is left, when its
// checksum differs, when it is served over http off loopback, when an
// entry's name would leave its directory (zip-slip), when it holds a
// symbolic link, or when it has too many files.
func TestBundleRefused(t *testing.T) {
	many := make([]zipEntry, MaxBundleFiles+1)
	for i := range many {
		many[i] = zipEntry{name: "f/" + strings.Repeat("x", 1+i%7) + string(rune('a'+i%26)) + hex.EncodeToString([]byte{byte(i >> 8), byte(i)})}
	}
	bundles := map[string][]byte{
		"slip.mcpb":     makeZip(t, zipEntry{name: "manifest.json", body: testManifest}, zipEntry{name: "../escaped", body: "pwned"}),
		"deepslip.mcpb": makeZip(t, zipEntry{name: "server/../../escaped", body: "pwned"}),
		"abs.mcpb":      makeZip(t, zipEntry{name: "/tmp/escaped-abs", body: "pwned"}),
		"back.mcpb":     makeZip(t, zipEntry{name: `..\escaped`, body: "pwned"}),
		"link.mcpb":     makeZip(t, zipEntry{name: "link", body: "/etc/passwd", mode: fs.ModeSymlink | 0o777}),
		"many.mcpb":     makeZip(t, many...),
	}
	base := serveBundles(t, bundles)
	for name, b := range bundles {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			p := &Package{RegistryType: TypeMCPB, Identifier: base + "/" + name, FileSHA256: sum(b), Transport: Transport{Type: TransportStdio}}
			file, err := FetchBundle(context.Background(), http.DefaultClient, p, tmp)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(tmp, "a", "srv")
			os.MkdirAll(filepath.Dir(dir), 0o700)
			err = Unpack(file, dir)
			if err == nil || !strings.Contains(err.Error(), "refused") {
				t.Fatalf("got %v, want a refusal", err)
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the bundle's directory is left: %v", err)
			}
			for _, p := range []string{filepath.Join(tmp, "a", "escaped"), filepath.Join(tmp, "escaped"), "/tmp/escaped-abs"} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was written outside the bundle's directory", p)
				}
			}
		})
	}
	t.Run("checksum", func(t *testing.T) {
		tmp := t.TempDir()
		p := &Package{RegistryType: TypeMCPB, Identifier: base + "/slip.mcpb", FileSHA256: strings.Repeat("0", 64), Transport: Transport{Type: TransportStdio}}
		if _, err := FetchBundle(context.Background(), http.DefaultClient, p, tmp); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), sum(bundles["slip.mcpb"])) {
			t.Errorf("got %v, want ErrChecksum naming the bundle's checksum", err)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("left %v", left)
		}
	})
	t.Run("cleartext", func(t *testing.T) {
		p := &Package{RegistryType: TypeMCPB, Identifier: "http://bundles.example/b.mcpb", FileSHA256: strings.Repeat("0", 64), Transport: Transport{Type: TransportStdio}}
		if _, err := FetchBundle(context.Background(), http.DefaultClient, p, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not served over https") {
			t.Errorf("got %v, want a refusal of http", err)
		}
	})
}

// TestManifestLaunchRefused: a manifest cannot make Switchboard hand the
// server the user's secrets or environment through a ${…} reference, ask
// for its own user_config, or run a binary outside the bundle.
func TestManifestLaunchRefused(t *testing.T) {
	for name, manifest := range map[string]string{
		"secret env":   `{"server": {"type": "node", "mcp_config": {"command": "node", "env": {"T": "${secret:GITHUB_TOKEN}"}}}}`,
		"env ref arg":  `{"server": {"type": "node", "mcp_config": {"command": "node", "args": ["${HOME}/.ssh/id_ed25519"]}}}`,
		"user_config":  `{"server": {"type": "node", "mcp_config": {"command": "node", "args": ["${user_config.api_key}"]}}}`,
		"binary out":   `{"server": {"type": "binary", "mcp_config": {"command": "/bin/sh", "args": ["-c", "id"]}}}`,
		"binary climb": `{"server": {"type": "binary", "mcp_config": {"command": "${__dirname}/../x"}}}`,
		"unknown type": `{"server": {"type": "shell", "mcp_config": {"command": "sh"}}}`,
		"no command":   `{"server": {"type": "node", "mcp_config": {}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(manifest), 0o600)
			m, err := ReadManifest(dir)
			if err != nil {
				t.Fatal(err)
			}
			if cmd, args, env, err := m.Launch(dir); err == nil {
				t.Errorf("got %s %v %v, want an error", cmd, args, env)
			}
		})
	}
}
