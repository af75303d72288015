package mcptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// conformancePackage is go-sdk's reference server for the MCP conformance
// suite. It is built at the go-sdk version in go.mod.
const conformancePackage = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// ConformanceServer starts go-sdk's conformance everything-server over
// streamable HTTP (stateless, its default) on a free 127.0.0.1 port and
// returns its endpoint URL. It serves the fixtures the MCP conformance suite
// expects (test_simple_text, test://static-text, test_simple_prompt, …). The
// server is built once per test binary and stopped when the test ends.
func ConformanceServer(t testing.TB) (endpoint string) {
	t.Helper()
	bin, err := conformanceBinary()
	if err != nil {
		t.Fatal(err)
	}
	port := serve(t, "conformance everything-server", func(port int) Command {
		return Command{
			Path: bin,
			Args: []string{"-http=127.0.0.1:" + strconv.Itoa(port)},
			Env:  []string{ownerMark()},
		}
	})
	// The handler serves every path; /mcp is what the conformance suite uses.
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// ConformanceStdio returns the path of go-sdk's conformance
// everything-server, which serves over stdio when run without flags.
func ConformanceStdio(t testing.TB) string {
	t.Helper()
	bin, err := conformanceBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// conformanceBinary builds the conformance server at most once per test
// binary. The memo holds a result that never changes.
var conformanceBinary = sync.OnceValues(buildConformanceServer)

// buildConformanceServer builds the conformance server into the user cache
// directory, where go build leaves an up-to-date binary untouched, so that only
// the first build on a machine pays for linking. go build replaces the file by
// renaming, so test binaries building it concurrently do not disturb each
// other or a running copy.
func buildConformanceServer() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", fmt.Errorf("building %s: %w", conformancePackage, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "switchboard-mcptest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("building %s: %w", conformancePackage, err)
	}
	bin := filepath.Join(dir, "conformance-everything-server")
	cmd := exec.Command("go", "build", "-o", bin, conformancePackage)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", conformancePackage, err, out)
	}
	return bin, nil
}
