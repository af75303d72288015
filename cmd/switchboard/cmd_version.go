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
			goVersion := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				goVersion = bi.GoVersion
			}
			fmt.Fprintf(e.stdout, "switchboard %s (%s)\n", versionString(), goVersion)
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
