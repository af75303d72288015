package switchboard_test

import (
	"os"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

func TestMain(m *testing.M) {
	testserver.Main() // runs the fixture server when this binary is started as one
	os.Exit(m.Run())
}
