package proxy

// Policy is what a server's policy (docs/policy.md) says of its tools, for
// the renderers that show them.
type Policy struct {
	// Changed holds the quarantined tools by name, each with the lines that
	// say what changed.
	Changed map[string][]string
	// Warnings are problems of the policy found against the tools, such as
	// an approve glob that matches none.
	Warnings []string
}

// ChangedMark precedes a quarantined tool in listings.
const ChangedMark = "[changed: quarantined]"
