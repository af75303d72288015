package proxy

import "time"

// CallRecord is the record of one tool call an engine made, through the proxy
// tool or a direct tool: who was called, when, for how long and how it
// ended, and the sizes of what went and came. It never holds the
// arguments, the result or an error's text, which may carry what the user
// would not show: only their sizes and the error's class. Fields are only
// ever added to.
type CallRecord struct {
	Server   string        `json:"server"`
	Tool     string        `json:"tool"`
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"durationNs"`
	// Outcome is CallOK, CallError (the tool answered with isError),
	// CallFailed (no answer: the server could not be reached, broke the
	// protocol, timed out) or CallCanceled (the caller gave up).
	Outcome     string `json:"outcome"`
	ErrorClass  string `json:"errorClass,omitempty"` // as in ServerStatus, when there was no answer
	ArgsBytes   int    `json:"argsBytes"`            // the arguments as JSON
	ResultBytes int    `json:"resultBytes"`          // the result as JSON; 0 without one
	// User is the subject of the caller's access token when serving with
	// settings.identity; "" otherwise.
	User string `json:"user,omitempty"`
}

// Call outcomes.
const (
	CallOK       = "ok"
	CallError    = "error"
	CallFailed   = "failed"
	CallCanceled = "canceled"
)
