package teamtest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// browserEnv makes this test binary a browser that approves: started as
// $BROWSER by `switchboard auth login`, it follows the authorization URL.
const browserEnv = "SWITCHBOARD_TEAMTEST_BROWSER"

func TestMain(m *testing.M) {
	testserver.Main() // when started as a replica's upstream server
	if os.Getenv(browserEnv) == "1" {
		browserMain()
	}
	code := m.Run()
	pgtest.Stop()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func browserMain() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "browser: no URL")
		os.Exit(2)
	}
	code, err := oauthtest.Follow(context.Background(), os.Args[len(os.Args)-1])
	if err != nil || code != http.StatusOK {
		fmt.Fprintf(os.Stderr, "browser: HTTP %d, %v\n", code, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// binDir holds the switchboard binary built for this test binary.
var binDir string

// switchboardBinary builds the real binary once, without -race (the
// replicas' figures are the product's, not the race detector's), into a
// temporary directory that TestMain removes.
var switchboardBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "teamtest-bin-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "switchboard")
	cmd := exec.Command(goTool(), "build", "-o", bin, "github.com/switchboard-mcp/switchboard/cmd/switchboard")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building switchboard: %v\n%s", err, out)
	}
	return bin, nil
})

// goTool returns the go command of the toolchain running the tests.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
