package main

import (
	"archive/zip"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"maps"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/registrytest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// registrySeed is the registry's entries for the tests, in its own
// server.json format: the npm memory server the peers pin, the same with a
// secret variable, a remote HTTP server, an MCPB bundle whose fileSha256 is
// not its checksum, and an OCI image (this machine's PATH in the scripts
// has no docker).
func registrySeed(remote, bundle string) []any {
	const schema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
	stdio := map[string]any{"type": "stdio"}
	memory := func(env ...any) map[string]any {
		p := map[string]any{"registryType": "npm", "identifier": "@modelcontextprotocol/server-memory", "version": "2026.8.31", "transport": stdio}
		if len(env) > 0 {
			p["environmentVariables"] = env
		}
		return p
	}
	entry := func(name, version string, packages []any, remotes []any) map[string]any {
		e := map[string]any{"$schema": schema, "name": name, "description": "Test server " + name, "version": version}
		if packages != nil {
			e["packages"] = packages
		}
		if remotes != nil {
			e["remotes"] = remotes
		}
		return e
	}
	return []any{
		entry("io.github.switchboard-test/memory", "1.0.0", []any{memory()}, nil),
		entry("io.github.switchboard-test/memory-secret", "1.0.0", []any{memory(
			map[string]any{"name": "MEMORY_API_TOKEN", "description": "the API token", "isRequired": true, "isSecret": true},
			map[string]any{"name": "MEMORY_REGION", "description": "the region", "isRequired": true, "default": "eu"},
		)}, nil),
		entry("io.github.switchboard-test/echo-remote", "2.0.0", nil, []any{map[string]any{"type": "streamable-http", "url": remote}}),
		entry("io.github.switchboard-test/echo-remote", "2.1.0", nil, []any{map[string]any{"type": "streamable-http", "url": remote + "/v2"}}),
		entry("io.github.switchboard-test/bundle", "1.0.0", []any{map[string]any{
			"registryType": "mcpb", "identifier": bundle, "version": "1.0.0",
			"fileSha256": "0000000000000000000000000000000000000000000000000000000000000000", "transport": stdio}}, nil),
		// Two real published versions of the npm server, the older first,
		// for update --write of a package pin.
		entry("io.github.switchboard-test/memory-pinned", "1.0.0", []any{map[string]any{"registryType": "npm",
			"identifier": "@modelcontextprotocol/server-memory", "version": "2026.7.4", "transport": stdio}}, nil),
		entry("io.github.switchboard-test/memory-pinned", "1.1.0", []any{memory()}, nil),
		entry("io.github.switchboard-test/container", "1.0.0", []any{map[string]any{
			"registryType": "oci", "identifier": "docker.io/switchboard-test/none:1.0.0", "transport": stdio}}, nil),
	}
}

// TestRegistryScripts runs testdata/registry/*.txtar against the real MCP
// registry server (registrytest) seeded with registrySeed: $REGISTRY is its
// URL, $PEERS the directory of the npm peers, where npx finds the pinned
// server-memory installed, and $RTBIN holds only node and npx, for PATH.
func TestRegistryScripts(t *testing.T) {
	p := mcptest.Peers(t)
	// The registry refuses remotes on localhost, 127.0.0.1 or plain http:
	// the remote is https on 127.0.0.2, with a certificate the scripts
	// trust through SSL_CERT_FILE.
	remote, certFile := tlsServer(t, "127.0.0.2", echoServer())
	good, slip, v2 := testBundles(t)
	bundle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/good.mcpb":
			w.Write(good)
		case "/v2.mcpb":
			w.Write(v2)
		case "/slip.mcpb":
			w.Write(slip)
		default:
			w.Write([]byte("PK not the bundle the registry describes"))
		}
	}))
	t.Cleanup(bundle.Close)
	seed := append(registrySeed(remote.URL+"/mcp", bundle.URL+"/server.mcpb"),
		bundleEntry("bundle-good", "1.0.0", bundle.URL+"/good.mcpb", sha(good)), bundleEntry("bundle-slip", "1.0.0", bundle.URL+"/slip.mcpb", sha(slip)),
		// Two versions of a bundle, for update --write: the newer runs
		// another server (its tool is "env", not "echo").
		bundleEntry("bundle-upd", "1.0.0", bundle.URL+"/good.mcpb", sha(good)), bundleEntry("bundle-upd", "1.1.0", bundle.URL+"/v2.mcpb", sha(v2)),
		// The same, but the newer version's fileSha256 is not its bundle's.
		bundleEntry("bundle-upd-bad", "1.0.0", bundle.URL+"/good.mcpb", sha(good)), bundleEntry("bundle-upd-bad", "1.1.0", bundle.URL+"/v2.mcpb", strings.Repeat("0", 64)))
	base := registrytest.Start(t, seed...)
	bin := t.TempDir()
	for _, name := range []string{"node", "npx"} {
		target := filepath.Join(filepath.Dir(p.Node), name)
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	params := scriptParams("testdata/registry", map[string]string{"REGISTRY": base, "PEERS": p.Dir, "RTBIN": bin, "SSL_CERT_FILE": certFile})
	testscript.Run(t, params)
}

// tlsServer serves h over https on ip with a self-signed certificate for
// that address, and returns the server and the certificate's PEM file.
func tlsServer(t *testing.T, ip string, h http.Handler) (*httptest.Server, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: ip},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP(ip)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("skipped: cannot listen on %s: %v", ip, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, file
}

// testBundles builds three MCPB bundles: one whose manifest runs the test
// server (a binary server: a script in the bundle that starts this test
// binary as the good fixture), one with a file that climbs out of its
// directory (zip-slip), and a second version of the first that runs the
// env-report fixture and holds the file server/v2.
func testBundles(t *testing.T) (good, slip, v2 []byte) {
	exe, args, env := testserver.Command(testserver.Good)
	manifestFor := func(version string, env map[string]string) string {
		m, _ := json.Marshal(map[string]any{"manifest_version": "0.2", "name": "bundle-good", "version": version,
			"server": map[string]any{"type": "binary", "entry_point": "server/run.sh",
				"mcp_config": map[string]any{"command": "${__dirname}/server/run.sh", "args": args, "env": env}}})
		return string(m)
	}
	manifest := manifestFor("1.0.0", env)
	build := func(files map[string]string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, name := range slices.Sorted(maps.Keys(files)) {
			h := &zip.FileHeader{Name: name, Method: zip.Deflate}
			h.SetMode(0o755)
			w, err := zw.CreateHeader(h)
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte(files[name]))
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	good = build(map[string]string{"manifest.json": string(manifest), "server/run.sh": "#!/bin/sh\nexec '" + exe + "' \"$@\"\n"})
	slip = build(map[string]string{"manifest.json": string(manifest), "../../../../slipped": "pwned"})
	_, _, env2 := testserver.Command(testserver.EnvReport)
	v2 = build(map[string]string{"manifest.json": manifestFor("1.1.0", env2), "server/run.sh": "#!/bin/sh\nexec '" + exe + "' \"$@\"\n", "server/v2": "2"})
	return good, slip, v2
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// bundleEntry is version of a registry entry whose one package is the
// bundle at url, with the fileSha256 sum.
func bundleEntry(name, version, url, sum string) map[string]any {
	return map[string]any{"$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
		"name": "io.github.switchboard-test/" + name, "description": "Test server " + name, "version": version,
		"packages": []any{map[string]any{"registryType": "mcpb", "identifier": url, "version": version,
			"fileSha256": sum, "transport": map[string]any{"type": "stdio"}}}}
}
