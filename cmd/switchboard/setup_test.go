package main

import (
	"strings"
	"testing"
)

func TestGoRunBuild(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	home := env("HOME", "/home/ada")
	const hash = "f63a3330014a2876ae09e198638bdbe56bde4441154e1845c11369808fb3755a"
	tests := []struct {
		exe    string
		getenv func(string) string
		goos   string
		want   string // a word of the reason, or "" for none
	}{
		{"/tmp/go-build675156724/b001/exe/switchboard", home, "linux", "temporary build"},
		{"/var/folders/xy/T/go-build1/b001/exe/switchboard", home, "darwin", "temporary build"},
		{"/home/ada/.cache/go-build/f6/" + hash + "-d/switchboard", home, "linux", "build cache"},
		{"/elsewhere/f6/" + hash + "-d/switchboard", home, "linux", "build cache"},
		{"/home/ada/Library/Caches/go-build/x/switchboard", home, "darwin", "build cache"},
		{"/xdg/go-build/x/switchboard", env("HOME", "/home/ada", "XDG_CACHE_HOME", "/xdg"), "linux", "build cache"},
		{"/gc/x/switchboard", env("GOCACHE", "/gc"), "linux", "build cache"},
		// Not temporary builds.
		{"/tmp/switchboard", home, "linux", ""},
		{"/tmp/ci/bin/switchboard", home, "linux", ""},
		{"/home/ada/go/bin/switchboard", home, "linux", ""},
		{"/opt/go-builder/bin/switchboard", home, "linux", ""},
		{"/opt/go-build/bin/switchboard", home, "linux", ""},
		{"/home/ada/.cache/go-build-tools/switchboard", home, "linux", ""},
		{"/gc/x/switchboard", env("GOCACHE", "off"), "linux", ""},
		{"/elsewhere/f6/" + hash[:10] + "-d/switchboard", home, "linux", ""},
	}
	for _, tt := range tests {
		got := goRunBuild(tt.exe, tt.getenv, tt.goos)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("goRunBuild(%q, %s) = %q, want one saying %q", tt.exe, tt.goos, got, tt.want)
		}
	}
}
