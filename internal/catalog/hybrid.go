package catalog

import "slices"

// Hybrid ranking: weighted reciprocal rank fusion (Cormack, Clarke and
// Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and individual
// Rank Learning Methods", SIGIR 2009). A tool at rank r (from 1) of a
// ranking gets w/(rrfK+r) from it; the two contributions add up. Ranks
// compare across rankings where raw scores do not (BM25F scores are
// unbounded, cosine similarities sit in a narrow band that differs by
// model), so fusion needs no per-model calibration.
//
// The paper's k = 60 with equal weights lets the semantic ranking reorder
// the lexical one freely, which is right when both are about as good. The
// lexical ranking here is strong and tested (nDCG@10 80 on the development
// set) while the model is whatever the user runs, so the fusion leans on
// it: with k = 10 the lexical top ranks stay apart (1/11 against 1/15), and
// with half the weight a tool the model ranks first beats the lexical first
// only if it is in the lexical top 11. A tool the model ranks first and the
// words miss enters about 12th. Simulated with two weak fake models (40 to
// 46 alone), equal weights at k = 60 cost 15 to 17 points of nDCG@10 and
// these settings 3.5 (docs/search.md); no real model was measured.
const (
	rrfK           = 10
	fuseDepth      = 100 // ranks past this add nothing (lexical: see below)
	lexicalWeight  = 1.0
	semanticWeight = 0.5

	// fusedFloor is the least a rank within the depth adds.
	fusedFloor = min(lexicalWeight, semanticWeight) / (rrfK + fuseDepth)
)

// fuseHybrid fuses the lexical candidates lex with the fuseDepth tools
// nearest qv. Tiers stay first (exact, then prefix name matches); within a
// tier the fused score ranks, then the lexical score, then server and name.
// It reports false when no stored vector has qv's dimensions.
func (ix *index) fuseHybrid(lex []cand, qv []float32, vv *vectorView, allow *scope) ([]fusedCand, bool) {
	sem := ix.nearest(qv, vv, allow, fuseDepth)
	if sem == nil {
		return nil, false
	}
	topLex := topN(lex, min(fuseDepth, len(lex))) // may reorder lex, keeps its elements
	lexRank := make(map[int32]int, len(topLex))
	for r, c := range topLex {
		lexRank[ix.dupKey(c.doc)] = r + 1
	}
	semRank := make(map[int32]int, len(sem))
	for r, c := range sem {
		if k := ix.dupKey(c.doc); semRank[k] == 0 {
			semRank[k] = r + 1
		}
	}
	fused := make([]fusedCand, 0, len(lex)+len(sem))
	for _, c := range lex {
		f := fusedCand{cand: c}
		k := ix.dupKey(c.doc)
		if r, ok := lexRank[k]; ok {
			f.fused = lexicalWeight / float64(rrfK+r)
		} else {
			// Past the depth, keep the lexical order among the rest but stay
			// below every ranked contribution: s/(s+1) < 1, increasing in s.
			s := float64(c.score)
			f.fused = fusedFloor * s / (s + 1)
		}
		if r, ok := semRank[k]; ok {
			f.fused += semanticWeight / float64(rrfK+r)
			delete(semRank, k)
		}
		fused = append(fused, f)
	}
	for _, c := range sem {
		if r, ok := semRank[ix.dupKey(c.doc)]; ok { // found by meaning alone
			delete(semRank, ix.dupKey(c.doc))
			fused = append(fused, fusedCand{cand: cand{doc: c.doc, tier: 1}, fused: semanticWeight / float64(rrfK+r), semantic: true})
		}
	}
	return fused, true
}

// fusedCand is a candidate of a hybrid search.
type fusedCand struct {
	cand             // tier, lexical score (0 if found by meaning alone), doc
	fused    float64 // the fused score
	semantic bool    // found by meaning alone
}

func (a fusedCand) before(b fusedCand) bool {
	if a.tier != b.tier {
		return a.tier > b.tier
	}
	if a.fused != b.fused {
		return a.fused > b.fused
	}
	if a.score != b.score {
		return a.score > b.score
	}
	return a.doc < b.doc
}

// bestFused returns the best n of fs, best first; it reorders fs. When n is
// small, only the candidates with a rank within the depth in either ranking
// (or a name match) are sorted: all of them beat all the others.
func bestFused(fs []fusedCand, n int) []fusedCand {
	cmp := func(a, b fusedCand) int {
		switch {
		case a.before(b):
			return -1
		case b.before(a):
			return 1
		}
		return 0
	}
	if n < len(fs)/4 {
		var ranked []fusedCand
		for _, f := range fs {
			if f.fused >= fusedFloor || f.tier > 1 {
				ranked = append(ranked, f)
			}
		}
		if len(ranked) >= n {
			slices.SortFunc(ranked, cmp)
			return ranked[:n]
		}
	}
	slices.SortFunc(fs, cmp)
	return fs[:n]
}

// nearest returns the n documents of the allowed servers whose vectors are
// most similar to q (all of unit length: the dot product is the cosine),
// best first; nil when no vector has q's dimensions.
func (ix *index) nearest(q []float32, vv *vectorView, allow *scope, n int) []cand {
	q = unit(q)
	if q == nil {
		return nil
	}
	var cands []cand
	comparable := false
	for i, v := range vv.docVec {
		if len(v) != len(q) {
			continue
		}
		comparable = true
		if !allow.has(&ix.docs[i]) {
			continue
		}
		cands = append(cands, cand{doc: int32(i), tier: 1, score: dot(q, v)})
	}
	if !comparable {
		return nil
	}
	if cands == nil {
		return []cand{}
	}
	return slices.Clone(topN(cands, min(n, len(cands))))
}

// unit returns v scaled to unit length, or nil for a zero or non-finite v.
func unit(v []float32) []float32 {
	b := encodeVector(v)
	if b == nil {
		return nil
	}
	return decodeVector(b)
}

// dot returns the dot product of a and b[:len(a)], eight lanes at a time
// (fixed-size chunks let the compiler drop the bounds checks).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 8 {
		x, y := a[:8:8], b[:8:8]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		s4 += x[4] * y[4]
		s5 += x[5] * y[5]
		s6 += x[6] * y[6]
		s7 += x[7] * y[7]
		a, b = a[8:], b[8:]
	}
	for i := range a {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}
