package front

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Admin is what the admin endpoint shows of a running gateway, for
// switchboard panel --attach: its servers' status, the configuration's
// problems and the recent calls, read-only, plus one action, reconnecting
// a server. It never shows an argument, a result, a header or a secret:
// status and problems are what switchboard status prints, and calls are
// proxy.CallRecord records.
//
// Set HTTPOptions.Admin to serve it, behind the bearer token like /mcp:
//
//	GET  /admin/status               AdminStatus
//	GET  /admin/calls                {"calls": [proxy.CallRecord, newest first]}
//	POST /admin/reconnect?server=S   AdminReconnect
//	GET  /admin/approvals            {"approvals": [gateway.PendingApproval, oldest first]}
//	POST /admin/approvals/{id}       {"decision": "allow"|"deny"} → AdminDecision
type Admin struct {
	// Calls is the log the engine's Options.OnCall feeds (in
	// Options.Engine); nil: no calls are shown.
	Calls   *switchboard.CallLog
	Version string
	Started time.Time
}

// AdminStatus is the body of /admin/status. Fields are only ever added to.
type AdminStatus struct {
	Version  string           `json:"version,omitempty"`
	Started  time.Time        `json:"started,omitzero"`
	Servers  []AdminServer    `json:"servers"`
	Problems []config.Problem `json:"problems"` // errors, then warnings
	// Blocked is set when a configuration error keeps every server from
	// being used.
	Blocked bool `json:"blocked,omitempty"`
}

// AdminServer is one server's status, with the file that defines it and
// when it was last called.
type AdminServer struct {
	proxy.ServerStatus
	Source   string    `json:"source,omitempty"`
	LastCall time.Time `json:"lastCall,omitzero"`
}

// AdminStatusOf builds /admin/status from an engine's status, the
// configuration it runs and its recent calls. It connects nothing.
func AdminStatusOf(status []proxy.ServerStatus, cfg *config.Config, calls []proxy.CallRecord) AdminStatus {
	out := AdminStatus{Servers: []AdminServer{}, Problems: []config.Problem{}}
	last := map[string]time.Time{}
	for _, c := range calls {
		if t := c.Start.Add(c.Duration); t.After(last[c.Server]) {
			last[c.Server] = t
		}
	}
	for _, st := range status {
		s := AdminServer{ServerStatus: st, LastCall: last[st.Name]}
		if def, ok := cfg.Server(st.Name); ok {
			s.Source = def.Source.Path
		}
		out.Servers = append(out.Servers, s)
	}
	out.Problems = append(append(out.Problems, cfg.Errors()...), cfg.Warnings()...)
	out.Blocked = cfg.Err() != nil
	return out
}

func (a *Admin) recent() []proxy.CallRecord {
	if a.Calls == nil {
		return []proxy.CallRecord{}
	}
	return a.Calls.Recent()
}

