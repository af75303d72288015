package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// printWarm prints one column per subject and one row per figure, with
// ratios to direct, to the relay and to mcp-proxy under each.
func printWarm(out io.Writer, subjects []*subject, w *warm, o options) {
	idx := func(name string) int {
		return slices.IndexFunc(subjects, func(s *subject) bool { return s.name == name })
	}
	direct, relay, peer := idx("direct"), idx("relay"), idx("mcp-proxy")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(label string, f func(i int) string) {
		cells := []string{label}
		for i := range subjects {
			cells = append(cells, f(i))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	ratio := func(label string, v func(i int) float64, ref int, skip ...int) {
		if ref < 0 {
			return
		}
		row("  ÷ "+label, func(i int) string {
			if slices.Contains(skip, i) || v(ref) == 0 || v(i) == 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f", v(i)/v(ref))
		})
	}
	fmt.Fprintln(out, "Go upstream (internal/testkit/testserver echo) over stdio; gateways serve Streamable HTTP; one run")
	fmt.Fprintln(out)
	row("", func(i int) string { return subjects[i].name })
	row("p50 per call, 1 client (µs)", func(i int) string { return µs(w.p50[i]) })
	row("p99 per call, 1 client (µs)", func(i int) string { return µs(w.p99[i]) })
	added := func(i int) float64 { return float64(w.p50[i] - w.p50[direct]) }
	row("added p50 (µs)", func(i int) string {
		if i == direct {
			return "–"
		}
		return µs(w.p50[i] - w.p50[direct])
	})
	ratio("relay", added, relay, direct)
	ratio("mcp-proxy", added, peer, direct)
	perSec := func(i int) float64 { return w.perSec[i] }
	row(fmt.Sprintf("calls/s, %d clients", o.clients), func(i int) string { return fmt.Sprintf("%.0f", w.perSec[i]) })
	ratio("direct", perSec, direct)
	ratio("relay", perSec, relay)
	ratio("mcp-proxy", perSec, peer)
	row(fmt.Sprintf("CPU per call, %d clients (µs)", o.clients), func(i int) string {
		if i == direct {
			return "–"
		}
		return µs(w.cpu[i])
	})
	mb := func(kb []int) func(int) string {
		return func(i int) string {
			if kb[i] == 0 {
				return "–"
			}
			return fmt.Sprintf("%.1f", float64(kb[i])/1024)
		}
	}
	idle := func(i int) float64 { return float64(w.idleKB[i]) }
	peak := func(i int) float64 { return float64(w.peakKB[i]) }
	row(fmt.Sprintf("CPU of its children per call, %d clients (µs)", o.clients), func(i int) string {
		if w.kidsCPU[i] == 0 {
			return "–"
		}
		return µs(w.kidsCPU[i])
	})
	row("RSS idle (MB)", mb(w.idleKB))
	ratio("relay", idle, relay)
	ratio("mcp-proxy", idle, peer)
	row("  of which anonymous", mb(w.idleAnon))
	row(fmt.Sprintf("RSS peak, %d clients (MB)", o.clients), mb(w.peakKB))
	ratio("relay", peak, relay)
	ratio("mcp-proxy", peak, peer)
	row("  anonymous after the load", mb(w.anonKB))
	row("  file-backed after the load", mb(w.fileKB))
	row("RSS of its children after the load (MB)", mb(w.kidsKB))
	_ = tw.Flush()
	fmt.Fprintln(out)
}

// printIdle prints the idle RSS of the subjects that serve (-cold-only).
func printIdle(out io.Writer, subjects []*subject, idleKB []int) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(out, "RSS idle, one second after start-up (MB)")
	fmt.Fprintln(out)
	for i, s := range subjects {
		if idleKB[i] != 0 {
			fmt.Fprintf(tw, "%s\t%.1f\t\n", s.name, float64(idleKB[i])/1024)
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(out)
}

// printCold prints the cold calls' medians and their ratio.
func printCold(out io.Writer, cold []coldResult) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(out, "One cold CLI call (spawn, call, exit), medians")
	fmt.Fprintln(out)
	withBefore := len(cold) > 0 && cold[0].before != 0
	head := "upstream\tbare go-sdk client (ms)\tswitchboard call (ms)\t÷ bare\t"
	if withBefore {
		head += "before (ms)\t÷ bare\t"
	}
	fmt.Fprintln(tw, head)
	for _, c := range cold {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t", c.upstream, ms(c.bare), ms(c.board), float64(c.board)/float64(c.bare))
		if withBefore {
			fmt.Fprintf(tw, "%s\t%.2f\t", ms(c.before), float64(c.before)/float64(c.bare))
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
}

func µs(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Microsecond)) }
func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }
