package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	keeptime "github.com/keeptime/keeptime/go"
)

// A small real crowd: only invariants (every sleep counted, none early,
// the hint held or refused and released).
func TestCrowdIsNeverEarly(t *testing.T) {
	c := clock{anchor: time.Now()}
	p := crowdPlan{goroutines: 3, wait: 500 * time.Microsecond, warmup: 5, measure: 20 * time.Millisecond}
	zero := keeptime.IdleHintZero
	for _, m := range []crowdMethod{timeSleepCrowd(), keeptimeCrowd(keeptime.TailBalanced, nil), keeptimeCrowd(keeptime.TailBalanced, &zero)} {
		r := runCrowd(c, p, m)
		if r.stats.Samples < 3 || r.stats.Early != 0 || r.late > r.stats.Samples || r.goroutines != 3 {
			t.Errorf("%s: %+v, %d late", m.name, r.stats, r.late)
		}
		if m.hint != nil && (r.hint == nil || r.hint.State == keeptime.IdleHintNotAsked) {
			t.Errorf("%s: hint %v", m.name, r.hint)
		}
	}
	if st := keeptime.InspectIdleLatency(); st.InForceMicros != nil && *st.InForceMicros == 0 {
		t.Log("a PM QoS request of 0 µs is in force after the crowd (another process may hold one)")
	}
}

func TestCrowdTable(t *testing.T) {
	var out bytes.Buffer
	in := int32(2_000_000_000)
	held := keeptime.IdleHintStatus{State: keeptime.IdleHintHeld, Asked: keeptime.IdleHintZero, InForce: keeptime.IdleHintZero}
	rows := []crowdRow{
		{method: "time.Sleep", goroutines: 16, late: 1000, cpuOK: true,
			stats: Stats{Samples: 1000, P50Ns: 80_000, P99Ns: 150_000, MaxNs: 1_300_000, CPUPercent: 9}},
		{method: "keeptime, idle hint 0 µs", goroutines: 16, late: 250, cpuOK: false, hint: &held,
			stats: Stats{Samples: 1000, P50Ns: 900, P99Ns: 115_000, MaxNs: 770_000}},
	}
	printCrowd(&out, crowdPlan{goroutines: 16, wait: time.Millisecond, warmup: 943, measure: 2 * time.Second},
		keeptime.IdleLatencyReport{Driver: "none", Governor: "menu", InForceMicros: &in, MayRequest: true}, rows)
	// Columns are aligned by a tabwriter: compare with single spaces.
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"crowd: 16 goroutines at once, each sleeping 1ms in a loop for 2s after 943 sleeps of warm-up; GOMAXPROCS ",
		"idle: cpuidle driver none, governor menu; PM QoS CPU latency in force 2000000000 µs (unconstrained); this process may hold the idle-latency hint\n",
		"goroutines method samples p50 p99 max early late > 2 µs process CPU %\n",
		"\n16 time.Sleep 1000 80.00 µs 150.00 µs 1.30 ms 0 100.0 % 9.0\n",
		"\n16 keeptime, idle hint 0 µs 1000 900 ns 115.00 µs 770.00 µs 0 25.0 % -\n",
		"keeptime, idle hint 0 µs: the hint was held: 0 µs in force (asked 0 µs)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	r := keeptime.IdleLatencyReport{ReadError: "/dev/cpu_dma_latency: permission denied (reading it needs root or read access to the device)",
		RequestRefused: "no write permission on /dev/cpu_dma_latency"}
	if d := describeIdle(r); d != "cpuidle driver (no cpuidle interface); PM QoS value in force unknown: "+r.ReadError+
		"; this process may not hold the idle-latency hint: no write permission on /dev/cpu_dma_latency" {
		t.Error(d)
	}
}
