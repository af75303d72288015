package catalog

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Semantic search: each tool's text (embedText) is embedded by a model
// outside the catalog, and the vectors are stored keyed by the model and a
// hash of the text. A hybrid search gets the query's vector from the caller
// and fuses the nearest tools with the lexical ranking (see searchHybrid).

// maxEmbedText bounds the text embedded for one tool, in bytes: small local
// servers reject inputs longer than their batch (llama.cpp's default is 512
// tokens), and the start of a description says what the tool does.
const maxEmbedText = 1500

// textHash identifies an embedding text: the first 16 bytes of its SHA-256.
type textHash [16]byte

func hashText(text []byte) textHash {
	sum := sha256.Sum256(text)
	return textHash(sum[:16])
}

func (h textHash) String() string { return hex.EncodeToString(h[:]) }

// appendEmbedText appends the text embedded for a tool: the server and the
// tool's name (as words, then as written), title, description and
// parameters, one per line, cut at maxEmbedText bytes. Keywords are left
// out: they are the configuration's words, which lexical search matches.
func appendEmbedText(b []byte, d *toolDoc) []byte {
	start := len(b)
	b = append(b, d.Server...)
	b = append(b, ": "...)
	b = append(b, strings.Join(words(d.Name), " ")...)
	b = append(b, " ("...)
	b = append(b, d.Name...)
	b = append(b, ')')
	for _, part := range []string{d.Title, d.Description} {
		if part = strings.TrimSpace(part); part != "" {
			b = append(b, '\n')
			b = append(b, part...)
		}
	}
	if p := strings.Join(strings.Fields(d.Params), " "); p != "" {
		b = append(b, "\nparameters: "...)
		b = append(b, p...)
	}
	if len(b)-start > maxEmbedText {
		cut := start + maxEmbedText
		for cut > start && !utf8.RuneStart(b[cut]) {
			cut--
		}
		b = b[:cut]
	}
	return b
}

// Embeddable is one text that has no stored vector for a model yet.
type Embeddable struct {
	Server, Name string // a tool with this text (there may be others)
	Text         string
	hash         textHash
}

// Unembedded returns the texts of the given servers' tools (all servers when
// servers is empty) that have no vector stored for model, one per distinct
// text, in catalog order.
func (c *Catalog) Unembedded(ctx context.Context, model string, servers []string) (_ []Embeddable, err error) {
	defer wrapf(&err, "listing tools without embeddings")
	tx, err := c.db.BeginTx(ctx, c.d.readTx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// The model's stored hashes first: PostgreSQL runs one statement at a
	// time on a connection, so none can run while eachTool reads rows.
	stored := map[string]bool{}
	rows, err := tx.QueryContext(ctx, c.d.q("SELECT hash FROM embeddings WHERE model = ?"), model)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return nil, err
		}
		stored[h] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	seen := map[textHash]bool{}
	var out []Embeddable
	err = c.eachTool(ctx, tx, servers, func(d *toolDoc, text []byte) error {
		h := hashText(text)
		if seen[h] {
			return nil
		}
		seen[h] = true
		if !stored[h.String()] {
			out = append(out, Embeddable{Server: d.Server, Name: d.Name, Text: string(text), hash: h})
		}
		return nil
	})
	return out, err
}

