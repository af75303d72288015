package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// it comes from the module's build information.
var version = ""

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print the version",
		usage:   "[--json]",
		help:    "Prints Switchboard's version and the Go version it was built with.\n\nWith --json, prints {\"version\", \"go\"}.",
		quick:   true,
		run: func(ctx context.Context, e *env, args []string) error {
			f := newFlags("version", true)
			pos, _, err := f.parse(args)
			if err != nil {
				return err
			}
			if len(pos) > 0 {
				return usagef("version takes no arguments")
			}
			v := versionJSON{Version: versionString(), Go: "unknown"}
			if bi, ok := debug.ReadBuildInfo(); ok {
				v.Go = bi.GoVersion
			}
			if f.json {
				return writeJSON(e.stdout, v)
			}
			fmt.Fprintf(e.stdout, "switchboard %s (%s)\n", v.Version, v.Go)
			return nil
		},
	}
}

// versionString is the version set at build time, else the module's.
func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "" {
		v = bi.Main.Version
	}
	if v == "" || v == "(devel)" {
		return "devel"
	}
	return v
}
