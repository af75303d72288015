package upstream

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/upstream/internal/supervisor"
)

// A groupLog records the process groups of a pool's stdio servers, in a
// file of the pool's own that it holds an exclusive flock on while it
// lives, so that a later pool can end the groups of a pool whose process
// died without closing them (sweepGroups). The kernel releases the lock
// when the process dies, however it dies.
//
// The file holds one line per group, "PGID START": the group's id (its
// leader's pid) and the leader's start time, which tells the leader from a
// later process that was given the same pid; and, first, "mark MARK" for a
// pool whose children carry a mark (escape_linux.go), so that what they
// started outside their groups is ended too.
type groupLog struct {
	dir  string
	mark string // "" for none
	log  *slog.Logger

	mu     sync.Mutex
	f      *os.File       // created on first add, locked; nil before
	path   string         // f's name
	groups map[int]uint64 // pgid → the leader's start time
	off    bool           // the file could not be made: record nothing
}

// groupSuffix names the files of living or dead pools; a file being made
// has the suffix ".tmp" until it is locked.
const groupSuffix = ".groups"

func newGroupLog(dir, mark string, log *slog.Logger) *groupLog {
	return &groupLog{dir: dir, mark: mark, log: log, groups: map[int]uint64{}}
}

// add records the group whose leader is pgid.
func (g *groupLog) add(pgid int) {
	st, _ := supervisor.ReadStat(pgid) // a leader already gone has start 0: see leftover
	g.mu.Lock()
	defer g.mu.Unlock()
	g.groups[pgid] = st.Start
	g.writeLocked()
}

// remove forgets the group whose leader is pgid, which has ended.
func (g *groupLog) remove(pgid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.groups, pgid)
	g.writeLocked()
}

// close removes the file: every group has ended. It is idempotent.
func (g *groupLog) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.f != nil {
		_ = os.Remove(g.path)
		_ = g.f.Close()
		g.f = nil
	}
	g.off = true
}

func (g *groupLog) writeLocked() {
	if g.off {
		return
	}
	if g.f == nil {
		if len(g.groups) == 0 {
			return
		}
		f, path, err := createLocked(g.dir)
		if err != nil {
			g.log.Warn("cannot record the process groups of stdio servers; should switchboard die, the next start cannot end them", "err", err)
			g.off = true
			return
		}
		g.f, g.path = f, path
	}
	var b strings.Builder
	if g.mark != "" {
		fmt.Fprintf(&b, "mark %s\n", g.mark)
	}
	for _, pgid := range slices.Sorted(maps.Keys(g.groups)) {
		fmt.Fprintf(&b, "%d %d\n", pgid, g.groups[pgid])
	}
	// Written in place, then cut: a process killed in between leaves a
	// stale tail, whose groups leftover checks before anything is killed.
	_, err := g.f.WriteAt([]byte(b.String()), 0)
	if err == nil {
		err = g.f.Truncate(int64(b.Len()))
	}
	if err != nil {
		g.log.Warn("recording the process groups of stdio servers", "file", g.path, "err", err)
	}
}

// createLocked creates a pool's file in dir, locked. It is made under a
// temporary name and renamed once locked, so that a sweep never takes a
// living pool's file for a dead one's.
func createLocked(dir string) (f *os.File, path string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", err
	}
	if err := checkDir(dir); err != nil {
		return nil, "", err
	}
	f, err = os.CreateTemp(dir, "pool-*.tmp")
	if err != nil {
		return nil, "", err
	}
	if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		path = strings.TrimSuffix(f.Name(), ".tmp") + groupSuffix
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, "", fmt.Errorf("creating a file in %s: %w", dir, err)
	}
	return f, path, nil
}

// checkDir refuses a directory that another user could have planted or
// can write to: its files name process groups to kill.
func checkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case !ok || int(st.Uid) != os.Getuid():
		return fmt.Errorf("%s belongs to another user", dir)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s is writable by others (mode %v)", dir, fi.Mode().Perm())
	}
	return nil
}

// sweepGroups ends the process groups that pools of processes now dead
// recorded in dir, and removes their files. A file whose lock is held
// belongs to a living pool and is left alone.
func sweepGroups(dir string, log *slog.Logger) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err == nil {
		err = checkDir(dir)
	}
	if err != nil {
		log.Warn("cannot look for process groups left by a switchboard that died", "err", err)
		return
	}
	var ended []int
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		switch {
		case strings.HasSuffix(e.Name(), groupSuffix):
			ended = append(ended, sweepFile(path)...)
		case strings.HasSuffix(e.Name(), ".tmp"):
			removeAbandonedTemp(path)
		}
	}
	if len(ended) > 0 {
		log.Warn("ended the process groups of stdio servers that a switchboard which died left running", "groups", ended)
	}
}

// sweepFile ends the groups a dead pool's file names and removes it. It
// returns the groups it ended.
func sweepFile(path string) []int {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return nil // its pool lives
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var ended []int
	mark := ""
	for line := range strings.Lines(string(data)) {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "mark "); ok {
			mark = m
			continue
		}
		pgid, start, ok := parseGroup(line)
		if ok && leftover(pgid, start) && syscall.Kill(-pgid, syscall.SIGKILL) == nil {
			ended = append(ended, pgid)
		}
	}
	// A dead pool's window is unknown: every process is looked at.
	ended = append(ended, killMarked(mark, pidWindow{})...)
	_ = os.Remove(path)
	return ended
}

func parseGroup(line string) (pgid int, start uint64, ok bool) {
	a, b, found := strings.Cut(strings.TrimSpace(line), " ")
	pgid, err1 := strconv.Atoi(a)
	start, err2 := strconv.ParseUint(b, 10, 64)
	return pgid, start, found && err1 == nil && err2 == nil && pgid > 1
}

// leftover reports whether the group pgid, whose leader started at start,
// may still be the one recorded. If its leader lives, its start time says.
// If not, any process left in the group is from the recorded one: the
// kernel gives no new process a pid that is still a group's id.
func leftover(pgid int, start uint64) bool {
	st, err := supervisor.ReadStat(pgid)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return err == nil && st.Start == start && st.Pgrp == pgid
}

// removeAbandonedTemp removes a file a pool died making, once it is a
// minute old and unlocked.
func removeAbandonedTemp(path string) {
	fi, err := os.Stat(path)
	if err != nil || time.Since(fi.ModTime()) < time.Minute {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		_ = os.Remove(path)
	}
}
