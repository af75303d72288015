//go:build !linux

package catalog

import "time"

// threadCPUTime is not measured here.
func threadCPUTime() time.Duration { return 0 }
