//go:build !linux

package upstream

// markEnv is the variable that carries a pool's mark into its stdio
// children's environments; only Linux looks for it (escape_linux.go).
const markEnv = "SWITCHBOARD_POOL"

// newMark returns no mark: finding marked processes needs Linux's /proc.
func newMark() string { return "" }

// pidWindow is where a mark can be found; only Linux looks.
type pidWindow struct{}

func openPidWindow() pidWindow { return pidWindow{} }

// killMarked kills nothing here.
func killMarked(string, pidWindow) []int { return nil }
