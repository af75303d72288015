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
		usage:   "",
		help:    "Prints Switchboard's version and the Go version it was built with.",
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return usagef("version takes no arguments")
			}
			v, goVersion := version, "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				goVersion = bi.GoVersion
				if v == "" {
					v = bi.Main.Version
				}
			}
			if v == "" || v == "(devel)" {
				v = "devel"
			}
			fmt.Fprintf(e.stdout, "switchboard %s (%s)\n", v, goVersion)
			return nil
		},
	}
}
