package oauthtest

import (
	"context"
	"fmt"
	"net/http"
)

// Approve is a browser that approves but cannot reach the client's
// redirect URI (it runs on another machine): it gets authURL and returns
// the redirect the authorization server answered with, without following
// it, as a user would copy it from the address bar.
func Approve(ctx context.Context, authURL string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || loc == "" {
		return "", fmt.Errorf("the authorization endpoint answered %d, not a redirect", resp.StatusCode)
	}
	return loc, nil
}
