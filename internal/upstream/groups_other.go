//go:build !linux

package upstream

import "log/slog"

// A groupLog records nothing here: finding the groups a dead process left
// needs Linux's /proc. Close still ends every group.
type groupLog struct{}

func newGroupLog(string, string, *slog.Logger) *groupLog { return &groupLog{} }
func (*groupLog) add(int)                                {}
func (*groupLog) remove(int)                             {}
func (*groupLog) close()                                 {}

func sweepGroups(string, *slog.Logger) {}
