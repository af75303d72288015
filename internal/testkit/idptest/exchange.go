package idptest

import (
	"encoding/json"
	"net/http"
	"testing"
)

// The gateway's confidential client at the provider, which may exchange
// a user's access token for one to an upstream (RFC 8693): the token it
// gets has the same subject, and the upstream's URL (the resource
// parameter) as its audience.
const (
	GatewayClientID = "switchboard-gateway"
	GatewaySecret   = "gateway-secret"
)

// ScopeNoExchange, asked for in a user's token, makes the provider refuse
// to exchange that token (invalid_grant).
const ScopeNoExchange = "test:noexchange"

// Exchanges returns how many token exchanges the provider made, by
// subject.
func (p *IdP) Exchanges(t testing.TB) map[string]int {
	t.Helper()
	resp, err := http.Get(p.Issuer + "/test/exchanges")
	if err != nil {
		t.Fatalf("reading the provider's exchanges: %v", err)
	}
	defer resp.Body.Close()
	n := map[string]int{}
	if err := json.NewDecoder(resp.Body).Decode(&n); err != nil {
		t.Fatalf("reading the provider's exchanges: %v", err)
	}
	return n
}
