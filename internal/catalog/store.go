package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Put stores e, replacing everything stored for e.Server, in one transaction.
func (c *Catalog) Put(ctx context.Context, e *Entry) (err error) {
	defer wrapf(&err, "storing %q in the catalog", e.Server)
	if e.Server == "" {
		return errors.New("empty server name")
	}
	kw, err := json.Marshal(nonNilMap(e.Keywords))
	if err != nil {
		return err
	}
	return c.writeTx(ctx, func(tx *sql.Tx) error {
		if err := c.deleteServer(ctx, tx, e.Server); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx,
			c.d.q(`INSERT INTO servers (name, hash, instructions, keywords, fetched_at) VALUES (?, ?, ?, ?, ?)`),
			e.Server, e.Hash, e.Instructions, string(kw), e.FetchedAt.UnixMilli()); err != nil {
			return err
		}
		if err := c.putTools(ctx, tx, e.Server, e.Tools); err != nil {
			return err
		}
		if err := putDocs(ctx, tx, c.d.q("INSERT INTO resources (server, seq, uri, name, doc) VALUES (?, ?, ?, ?, ?)"),
			e.Server, e.Resources, func(r *mcp.Resource) []any { return []any{r.URI, r.Name} }); err != nil {
			return err
		}
		if err := putDocs(ctx, tx, c.d.q("INSERT INTO resource_templates (server, seq, uri_template, name, doc) VALUES (?, ?, ?, ?, ?)"),
			e.Server, e.ResourceTemplates, func(r *mcp.ResourceTemplate) []any { return []any{r.URITemplate, r.Name} }); err != nil {
			return err
		}
		if err := putDocs(ctx, tx, c.d.q("INSERT INTO prompts (server, seq, name, doc) VALUES (?, ?, ?, ?)"),
			e.Server, e.Prompts, func(p *mcp.Prompt) []any { return []any{p.Name} }); err != nil {
			return err
		}
		return c.bumpGeneration(ctx, tx)
	})
}

// Touch records that a server was listed again, at now, with the lists
// the catalog holds for it: the entry stored at was (to the millisecond)
// under hash. It moves the entry's time, never back, and nothing else;
// the lists, and the generation a search compares with its index, stay.
// It reports false, and writes nothing, when the stored entry is not that
// one: the server's definition changed, or another process stored
// another listing since; the caller then stores its own with Put.
//
// Two listings stored within one millisecond are taken for one: the
// catalog then holds either, both listed at that moment. Pins do not
// depend on it: each process judges the tools it was offered.
func (c *Catalog) Touch(ctx context.Context, server, hash string, was, now time.Time) (touched bool, err error) {
	defer wrapf(&err, "noting the listing of %q in the catalog", server)
	err = c.writeTx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, c.d.q(`UPDATE servers SET fetched_at = ? WHERE name = ? AND hash = ? AND fetched_at = ?`),
			max(now.UnixMilli(), was.UnixMilli()), server, hash, was.UnixMilli())
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		touched = n == 1
		return err
	})
	return touched && err == nil, err
}

