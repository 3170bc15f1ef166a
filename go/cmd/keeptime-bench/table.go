package main

import (
	"fmt"
	keeptime "github.com/keeptime/keeptime/go"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// fmtNs renders signed ns with a unit chosen for the value: "-85 ns",
// "1.24 µs", "1.05 ms".
func fmtNs(ns int64) string {
	a := math.Abs(float64(ns))
	switch {
	case a < 1e3:
		return fmt.Sprintf("%d ns", ns)
	case a < 1e6:
		return fmt.Sprintf("%.2f µs", float64(ns)/1e3)
	case a < 1e9:
		return fmt.Sprintf("%.2f ms", float64(ns)/1e6)
	default:
		return fmt.Sprintf("%.2f s", float64(ns)/1e9)
	}
}

func fmtDuration(d time.Duration) string {
	return strings.Replace(d.String(), "µs", " µs", 1)
}

// printTable writes one block per duration: p50, p99 and max error, early
// returns and CPU per method, then how keeptime compares with the busy loop.
func printTable(w io.Writer, results []cellResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "duration\tmethod\tsamples\tp50\tp99\tmax\tearly\tCPU %\t")
	var last uint64
	for i, r := range results {
		d := ""
		if i == 0 || r.DurationNs != last {
			d = fmtDuration(time.Duration(r.DurationNs))
			if i > 0 {
				fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t")
			}
		}
		last = r.DurationNs
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%d\t%.1f\t\n",
			d, r.Method, r.Samples, fmtNs(r.P50Ns), fmtNs(r.P99Ns), fmtNs(r.MaxNs), r.Early, r.CPUPercent)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "error = first clock reading after the wait - deadline; CPU % = thread CPU time / wall time")
	for _, k := range results {
		if k.Method != "keeptime" {
			continue
		}
		for _, b := range results {
			if b.Method == "busy-loop" && b.DurationNs == k.DurationNs && b.P99Ns > 0 {
				fmt.Fprintf(w, "%s: keeptime p50 %s, p99 %s = %.2f x the busy loop's p99 (%s), CPU %.1f %%\n",
					fmtDuration(time.Duration(k.DurationNs)), fmtNs(k.P50Ns), fmtNs(k.P99Ns),
					float64(k.P99Ns)/float64(b.P99Ns), fmtNs(b.P99Ns), k.CPUPercent)
			}
		}
	}
}

// printSleeperStats writes the keeptime rows' own stats over the measured
// samples (spin-finished cells only): the tail target, the share of sleeps that ended
// late from an OS wait, OS waits per sleep, and the sleeper's CPU estimate
// (learned OS-wait costs plus spin time) over wall time, beside the CPU %
// measured on the thread CPU clock.
func printSleeperStats(w io.Writer, results []cellResult) {
	has := false
	for _, r := range results {
		has = has || r.Sleeper != nil
	}
	if !has {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "duration\tsleeper\ttarget\tlate\tOS waits/sleep\tCPU est. %\tCPU %\t")
	for _, r := range results {
		s := r.Sleeper
		if s == nil {
			continue
		}
		target := fmt.Sprintf("%g %%", float64(s.TailTargetPpm)/1e4)
		late, perSleep := 0.0, 0.0
		if s.Sleeps > 0 {
			late = 100 * float64(s.Late) / float64(s.Sleeps)
			perSleep = float64(s.OSWaits) / float64(s.Sleeps)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f %%\t%.2f\t%.1f\t%.1f\t\n",
			fmtDuration(time.Duration(r.DurationNs)), r.Method, target, late, perSleep,
			100*float64(s.CPUEstimateNs)/float64(max(r.WallNs, 1)), r.CPUPercent)
	}
	tw.Flush()
	fmt.Fprintln(w, "late = sleeps that ended after the deadline from an OS wait; CPU est. = the sleeper's own estimate (learned OS-wait costs + spin) / wall time")
}

// targetDurations are the durations the targets are stated at.
var targetDurations = []time.Duration{250 * time.Microsecond, time.Millisecond, 2500 * time.Microsecond, 10 * time.Millisecond}

// Targets, measured from the caller against a pure spin (the busy loop) of
// the same run: keeptime's p50 at most the spin's + targetP50SlackNs, its
// share of waits more than 2 µs late at most the spin's + targetLatePoints
// (at the default tail target), and no early return.
const (
	targetP50SlackNs = 150
	targetLatePoints = 1.5
)

// printTargets writes, for each target duration the run has, whether the
// keeptime row meets the targets against the busy-loop row.
func printTargets(w io.Writer, results []cellResult, target keeptime.TailTarget) {
	find := func(method string, d time.Duration) *cellResult {
		for i := range results {
			if results[i].Method == method && results[i].DurationNs == uint64(d) {
				return &results[i]
			}
		}
		return nil
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	header := false
	for _, d := range targetDurations {
		k, spin := find("keeptime", d), find("busy-loop", d)
		if k == nil {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\ntargets (caller-measured; pure spin = busy-loop of this run; keeptime at tail target %v, the targets are stated at 1%%):\n", target)
			header = true
		}
		if spin == nil {
			fmt.Fprintf(w, "%s: no busy-loop row in this run to compare with (add busy-loop to --methods)\n", fmtDuration(d))
			continue
		}
		kl, sl := lateShare(k), lateShare(spin)
		fmt.Fprintf(w, "%s: p50 %s vs spin %s + %d ns: %s; > 2 µs late %.2f %% vs spin %.2f %% + %.1f points: %s; early %d: %s\n",
			fmtDuration(d),
			fmtNs(k.P50Ns), fmtNs(spin.P50Ns), targetP50SlackNs, verdict(k.P50Ns <= spin.P50Ns+targetP50SlackNs),
			kl, sl, targetLatePoints, verdict(kl <= sl+targetLatePoints),
			k.Early, verdict(k.Early == 0))
	}
}

// lateShare is the percentage of a cell's waits more than 2 µs late.
func lateShare(r *cellResult) float64 {
	if r.Samples == 0 {
		return 0
	}
	return 100 * float64(r.late) / float64(r.Samples)
}