// eachTool calls fn with every tool of servers (all when empty), in
// catalog order, and its embedding text. text is reused between calls.
func (c *Catalog) eachTool(ctx context.Context, tx *sql.Tx, servers []string, fn func(d *toolDoc, text []byte) error) error {
	q := "SELECT server, name, title, description, params FROM tools"
	var args []any
	if len(servers) > 0 {
		q += " WHERE server IN (?" + strings.Repeat(", ?", len(servers)-1) + ")"
		for _, s := range servers {
			args = append(args, s)
		}
	}
	rows, err := tx.QueryContext(ctx, c.d.q(q+" ORDER BY server, seq"), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var buf []byte
	for rows.Next() {
		var d toolDoc
		if err := rows.Scan(&d.Server, &d.Name, &d.Title, &d.Description, &d.Params); err != nil {
			return err
		}
		buf = appendEmbedText(buf[:0], &d)
		if err := fn(&d, buf); err != nil {
			return err
		}
	}
	return rows.Err()
}

// PutEmbeddings stores the vectors of items, as computed by model: vectors[i]
// is items[i]'s. Vectors are stored at unit length; every one must be
// non-empty and finite, and all of one length.
func (c *Catalog) PutEmbeddings(ctx context.Context, model string, items []Embeddable, vectors [][]float32) (err error) {
	defer wrapf(&err, "storing embeddings")
	if len(items) != len(vectors) {
		return fmt.Errorf("%d vectors for %d texts", len(vectors), len(items))
	}
	blobs := make([][]byte, len(vectors))
	for i, v := range vectors {
		if len(v) == 0 || len(v) != len(vectors[0]) {
			return fmt.Errorf("vector %d has %d dimensions, want %d", i, len(v), len(vectors[0]))
		}
		if blobs[i] = encodeVector(v); blobs[i] == nil {
			return fmt.Errorf("vector %d is zero or not finite", i)
		}
	}
	return c.writeTx(ctx, func(tx *sql.Tx) error {
		// Delete, then insert: a replaced vector gets a new id, so that
		// readers following the ids load it (see vectors.load).
		del, err := tx.PrepareContext(ctx, c.d.q("DELETE FROM embeddings WHERE model = ? AND hash = ?"))
		if err != nil {
			return err
		}
		defer del.Close()
		ins, err := tx.PrepareContext(ctx, c.d.q("INSERT INTO embeddings (model, hash, vector) VALUES (?, ?, ?)"))
		if err != nil {
			return err
		}
		defer ins.Close()
		for i, it := range items {
			h := it.hash.String()
			if _, err := del.ExecContext(ctx, model, h); err != nil {
				return err
			}
			if _, err := ins.ExecContext(ctx, model, h, blobs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// PruneEmbeddings removes the vectors of any other model than model, and
// those of texts no stored tool has any more. It returns how many it
// removed. An empty model removes every vector.
func (c *Catalog) PruneEmbeddings(ctx context.Context, model string) (n int, err error) {
	defer wrapf(&err, "pruning embeddings")
	err = c.writeTx(ctx, func(tx *sql.Tx) error {
		current := map[string]bool{}
		if model != "" {
			if err := c.eachTool(ctx, tx, nil, func(_ *toolDoc, text []byte) error {
				current[hashText(text).String()] = true
				return nil
			}); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, c.d.q("SELECT id, model, hash FROM embeddings"))
		if err != nil {
			return err
		}
		var stale []int64
		for rows.Next() {
			var id int64
			var m, h string
			if err := rows.Scan(&id, &m, &h); err != nil {
				rows.Close()
				return err
			}
			if m != model || !current[h] {
				stale = append(stale, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range stale {
			if _, err := tx.ExecContext(ctx, c.d.q("DELETE FROM embeddings WHERE id = ?"), id); err != nil {
				return err
			}
		}
		n = len(stale)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// encodeVector returns v at unit length as little-endian float32s, or nil
// for a vector that is zero or not finite.
func encodeVector(v []float32) []byte {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	norm := math.Sqrt(sum)
	if norm == 0 || math.IsInf(norm, 0) || math.IsNaN(norm) {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(float64(x)/norm)))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// vectors is the stored embeddings of one model, loaded incrementally. It
// is guarded by Catalog.mu.
type vectors struct {
	model  string
	lastID int64 // the highest embeddings.id loaded
	byHash map[textHash][]float32
	view   *vectorView // aligned with view.ix at view.lastID
}

// vectorView is the vectors aligned with one index. It is immutable.
type vectorView struct {
	ix      *index
	lastID  int64
	docVec  [][]float32    // per document; nil when it has no vector
	missing map[string]int // per server: documents without a vector
	total   map[string]int // per server: documents
}

// currentVectors returns model's vectors aligned with ix, loading the rows
// written since the last call.
func (c *Catalog) currentVectors(ctx context.Context, ix *index, model string) (*vectorView, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	vs := c.vecs
	if vs == nil || vs.model != model {
		vs = &vectors{model: model, byHash: map[textHash][]float32{}}
	}
	if err := vs.load(ctx, c.db, c.d); err != nil {
		return nil, err
	}
	if vs.view == nil || vs.view.ix != ix || vs.view.lastID != vs.lastID {
		vs.view = vs.align(ix)
	}
	c.vecs = vs
	return vs.view, nil
}

// load reads the rows of vs.model written since the last load. Most
// searches find none, at the cost of one lookup of the largest id.
//
// Following the ids relies on their becoming visible in increasing order:
// a row committed after a reader saw a higher id would be skipped for
// good. SQLite allocates ids under its write lock; PostgreSQL's identity
// allocates them as rows are inserted, in any order of commit, so there
// writers take turns on the generation row's lock (dialect.lockWrites)
// from before their first insert until they commit.
func (vs *vectors) load(ctx context.Context, db *sql.DB, d *dialect) error {
	var last sql.NullInt64
	if err := db.QueryRowContext(ctx, d.q("SELECT max(id) FROM embeddings")).Scan(&last); err != nil {
		return err
	}
	if !last.Valid || last.Int64 <= vs.lastID {
		return nil
	}
	// By id alone: with "AND model = ?" SQLite prefers the (model, hash)
	// index and reads every row of the model.
	rows, err := db.QueryContext(ctx, d.q("SELECT id, model, hash, vector FROM embeddings WHERE id > ? ORDER BY id"), vs.lastID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var model, h string
		var blob []byte
		if err := rows.Scan(&id, &model, &h, &blob); err != nil {
			return err
		}
		vs.lastID = id
		var th textHash
		if n, err := hex.Decode(th[:], []byte(h)); model == vs.model && err == nil && n == len(th) && len(blob) >= 4 && len(blob)%4 == 0 {
			vs.byHash[th] = decodeVector(blob)
		}
	}
	return rows.Err()
}

func (vs *vectors) align(ix *index) *vectorView {
	v := &vectorView{ix: ix, lastID: vs.lastID, docVec: make([][]float32, len(ix.docs)), missing: map[string]int{}, total: map[string]int{}}
	for i := range ix.docs {
		v.total[ix.docs[i].server]++
		if vec, ok := vs.byHash[ix.docs[i].thash]; ok {
			v.docVec[i] = vec
		} else {
			v.missing[ix.docs[i].server]++
		}
	}
	return v
}

// EmbeddingCoverage returns how many of the given servers' tools (all
// servers' when empty) have no vector stored for model, of how many.
func (c *Catalog) EmbeddingCoverage(ctx context.Context, model string, servers []string) (missing, total int, err error) {
	ix, err := c.currentIndex(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("reading embeddings: %w", err)
	}
	vv, err := c.currentVectors(ctx, ix, model)
	if err != nil {
		return 0, 0, fmt.Errorf("reading embeddings: %w", err)
	}
	allow := serverSet(servers)
	for s, n := range vv.total {
		if allow == nil || allow[s] {
			missing += vv.missing[s]
			total += n
		}
	}
	return missing, total, nil
}
