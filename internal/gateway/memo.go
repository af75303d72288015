package gateway

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// memo keeps the catalog entries this engine has read or written, so a
// call does not read a server's whole entry from SQLite to resolve a name.
// Entries are keyed by server and definition hash, like the catalog; this
// engine's own listings and list_changed refreshes replace them. An entry
// another process writes for the same definition is seen after this
// engine lists that server itself.
type memo struct {
	audience proxy.Audience // of the name indexes' errors; set before use

	mu      sync.Mutex
	entries map[string]*catalog.Entry // server "\x00" hash → entry
	hashes  map[*config.Server]string
	indexes map[string]*nameIndex // by the servers it covers
}

// nameIndex resolves tool names over some servers' entries; it is rebuilt
// only when one of those entries changes.
type nameIndex struct {
	entries []*catalog.Entry
	names   *proxy.Names
	tools   map[string][]*mcp.Tool
}

// names returns the name index over servers, whose catalog entries (nil
// where unknown) are entries.
func (m *memo) names(servers []string, entries []*catalog.Entry) (*proxy.Names, map[string][]*mcp.Tool) {
	key := strings.Join(servers, "\x00")
	m.mu.Lock()
	ix := m.indexes[key]
	m.mu.Unlock()
	if ix != nil && slices.Equal(ix.entries, entries) {
		return ix.names, ix.tools
	}
	byName := map[string][]string{}
	tools := map[string][]*mcp.Tool{}
	for i, ent := range entries {
		if ent == nil {
			continue
		}
		tools[servers[i]] = ent.Tools
		for _, t := range ent.Tools {
			byName[servers[i]] = append(byName[servers[i]], t.Name)
		}
	}
	names := proxy.NewNames(byName)
	names.Audience = m.audience
	ix = &nameIndex{entries: entries, names: names, tools: tools}
	m.mu.Lock()
	if m.indexes == nil {
		m.indexes = map[string]*nameIndex{}
	}
	m.indexes[key] = ix
	m.mu.Unlock()
	return ix.names, ix.tools
}

func (m *memo) hash(s *config.Server) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.hashes[s]; ok {
		return h
	}
	if m.hashes == nil {
		m.hashes = map[*config.Server]string{}
	}
	h := s.Hash()
	m.hashes[s] = h
	return h
}

func (m *memo) get(server, hash string) (*catalog.Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ent, ok := m.entries[server+"\x00"+hash]
	return ent, ok
}

func (m *memo) put(ent *catalog.Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[string]*catalog.Entry{}
	}
	m.entries[ent.Server+"\x00"+ent.Hash] = ent
}

// put stores an entry in the catalog and remembers it.
func (e *Engine) put(ctx context.Context, ent *catalog.Entry) error {
	if err := e.cat.Put(ctx, ent); err != nil {
		return err
	}
	e.memo.put(ent)
	e.reconcile(ctx, ent) // pins, at once: a quarantine is recorded when it happens
	return nil
}