func (c *Catalog) putTools(ctx context.Context, tx *sql.Tx, server string, tools []*mcp.Tool) error {
	stmt, err := tx.PrepareContext(ctx, c.d.q(`INSERT INTO tools
		(server, seq, name, title, description, input_schema, output_schema, annotations, extra, params)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, t := range tools {
		if t == nil {
			continue
		}
		in, err := jsonOrNull(t.InputSchema)
		if err != nil {
			return fmt.Errorf("tool %q: input schema: %w", t.Name, err)
		}
		out, err := jsonOrNull(t.OutputSchema)
		if err != nil {
			return fmt.Errorf("tool %q: output schema: %w", t.Name, err)
		}
		var ann any
		if t.Annotations != nil {
			ann, err = jsonOrNull(t.Annotations)
			if err != nil {
				return fmt.Errorf("tool %q: annotations: %w", t.Name, err)
			}
		}
		// The remaining fields travel as JSON of the tool with the stored
		// fields zeroed, so fields added to mcp.Tool later survive too.
		rest := *t
		rest.Name, rest.Title, rest.Description = "", "", ""
		rest.InputSchema, rest.OutputSchema, rest.Annotations = nil, nil, nil
		extra, err := json.Marshal(&rest)
		if err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		var params string
		if in != nil {
			params = paramTextOf(t.InputSchema, []byte(in.(string)))
		}
		if _, err := stmt.ExecContext(ctx, server, i, t.Name, t.Title, t.Description, in, out, ann, string(extra), params); err != nil {
			return err
		}
	}
	return nil
}

// putDocs stores items as JSON documents after their key columns.
func putDocs[T any](ctx context.Context, tx *sql.Tx, insert, server string, items []*T, keys func(*T) []any) error {
	if len(items) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, insert)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, it := range items {
		if it == nil {
			continue
		}
		doc, err := json.Marshal(it)
		if err != nil {
			return err
		}
		args := append(append([]any{server, i}, keys(it)...), string(doc))
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// Get returns the entry stored for server under hash. An entry stored under
// another hash is stale and reported as not found.
func (c *Catalog) Get(ctx context.Context, server, hash string) (_ *Entry, ok bool, err error) {
	defer wrapf(&err, "reading %q from the catalog", server)
	tx, err := c.db.BeginTx(ctx, c.d.readTx)
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback()
	e := &Entry{Server: server}
	var kw string
	var fetched int64
	err = tx.QueryRowContext(ctx, c.d.q(`SELECT hash, instructions, keywords, fetched_at FROM servers WHERE name = ?`), server).
		Scan(&e.Hash, &e.Instructions, &kw, &fetched)
	if errors.Is(err, sql.ErrNoRows) || err == nil && e.Hash != hash {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	e.FetchedAt = time.UnixMilli(fetched)
	if err := json.Unmarshal([]byte(kw), &e.Keywords); err != nil {
		return nil, false, fmt.Errorf("keywords: %w", err)
	}
	if len(e.Keywords) == 0 {
		e.Keywords = nil
	}
	if e.Tools, err = c.getTools(ctx, tx, server); err != nil {
		return nil, false, err
	}
	if e.Resources, err = getDocs[mcp.Resource](ctx, tx, c.d.q("SELECT doc FROM resources WHERE server = ? ORDER BY seq"), server); err != nil {
		return nil, false, fmt.Errorf("resources: %w", err)
	}
	if e.ResourceTemplates, err = getDocs[mcp.ResourceTemplate](ctx, tx, c.d.q("SELECT doc FROM resource_templates WHERE server = ? ORDER BY seq"), server); err != nil {
		return nil, false, fmt.Errorf("resource templates: %w", err)
	}
	if e.Prompts, err = getDocs[mcp.Prompt](ctx, tx, c.d.q("SELECT doc FROM prompts WHERE server = ? ORDER BY seq"), server); err != nil {
		return nil, false, fmt.Errorf("prompts: %w", err)
	}
	return e, true, nil
}

func (c *Catalog) getTools(ctx context.Context, tx *sql.Tx, server string) ([]*mcp.Tool, error) {
	rows, err := tx.QueryContext(ctx, c.d.q(`SELECT name, title, description, input_schema, output_schema, annotations, extra
		FROM tools WHERE server = ? ORDER BY seq`), server)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tools []*mcp.Tool
	for rows.Next() {
		var name, title, desc string
		var in, out, ann, extra sql.NullString
		if err := rows.Scan(&name, &title, &desc, &in, &out, &ann, &extra); err != nil {
			return nil, err
		}
		t := new(mcp.Tool)
		if extra.Valid {
			if err := json.Unmarshal([]byte(extra.String), t); err != nil {
				return nil, fmt.Errorf("tool %q: %w", name, err)
			}
		}
		t.Name, t.Title, t.Description = name, title, desc
		if t.InputSchema, err = anyJSON(in); err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", name, err)
		}
		if t.OutputSchema, err = anyJSON(out); err != nil {
			return nil, fmt.Errorf("tool %q: output schema: %w", name, err)
		}
		if ann.Valid {
			t.Annotations = new(mcp.ToolAnnotations)
			if err := json.Unmarshal([]byte(ann.String), t.Annotations); err != nil {
				return nil, fmt.Errorf("tool %q: annotations: %w", name, err)
			}
		}
		tools = append(tools, t)
	}
	return tools, rows.Err()
}

// getDocs reads the JSON documents that query selects for server.
func getDocs[T any](ctx context.Context, tx *sql.Tx, query, server string) ([]*T, error) {
	rows, err := tx.QueryContext(ctx, query, server)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*T
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, err
		}
		v := new(T)
		if err := json.Unmarshal([]byte(doc), v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Remove deletes everything stored for server. Removing an absent server is
// not an error.
func (c *Catalog) Remove(ctx context.Context, server string) (err error) {
	defer wrapf(&err, "removing %q from the catalog", server)
	return c.writeTx(ctx, func(tx *sql.Tx) error {
		if err := c.deleteServer(ctx, tx, server); err != nil {
			return err
		}
		return c.bumpGeneration(ctx, tx)
	})
}

// Prune removes every entry whose server is not in current, or is stored
// under another hash than current's, and returns the removed servers' names.
// Failures recorded for such servers go too. current maps each configured
// server's name to its definition hash.
func (c *Catalog) Prune(ctx context.Context, current map[string]string) (removed []string, err error) {
	defer wrapf(&err, "pruning the catalog")
	err = c.writeTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, c.d.q("SELECT name, hash FROM servers ORDER BY name"))
		if err != nil {
			return err
		}
		for rows.Next() {
			var name, hash string
			if err := rows.Scan(&name, &hash); err != nil {
				rows.Close()
				return err
			}
			if h, ok := current[name]; !ok || h != hash {
				removed = append(removed, name)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := c.pruneFailures(ctx, tx, current); err != nil {
			return err
		}
		if len(removed) == 0 {
			return nil
		}
		for _, name := range removed {
			if err := c.deleteServer(ctx, tx, name); err != nil {
				return err
			}
		}
		return c.bumpGeneration(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	return removed, nil
}

// Servers lists the stored entries, by name.
func (c *Catalog) Servers(ctx context.Context) (_ []ServerInfo, err error) {
	defer wrapf(&err, "listing the catalog")
	rows, err := c.db.QueryContext(ctx, c.d.q(`SELECT s.name, s.hash, s.fetched_at,
		(SELECT count(*) FROM tools t WHERE t.server = s.name)
		FROM servers s ORDER BY s.name`))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ServerInfo
	for rows.Next() {
		var s ServerInfo
		var fetched int64
		if err := rows.Scan(&s.Name, &s.Hash, &fetched, &s.Tools); err != nil {
			return nil, err
		}
		s.FetchedAt = time.UnixMilli(fetched)
		out = append(out, s)
	}
	return out, rows.Err()
}

// deleteServerQueries delete a server's entry, table by table.
var deleteServerQueries = []string{
	"DELETE FROM tools WHERE server = ?",
	"DELETE FROM resources WHERE server = ?",
	"DELETE FROM resource_templates WHERE server = ?",
	"DELETE FROM prompts WHERE server = ?",
	"DELETE FROM servers WHERE name = ?",
}

func (c *Catalog) deleteServer(ctx context.Context, tx *sql.Tx, server string) error {
	for _, q := range deleteServerQueries {
		if _, err := tx.ExecContext(ctx, c.d.q(q), server); err != nil {
			return err
		}
	}
	return nil
}

// bumpGeneration counts a write that search reads. The increment is one
// statement under the row's lock, so two replicas' writes are two steps:
// neither is lost, and each replica's index rebuilds after both.
func (c *Catalog) bumpGeneration(ctx context.Context, tx *sql.Tx) error {
	var g int64
	err := tx.QueryRowContext(ctx, c.d.q("UPDATE generation SET value = value + 1 WHERE id = 1 RETURNING value")).Scan(&g)
	if errors.Is(err, sql.ErrNoRows) {
		return errors.New("the catalog's generation row is missing (hint: delete the catalog to rebuild it)")
	}
	return err
}

// generation reads the catalog's write counter.
func (c *Catalog) generation(ctx context.Context) (int64, error) {
	var g int64
	err := c.db.QueryRowContext(ctx, c.d.q("SELECT value FROM generation WHERE id = 1")).Scan(&g)
	return g, err
}

// jsonOrNull marshals v, or returns nil (SQL NULL) for a nil v.
func jsonOrNull(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return nil, nil
	}
	return string(b), nil
}

// anyJSON decodes a stored JSON value the way an MCP client would receive it
// (objects as map[string]any); NULL decodes to nil.
func anyJSON(s sql.NullString) (any, error) {
	if !s.Valid {
		return nil, nil
	}
	var v any
	err := json.Unmarshal([]byte(s.String), &v)
	return v, err
}

func nonNilMap(m map[string][]string) map[string][]string {
	if m == nil {
		return map[string][]string{}
	}
	return m
}

// wrapf prefixes a non-nil *err with the operation.
func wrapf(err *error, format string, args ...any) {
	if *err != nil {
		*err = fmt.Errorf(format+": %w", append(args, *err)...)
	}
}
