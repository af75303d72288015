//go:build linux

package supervisor

// Small stand-ins for strconv and strings, which this package does not
// import (see the package comment). Only what the supervisor and /proc's
// stat lines need: non-negative decimal numbers and space-separated fields.

// itoa formats n in decimal.
func itoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// parseUint parses a non-empty string of decimal digits that fits in 63
// bits.
func parseUint(s string) (uint64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// atoi parses a non-negative decimal int.
func atoi(s string) (int, bool) {
	n, ok := parseUint(s)
	return int(n), ok
}

// fields splits s around runs of spaces and newlines.
func fields(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\n' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}

// quote joins args with spaces, in double quotes, for an error message.
func quote(args []string) string {
	s := `"`
	for i, a := range args {
		if i > 0 {
			s += " "
		}
		s += a
	}
	return s + `"`
}
