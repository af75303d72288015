package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// defaultDrain is how long serve --http lets calls in flight finish after
// SIGTERM: within Kubernetes' default terminationGracePeriodSeconds (30),
// with room to close the servers after it.
const defaultDrain = 25 * time.Second

// advertiseURL is the URL other replicas reach this one at: --advertise,
// else $SWITCHBOARD_ADVERTISE_URL, else the address it listens on unless
// that is a wildcard (every interface names no one address), else "".
func (e *env) advertiseURL(flag string, ln net.Addr) (string, error) {
	adv, from := flag, "--advertise"
	if adv == "" {
		adv, from = e.getenv("SWITCHBOARD_ADVERTISE_URL"), "$SWITCHBOARD_ADVERTISE_URL"
	}
	if adv == "" {
		tcp, ok := ln.(*net.TCPAddr)
		if !ok || tcp.IP.IsUnspecified() {
			return "", nil
		}
		return "http://" + tcp.String(), nil
	}
	u, err := url.Parse(adv)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
		return "", usagef("%s %q: want the URL other replicas reach this one at, http://HOST:PORT (in Kubernetes, the pod's IP from the downward API)", from, adv)
	}
	return u.Scheme + "://" + u.Host, nil
}

// storeReady is /readyz's check of the shared store: a ping. A pooled
// connection the server closed (it restarted, or ended idle sessions)
// answers the ping with driver.ErrBadConn and is discarded, which says
// nothing about the store: the ping is tried again on the next one, at
// most once per idle connection the pool keeps, and then on a new one.
func storeReady(db *sql.DB) func(context.Context) error {
	return func(ctx context.Context) error {
		var err error
		for range storeIdleConns + 1 {
			if err = db.PingContext(ctx); !errors.Is(err, driver.ErrBadConn) {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("the shared store (PostgreSQL) is unreachable: %w", err)
		}
		return nil
	}
}

// storeIdleConns is how many idle connections pgstore.Open keeps.
const storeIdleConns = 4
