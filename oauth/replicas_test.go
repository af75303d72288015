package oauth_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// TestConcurrentRefreshReplicas is TestConcurrentRefreshProcesses for
// replicas that share a PostgreSQL store: two handles on one database, two
// stores, two handlers, whose one token has expired. Both need it at once,
// while the token's lock is held; once it is let go, the refresh token is
// spent exactly once (the server rotates it: a second use would be refused
// and lose the login), and both send the one new access token.
func TestConcurrentRefreshReplicas(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{TokenLifetime: 2 * time.Second})
	dsn := pgtest.DSN(t)
	stores := replicaStores(t, dsn, 2)
	cfg := oauth.Config{Server: "api", URL: as.URL()}
	if err := login(t, newHandler(t, cfg, stores[0], follow), as.URL()); err != nil {
		t.Fatal(err)
	}
	type source = func() (string, error)
	var token []source
	for _, s := range stores {
		ts, err := newHandler(t, cfg, s, nil).TokenSource(t.Context())
		if err != nil || ts == nil {
			t.Fatal(ts, err)
		}
		token = append(token, func() (string, error) {
			tok, err := ts.Token()
			if err != nil {
				return "", err
			}
			return tok.AccessToken, nil
		})
	}
	st, err := oauth.Lookup(stores[1], cfg) // the other replica sees the login
	if err != nil || st == nil {
		t.Fatalf("Lookup on the other replica = %v, %v", st, err)
	}
	waitUntil(t, st.Expiry) // expired

	keys, _ := stores[0].Keys("oauth/api/")
	var tokenKey string
	for _, k := range keys {
		if strings.HasSuffix(k, "/token") {
			tokenKey = k
		}
	}
	unlock, err := stores[0].Lock(t.Context(), tokenKey)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		access string
		err    error
	}
	results := make(chan got, len(token))
	for _, tok := range token {
		go func() {
			a, err := tok()
			results <- got{a, err}
		}()
	}
	admin, err := pgstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	pgtest.WaitLockWaiters(t, admin, len(token)) // both replicas wait for the token's lock
	as.SetTokenLifetime(time.Hour)               // the new token stays fresh while checked
	unlock()
	var access []string
	for range token {
		r := <-results
		if r.err != nil {
			t.Fatalf("a replica's token: %v", r.err)
		}
		access = append(access, r.access)
	}
	if access[0] != access[1] {
		t.Errorf("the replicas send different tokens: %s and %s", hash(access[0]), hash(access[1]))
	}
	if !as.Valid(access[0]) {
		t.Error("the token the replicas send is not valid")
	}
	if c := as.Counts(); c.RefreshRequests != 1 || c.Refreshes != 1 || c.ValidRefresh != 1 {
		t.Errorf("counts %+v: want the refresh token spent once (one refresh request, granted) and one valid refresh token left", c)
	}
	for i, s := range stores {
		ts, _ := newHandler(t, cfg, s, nil).TokenSource(t.Context())
		tok, err := ts.Token()
		if err != nil || tok.AccessToken != access[0] {
			t.Errorf("replica %d's stored token: %v, same as sent %v", i, err, err == nil && tok.AccessToken == access[0])
		}
	}
}

// TestPerUserTokensReplicas: per-user tokens (Config.User) in a PostgreSQL
// store shared by two replicas. Each user logs in on one replica; the other
// replica sends each user their own token, never another's; a user who
// never logged in gets none, on either; and the store's keys do not name
// the users.
func TestPerUserTokensReplicas(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{})
	stores := replicaStores(t, pgtest.DSN(t), 2)
	users := []string{"alice@example.com", "bob@example.com"}
	cfg := func(user string) oauth.Config { return oauth.Config{Server: "api", URL: as.URL(), User: user} }
	for i, u := range users { // alice on replica 0, bob on replica 1
		if err := login(t, newHandler(t, cfg(u), stores[i], follow), as.URL()); err != nil {
			t.Fatal(err)
		}
	}
	tokenOf := func(store credstore.Store, user string) string {
		t.Helper()
		ts, err := newHandler(t, cfg(user), store, nil).TokenSource(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if ts == nil {
			return ""
		}
		tok, err := ts.Token()
		if err != nil {
			t.Fatal(err)
		}
		return tok.AccessToken
	}
	var sent [2][2]string // [replica][user]
	for r, s := range stores {
		for u, user := range users {
			sent[r][u] = tokenOf(s, user)
			if sent[r][u] == "" || !as.Valid(sent[r][u]) {
				t.Fatalf("replica %d has no valid token for %s", r, user)
			}
		}
		if got := tokenOf(s, "carol@example.com"); got != "" {
			t.Errorf("replica %d gives a user who never logged in a token (%s)", r, hash(got))
		}
		if got := tokenOf(s, ""); got != "" {
			t.Errorf("replica %d gives the shared login a user's token (%s)", r, hash(got))
		}
	}
	if sent[0][0] != sent[1][0] || sent[0][1] != sent[1][1] {
		t.Error("the replicas send a user different tokens")
	}
	if sent[0][0] == sent[0][1] {
		t.Error("alice and bob are sent the same token")
	}
	keys, err := stores[0].Keys("oauth/api/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.Contains(k, "alice") || strings.Contains(k, "bob") {
			t.Errorf("a key names a user: %s", k)
		}
	}
}

// replicaStores returns n stores on the database of dsn, each on a handle
// of its own, as n replicas would have them.
func replicaStores(t *testing.T, dsn string, n int) []*credstore.Postgres {
	t.Helper()
	key := []byte(strings.Repeat("k", credstore.PostgresKeySize))
	var stores []*credstore.Postgres
	for range n {
		db, err := pgstore.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		s, err := credstore.NewPostgres(t.Context(), db, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	return stores
}