// AdminReconnect is the body of /admin/reconnect's answer.
type AdminReconnect struct {
	Server string `json:"server"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
}

// ReconnectResult is the answer of a reconnect request as the admin
// endpoint gives it.
func ReconnectResult(server string, r *proxy.Result) AdminReconnect {
	return AdminReconnect{Server: server, OK: !r.IsError, Error: r.Details.Error}
}

// adminHandle serves the admin endpoint's routes of s on mux, behind token.
//
// Serving with identity (v set), every route needs a member of the admin
// group, but /admin/calls, which shows anyone else their own calls only.
func (s *Server) adminHandle(mux *http.ServeMux, a *Admin, token string, trusted []string, v *identity.Verifier) {
	wrap := func(h http.HandlerFunc) http.Handler {
		if v != nil {
			return guarded("", nil, trusted, requireUser(v, adminOnly(v, h)))
		}
		return guarded(token, nil, trusted, h)
	}
	calls := func(h http.HandlerFunc) http.Handler {
		if v != nil {
			return guarded("", nil, trusted, requireUser(v, h))
		}
		return guarded(token, nil, trusted, h)
	}
	mux.Handle("GET /admin/status", wrap(func(w http.ResponseWriter, r *http.Request) {
		st := AdminStatusOf(s.eng.Status(r.Context()), s.cfg, a.recent())
		st.Version, st.Started = a.Version, a.Started
		writeAdminJSON(w, http.StatusOK, st)
	}))
	mux.Handle("GET /admin/calls", calls(func(w http.ResponseWriter, r *http.Request) {
		recent := a.recent()
		if u := identity.From(r.Context()); v != nil && !v.Admin(u) {
			recent = ownCalls(recent, u.Subject)
		}
		writeAdminJSON(w, http.StatusOK, struct {
			Calls []proxy.CallRecord `json:"calls"`
		}{recent})
	}))
	mux.Handle("POST /admin/reconnect", wrap(func(w http.ResponseWriter, r *http.Request) {
		server := r.URL.Query().Get("server")
		if server == "" {
			writeAdminJSON(w, http.StatusBadRequest, AdminReconnect{Error: "name the server: POST /admin/reconnect?server=NAME"})
			return
		}
		res := ReconnectResult(server, s.eng.Do(r.Context(), &proxy.Request{Action: proxy.ActionReconnect, Server: server}))
		code := http.StatusOK
		if !res.OK {
			code = http.StatusBadGateway
		}
		writeAdminJSON(w, code, res)
	}))
	s.approvalsHandle(mux, calls, v)
}

// AdminDecision is the body of a decision's answer.
type AdminDecision struct {
	ID       string `json:"id"`
	Decision string `json:"decision,omitempty"`
	Error    string `json:"error,omitempty"`
}

// tokenApprover names the holder of serve's shared token, who decides as
// the one person of a gateway without identity, in the audit trail.
const tokenApprover = "shared-token"

// approvalsHandle serves the approvals of calls that approver groups
// decide: a signed-in user sees and decides those of their groups; the
// holder of the shared token (no identity), all of them.
func (s *Server) approvalsHandle(mux *http.ServeMux, calls func(http.HandlerFunc) http.Handler, v *identity.Verifier) {
	who := func(r *http.Request) (name string, groups []string, all bool) {
		if v == nil {
			return tokenApprover, nil, true
		}
		u := identity.From(r.Context())
		if u == nil {
			return "", nil, false
		}
		return u.Subject, u.Groups, false
	}
	mux.Handle("GET /admin/approvals", calls(func(w http.ResponseWriter, r *http.Request) {
		_, groups, all := who(r)
		pending, err := s.eng.PendingApprovals(r.Context(), groups, all)
		if err != nil {
			writeAdminJSON(w, http.StatusServiceUnavailable, struct {
				Error string `json:"error"`
			}{err.Error()})
			return
		}
		writeAdminJSON(w, http.StatusOK, struct {
			Approvals []gateway.PendingApproval `json:"approvals"`
		}{pending})
	}))
	mux.Handle("POST /admin/approvals/{id}", calls(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		var body struct {
			Decision string `json:"decision"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 4<<10)).Decode(&body); err != nil || (body.Decision != "allow" && body.Decision != "deny") {
			writeAdminJSON(w, http.StatusBadRequest, AdminDecision{ID: id, Error: `send {"decision": "allow"} or {"decision": "deny"}`})
			return
		}
		name, groups, all := who(r)
		err := s.eng.DecideApproval(r.Context(), id, name, groups, all, body.Decision == "allow")
		switch {
		case errors.Is(err, gateway.ErrNoApproval):
			writeAdminJSON(w, http.StatusNotFound, AdminDecision{ID: id, Error: err.Error()})
		case errors.Is(err, gateway.ErrNotApprover):
			writeAdminJSON(w, http.StatusForbidden, AdminDecision{ID: id, Error: err.Error()})
		case err != nil:
			writeAdminJSON(w, http.StatusInternalServerError, AdminDecision{ID: id, Error: err.Error()})
		default:
			writeAdminJSON(w, http.StatusOK, AdminDecision{ID: id, Decision: body.Decision})
		}
	}))
}

// adminOnly refuses (403) a user who is not in v's admin group.
func adminOnly(v *identity.Verifier, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !v.Admin(identity.From(r.Context())) {
			refuse(w, http.StatusForbidden, "switchboard: this needs a member of the admin group (settings.identity.adminGroup); your own calls are at /admin/calls")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost refuses a request that arrived on a loopback address but
// names another host, as a page that rebound a name to 127.0.0.1 would
// (the go-sdk handler checks this for /mcp).
func loopbackHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reboundHost(r) {
			refuse(w, http.StatusForbidden, "a request on loopback must name a loopback host")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// reboundHost reports a request that arrived on a loopback address but
// names another host.
func reboundHost(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil || !isLoopback(host) {
		return false
	}
	h, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		h = r.Host
	}
	return !isLoopback(h)
}

func writeAdminJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// AdminByDefault reports whether serve offers the admin endpoint on addr
// without being asked: on loopback only. Off loopback it is off unless
// asked for (serve --admin), since it shows every server and call to
// whoever holds the token.
func AdminByDefault(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && isLoopback(host)
}
