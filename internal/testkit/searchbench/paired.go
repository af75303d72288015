package searchbench

import (
	"math"
	"math/rand/v2"
	"slices"
)

// PerQuery returns each scored query's nDCG@10 (in percent), by query id,
// strict as Score is. Queries with no relevant tool are left out; a query
// missing from runs scores 0.
func PerQuery(queries []Query, runs []Run) map[string]float64 {
	ranked := map[string][]Ref{}
	for _, r := range runs {
		ranked[r.ID] = r.Results
	}
	out := map[string]float64{}
	for _, q := range queries {
		groups := relevantGroups(q)
		if len(groups) == 0 {
			continue
		}
		out[q.ID] = 100 * queryMetrics(ranked[q.ID], groups).NDCG10
	}
	return out
}

// Paired is the difference of two runs' nDCG@10 on the same queries.
type Paired struct {
	Queries       int
	Before, After float64 // means, in percent
	Diff          float64 // mean of After - Before
	Lo, Hi        float64 // bootstrap 95% interval of Diff
	Better, Worse int     // queries that gained, lost
}

// Pairs and the bootstrap: resamples of the queries, with a fixed seed so
// that a report can be reproduced (the seed of score.py).
const (
	resamples = 2000
	seed      = 20261130
)

// Compare pairs before and after (each from PerQuery) query by query, over
// the queries both scored, and bootstraps the mean difference over queries.
func Compare(before, after map[string]float64) Paired {
	ids := make([]string, 0, len(before))
	for id := range before {
		if _, ok := after[id]; ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var p Paired
	p.Queries = len(ids)
	if len(ids) == 0 {
		return p
	}
	d := make([]float64, len(ids))
	for i, id := range ids {
		d[i] = after[id] - before[id]
		p.Before += before[id]
		p.After += after[id]
		switch {
		case d[i] > 1e-9:
			p.Better++
		case d[i] < -1e-9:
			p.Worse++
		}
	}
	n := float64(len(ids))
	p.Before, p.After = p.Before/n, p.After/n
	p.Diff = p.After - p.Before
	rng := rand.New(rand.NewPCG(seed, seed))
	means := make([]float64, resamples)
	for r := range means {
		s := 0.0
		for range ids {
			s += d[rng.IntN(len(d))]
		}
		means[r] = s / n
	}
	slices.Sort(means)
	p.Lo = means[int(math.Floor(0.025*resamples))]
	p.Hi = means[int(math.Ceil(0.975*resamples))-1]
	return p
}
