// Package exepages lets a process give back the pages of its own
// executable that start-up mapped and it no longer uses.
//
// Switchboard is one large binary (the panel's terminal UI, SQLite,
// PostgreSQL, OpenTelemetry and gRPC, JSON Schema validation), and a Go
// program runs every package's initialisation before main: that touches
// code and read-only data all over the binary, and on each such page
// fault Linux maps the neighbouring pages already in the page cache too
// (fault-around, 64 KiB by default). So a process that has only started
// has some 20 MB of the binary mapped, counted in its RSS, though the
// long-running work of serve or of a stdio server's supervisor touches a
// fraction of it. Release unmaps those pages once start-up is over; the
// pages serving needs come back on first use, from the page cache, as
// minor faults. The pages stay in the page cache (shared with every other
// process of the same binary), now unmapped and so reclaimed first under
// memory pressure; what the process itself allocated is not touched.
package exepages

// Release unmaps the process's resident pages of its executable's
// read-only mappings (code, read-only data, the function tables), which
// later accesses map again from the file. It never touches a writable
// mapping: a private page written to is the process's own data, and would
// be lost. It returns how many bytes of mappings it released, and does
// nothing (0, nil) where it is not supported (on Linux only).
func Release() (int64, error) { return release() }

// Resident returns how many bytes of its executable's read-only mappings
// the process pid has resident, and their size, from /proc/PID/smaps;
// where that is not supported (on Linux only), an error.
func Resident(pid int) (resident, size int64, err error) { return residentOf(pid) }
