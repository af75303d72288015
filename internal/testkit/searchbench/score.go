package searchbench

import (
	"math"
	"sort"
)

// Metrics are macro-averaged over the scored queries, in percent, with the
// definitions of score.py in strict mode (a result counts only as its exact
// server and name): R@k is the fraction of a query's groups found in the top
// k, nDCG@10 gives one gain per newly covered group, MRR is the reciprocal
// rank of the first relevant result in the top 10.
type Metrics struct {
	Queries int // scored: queries with at least one relevant tool
	R1, R5, R10,
	NDCG10, MRR float64
}

const depth = 10

// Score scores runs against queries, overall and per query kind. Queries
// with no relevant tool are not scored; a query missing from runs scores 0.
func Score(queries []Query, runs []Run) (all Metrics, byKind map[string]Metrics) {
	ranked := map[string][]Ref{}
	for _, r := range runs {
		ranked[r.ID] = r.Results
	}
	sums := map[string]*Metrics{"": {}}
	for _, q := range queries {
		groups := relevantGroups(q)
		if len(groups) == 0 {
			continue
		}
		m := queryMetrics(ranked[q.ID], groups)
		for _, k := range []string{"", q.Kind} {
			if sums[k] == nil {
				sums[k] = &Metrics{}
			}
			s := sums[k]
			s.Queries++
			s.R1 += m.R1
			s.R5 += m.R5
			s.R10 += m.R10
			s.NDCG10 += m.NDCG10
			s.MRR += m.MRR
		}
	}
	byKind = map[string]Metrics{}
	for k, s := range sums {
		n := float64(max(s.Queries, 1))
		s.R1, s.R5, s.R10 = 100*s.R1/n, 100*s.R5/n, 100*s.R10/n
		s.NDCG10, s.MRR = 100*s.NDCG10/n, 100*s.MRR/n
		if k == "" {
			all = *s
		} else {
			byKind[k] = *s
		}
	}
	return all, byKind
}

func queryMetrics(ranked []Ref, groups map[int]map[Ref]bool) Metrics {
	if len(ranked) > depth {
		ranked = ranked[:depth]
	}
	ids := make([]int, 0, len(groups))
	for g := range groups {
		ids = append(ids, g)
	}
	sort.Ints(ids)
	covered := map[int]bool{}
	coveredAt := make([]int, len(ranked)+1)
	var m Metrics
	for i, r := range ranked {
		pos := i + 1
		newly := 0
		hit := false
		for _, g := range ids {
			if groups[g][r] {
				hit = true
				if !covered[g] {
					covered[g] = true
					newly++
				}
			}
		}
		if hit && m.MRR == 0 {
			m.MRR = 1 / float64(pos)
		}
		m.NDCG10 += float64(newly) / math.Log2(float64(pos)+1)
		coveredAt[pos] = len(covered)
	}
	n := len(groups)
	idcg := 0.0
	for i := 1; i <= min(n, depth); i++ {
		idcg += 1 / math.Log2(float64(i)+1)
	}
	m.NDCG10 /= idcg
	at := func(k int) float64 { return float64(coveredAt[min(k, len(ranked))]) / float64(n) }
	m.R1, m.R5, m.R10 = at(1), at(5), at(10)
	return m
}

// relevantGroups returns q's relevant tools by group: a group is one need
// of the query, any of whose tools meets it.
func relevantGroups(q Query) map[int]map[Ref]bool {
	groups := map[int]map[Ref]bool{}
	for _, r := range q.Relevant {
		if groups[r.Group] == nil {
			groups[r.Group] = map[Ref]bool{}
		}
		groups[r.Group][Ref{r.Server, r.Name}] = true
	}
	return groups
}
