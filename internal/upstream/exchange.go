package upstream

import (
	"context"
	"log/slog"
	"sync"
)

// Token exchange (config.GrantTokenExchange, docs/auth.md): a per-user
// connection to a server whose grant is token_exchange gets its tokens by
// exchanging its user's own access token to the gateway. The front puts
// that token in each request's context (WithUserToken) beside the user
// (identity.With); serverFor keeps the latest one of each user on the
// user's connection, whose OAuth handler reads it when it exchanges. It is
// never logged, stored, or put in an error (oauth redacts it).

// UserToken is a signed-in user's raw access token to the gateway. It
// prints, formats, logs and marshals as "[redacted]": only Reveal gives
// it.
type UserToken struct{ raw string }

// NewUserToken returns raw as a UserToken.
func NewUserToken(raw string) UserToken { return UserToken{raw} }

// Reveal returns the token itself.
func (t UserToken) Reveal() string { return t.raw }

func (UserToken) String() string               { return "[redacted]" }
func (UserToken) GoString() string             { return "[redacted]" }
func (UserToken) LogValue() slog.Value         { return slog.StringValue("[redacted]") }
func (UserToken) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }
func (UserToken) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

type userTokenKey struct{}

// WithUserToken returns ctx carrying the access token of the user that
// identity.From(ctx) names: the front sets both from one request.
func WithUserToken(ctx context.Context, t UserToken) context.Context {
	if t.raw == "" {
		return ctx
	}
	return context.WithValue(ctx, userTokenKey{}, t)
}

// UserTokenFrom returns the user's token ctx carries; its zero value
// (Reveal "") when none.
func UserTokenFrom(ctx context.Context) UserToken {
	t, _ := ctx.Value(userTokenKey{}).(UserToken)
	return t
}

func userTokenFrom(ctx context.Context) string { return UserTokenFrom(ctx).raw }

// userToken is the latest access token of a per-user connection's user.
type userToken struct {
	mu  sync.Mutex
	raw string
}

// set keeps raw, unless it is "" (an operation that carried none, as a
// replica's forwarded continuation: the last one stays).
func (t *userToken) set(raw string) {
	if raw == "" {
		return
	}
	t.mu.Lock()
	t.raw = raw
	t.mu.Unlock()
}

func (t *userToken) get() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.raw
}
