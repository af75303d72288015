package upstream

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// TestScrubberTakesTheClientKey: an error that quotes the OAuth client key
// (oauth.clientKey), whole or one line of it, loses it, as it loses the
// client secret.
func TestScrubberTakesTheClientKey(t *testing.T) {
	const key = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\nCANARYLINEtwoCANARYLINEtwoCANARYLINEtwo0123456789\n-----END PRIVATE KEY-----\n"
	s := &config.Server{Name: "api", Type: config.TransportHTTP, URL: "https://example.com/mcp",
		OAuth: &config.OAuth{Grant: config.GrantClientCredentials, ClientID: "svc", ClientKey: "${API_KEY}"}}
	res, err := s.Resolve(config.Lookup{Env: func(name string) (string, bool) { return key, name == "API_KEY" }})
	if err != nil {
		t.Fatal(err)
	}
	p := &Pool{opts: Options{Redact: &redact.Set{}}}
	sc := p.newScrubber(s, res)
	for _, quoted := range []string{key, "CANARYLINEtwoCANARYLINEtwoCANARYLINEtwo0123456789"} {
		got := sc.error(errors.New("the server said: " + quoted)).Error()
		if strings.Contains(got, "CANARY") {
			t.Errorf("the error keeps the key: %q", got)
		}
	}
}
