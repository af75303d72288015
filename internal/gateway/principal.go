package gateway

// Principal is who a session acts for, as the audit trail names them: the
// user (a token's subject), the OAuth client the token was issued to, and
// the MCP client (its clientInfo name). The zero value is no one: a
// single-user gateway.
type Principal struct {
	User     string
	ClientID string
	Client   string
}

// SetPrincipal names who the session acts for in its audit records.
func (s *Session) SetPrincipal(p Principal) {
	s.mu.Lock()
	s.who = p
	s.mu.Unlock()
}

func (s *Session) principal() Principal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.who
}
