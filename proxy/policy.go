package proxy

// Policy is what a server's policy (docs/policy.md) says of its tools, for
// the renderers that show them.
type Policy struct {
	// Changed holds the quarantined tools, by name, that are listed with
	// the definition the user approved: the server offers another.
	Changed map[string]bool
	// Held holds the quarantined tools that have no approved definition
	// (new under pin "strict", or pins that could not be read), by name,
	// with the mark to list them with (NewMark, UnreadMark): they are
	// listed by name alone.
	Held map[string]string
	// Warnings are problems of the policy found against the tools, such as
	// an approve glob that matches none.
	Warnings []string
}

// Marks that precede quarantined tools in listings.
const (
	// ChangedMark precedes a tool listed with its approved definition.
	ChangedMark = "[changed: quarantined]"
	// NewMark precedes a tool new under pin "strict", never approved.
	NewMark = "[new: quarantined, not shown until approved]"
	// UnreadMark precedes a tool of a server whose pins could not be read.
	UnreadMark = "[quarantined: the pins could not be read]"
)

// QuarantineNote is what describe shows of a quarantined tool besides the
// definition the user approved.
type QuarantineNote struct {
	// Notes are Switchboard's own words: since when, why, how to accept.
	Notes []string
	// Offered is what the server offers instead, as lines of a diff
	// against the approved definition: the server's text, shown only as
	// untrusted data.
	Offered []string
}
