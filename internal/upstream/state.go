package upstream

import "time"

// A State is where a server's connection stands.
type State string

// States. A server starts disconnected (or disabled); an operation moves it
// to connecting and then connected or failed; losing the connection moves it
// back to disconnected (closed on purpose, for example when idle) or failed.
const (
	StateDisconnected State = "disconnected"
	StateConnecting   State = "connecting"
	StateConnected    State = "connected"
	StateFailed       State = "failed"
	StateNeedsAuth    State = "needs-auth" // the server answered HTTP 401, or 403 insufficient_scope
	StateDisabled     State = "disabled"
)

// Status is a snapshot of one server, taken without connecting and without
// resolving any secret.
type Status struct {
	Name       string
	State      State
	ErrorClass Class     // class of the last error; "" if there was none
	Error      string    // the last error; it never holds a secret value
	ErrorAt    time.Time // when the last error happened
	Tools      int       // tools after include/exclude; -1 while not known
	Generation uint64    // connections made so far; each has its own number
	ConnAt     time.Time // when the last connection was made; zero before the first
	PID        int       // the stdio server's pid while connected (not its supervisor's); 0 otherwise
	Protocol   string    // the negotiated protocol revision while connected
	// Fallback says, while connected, why a server defined by a "url"
	// without a "type" is reached over legacy SSE: "connected over legacy
	// SSE: the URL rejected Streamable HTTP (HTTP 405)"; "" otherwise.
	Fallback string
}

// failure is the last error of a server, kept for status.
type failure struct {
	class Class
	msg   string
	at    time.Time
}
