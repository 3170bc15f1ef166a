package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	keeptime "github.com/keeptime/keeptime/go"
)

const schemaPath = "../../../spec/bench-result.schema.json"

// A tiny run of every method, exported and checked against the project's
// result format.
func TestExportedJSONFollowsTheBenchResultFormat(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bench.json")
	var stdout, stderr bytes.Buffer
	err := run([]string{"--durations", "20us,150us", "--methods", methodNames(), "--samples", "5", "--warmup", "2",
		"--tail-target", "0.2%", "--export-json", out, "--crowd", "0"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, m := range allMethods {
		if !strings.Contains(stdout.String(), m.name) {
			t.Errorf("table lacks %s:\n%s", m.name, stdout.String())
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkStructure(t, data)
	validateWithSchema(t, out)

	var r report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 2*len(allMethods) {
		t.Fatalf("%d results", len(r.Results))
	}
	for _, c := range r.Results {
		m, _ := methodByName(c.Method)
		if c.Samples != 5 || c.Warmup != 2 {
			t.Errorf("%s: %d samples, %d warm-up", c.Method, c.Samples, c.Warmup)
		}
		if !m.mayReturnEarly && c.Early != 0 {
			t.Errorf("%s at %d ns returned early %d times", c.Method, c.DurationNs, c.Early)
		}
		// Only the spin-finished (Exact) keeptime cells carry "sleeper".
		wantPpm := map[string]uint32{"keeptime": 2_000, "keeptime-relaxed": 50_000, "keeptime-strict": 1_000}[c.Method]
		if s := c.Sleeper; (wantPpm != 0) != (s != nil) {
			t.Errorf("%s: sleeper stats %+v", c.Method, s)
		} else if s != nil && s.TailTargetPpm != wantPpm {
			t.Errorf("%s: tail target %d ppm, want %d", c.Method, s.TailTargetPpm, wantPpm)
		} else if s != nil && (s.Sleeps > c.Samples || s.Late > s.Sleeps || s.CPUEstimateNs < s.SpinNs) {
			t.Errorf("%s: sleeper stats %+v", c.Method, s)
		}
	}
	if !strings.Contains(stdout.String(), "OS waits/sleep") || !strings.Contains(stdout.String(), "0.2 %") {
		t.Errorf("no sleeper stats in the table:\n%s", stdout.String())
	}
}

// checkStructure checks the document's shape in Go: every field the format
// requires, with its JSON type.
func checkStructure(t *testing.T, data []byte) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	expect := func(where string, obj map[string]any, fields map[string]string) {
		for k, kind := range fields {
			v, ok := obj[k]
			if !ok {
				t.Errorf("%s: no %q", where, k)
				continue
			}
			nullable := strings.HasSuffix(kind, "?")
			kind = strings.TrimSuffix(kind, "?")
			if v == nil {
				if !nullable {
					t.Errorf("%s.%s is null", where, k)
				}
				continue
			}
			okType := false
			switch kind {
			case "string":
				_, okType = v.(string)
			case "number":
				_, okType = v.(float64)
			case "bool":
				_, okType = v.(bool)
			case "object":
				_, okType = v.(map[string]any)
			case "array":
				_, okType = v.([]any)
			}
			if !okType {
				t.Errorf("%s.%s = %v, want a %s", where, k, v, kind)
			}
		}
	}
	expect("document", doc, map[string]string{"format": "string", "version": "number", "created": "string",
		"tool": "object", "runtime": "object", "machine": "object", "parameters": "object", "methods": "array", "results": "array"})
	if doc["format"] != "keeptime-bench" || doc["version"] != 2.0 {
		t.Errorf("format %v version %v", doc["format"], doc["version"])
	}
	expect("tool", doc["tool"].(map[string]any), map[string]string{"name": "string", "version": "string"})
	expect("runtime", doc["runtime"].(map[string]any), map[string]string{"language": "string", "name": "string", "version": "string"})
	expect("machine", doc["machine"].(map[string]any), map[string]string{"os": "string", "arch": "string", "kernel": "string?",
		"cpu_model": "string?", "cpus": "number?", "clocksource": "string?", "timer_slack_ns": "number?",
		"virtualization": "string?", "preemption": "string?"})
	expect("parameters", doc["parameters"].(map[string]any), map[string]string{"schedule": "string", "cpu_clock": "string", "durations_ns": "array",
		"methods": "array", "samples": "number?", "warmup": "number?", "budget_ns": "number?", "pin_cpu": "number?", "priority": "number?"})
	for _, m := range doc["methods"].([]any) {
		expect("method", m.(map[string]any), map[string]string{"name": "string", "description": "string", "family": "string", "may_return_early": "bool"})
	}
	for _, r := range doc["results"].([]any) {
		cell := r.(map[string]any)
		expect("result", cell, map[string]string{"method": "string", "duration_ns": "number", "warmup": "number",
			"timer_slack_ns": "number?", "samples": "number", "min_ns": "number", "mean_ns": "number", "stddev_ns": "number",
			"p50_ns": "number", "p90_ns": "number", "p99_ns": "number", "p999_ns": "number", "max_ns": "number",
			"early": "number", "cpu_percent": "number", "wall_ns": "number", "cpu_ns": "number", "histogram": "array"})
		for _, b := range cell["histogram"].([]any) {
			expect("histogram", b.(map[string]any), map[string]string{"gt_ns": "number", "le_ns": "number", "count": "number"})
		}
		if s, ok := cell["sleeper"]; ok {
			sleeper, isObject := s.(map[string]any)
			if !isObject {
				t.Fatalf("%v: sleeper = %v, want an object", cell["method"], s)
			}
			fields := []string{"tail_target_ppm", "sleeps", "late", "os_waits", "spin_ns", "cpu_estimate_ns"}
			if len(sleeper) != len(fields) {
				t.Errorf("%v: sleeper has fields %v, want exactly %v", cell["method"], sleeper, fields)
			}
			for _, k := range fields {
				if v, ok := sleeper[k].(float64); !ok || v != math.Trunc(v) || v < 0 {
					t.Errorf("%v: sleeper.%s = %v, want a non-negative integer", cell["method"], k, sleeper[k])
				}
			}
		}
	}
}

// validateWithSchema runs Python's jsonschema on the document, when both the
// schema and the module are there.
func validateWithSchema(t *testing.T, doc string) {
	t.Helper()
	if _, err := os.Stat(schemaPath); err != nil {
		t.Logf("no %s: checked the structure only", schemaPath)
		return
	}
	if exec.Command("python3", "-c", "import jsonschema").Run() != nil {
		t.Log("python3 with jsonschema not available: checked the structure only")
		return
	}
	script := `import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
errors = sorted(cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(json.load(open(sys.argv[2]))), key=str)
for e in errors:
    print("/".join(map(str, e.absolute_path)) or "(document)", ":", e.message)
sys.exit(1 if errors else 0)
`
	out, err := exec.Command("python3", "-c", script, schemaPath, doc).CombinedOutput()
	if err != nil {
		t.Fatalf("the document does not validate against %s:\n%s", schemaPath, out)
	}
}

func TestParseArgs(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parseArgs(nil, &stderr)
	if err != nil || len(o.durations) != 6 || len(o.methods) != len(defaultMethods) || o.samples != nil || o.target != keeptime.TailBalanced {
		t.Fatalf("defaults: %+v %v", o, err)
	}
	for _, bad := range [][]string{
		{"--durations", "0s"}, {"--durations", "-1ms"}, {"--durations", "soon"},
		{"--methods", "warp-drive"}, {"--samples", "0"}, {"extra"},
		{"--tail-target", "0"}, {"--tail-target", "1"}, {"--tail-target", "NaN"}, {"--tail-target", "loose"},
		{"--crowd", "-1"}, {"--crowd", "4097"}, {"--crowd-wait", "0s"}, {"--crowd-for", "0s"},
		{"--crowd-only", "--crowd", "0"}, {"--idle-hint", "-1"}, {"--idle-hint", "2147483648"},
		{"--idle-hint", "0.5"}, {"--idle-hint", "0", "--crowd", "0"},
	} {
		if _, err := parseArgs(bad, &stderr); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	// 943 warm-up sleeps: a keeptime cell's at 1 ms (1 s / 1.06 ms).
	if o.crowd != (crowdPlan{goroutines: 16, wait: time.Millisecond, warmup: 943, measure: 2 * time.Second}) || o.idleHint != nil {
		t.Errorf("crowd defaults: %+v %v", o.crowd, o.idleHint)
	}
	// --warmup sets the crowd's too; --crowd-wait changes its default.
	if o, err := parseArgs([]string{"--warmup", "7"}, &stderr); err != nil || o.crowd.warmup != 7 {
		t.Errorf("--warmup 7: crowd warm-up %d, %v", o.crowd.warmup, err)
	}
	if o, err := parseArgs([]string{"--crowd-wait", "250us"}, &stderr); err != nil || o.crowd.warmup != 3_000 {
		t.Errorf("--crowd-wait 250us: crowd warm-up %d, %v", o.crowd.warmup, err)
	}
	_, err = parseArgs([]string{"--idle-hint", "-1"}, &stderr)
	if err == nil || err.Error() != "--idle-hint: keeptime: idle-latency hint must be 0 to 2147483647 µs (got -1 µs)" {
		t.Errorf("--idle-hint -1: %v", err)
	}
	_, err = parseArgs([]string{"--crowd", "-3"}, &stderr)
	if err == nil || err.Error() != "--crowd: -3 is not a goroutine count: 0 (off) to 4096" {
		t.Errorf("--crowd -3: %v", err)
	}
	if m, err := methodByName(" KEEPTIME "); err != nil || m.name != "keeptime" {
		t.Error("method names are not case-insensitive")
	}
}

// The methods whose sleeper learns warm up about 1 s (at least 300 waits
// where they fit in 5 s), the others about 50 ms.
func TestLearningMethodsWarmUpAboutASecond(t *testing.T) {
	byName := map[string]method{}
	for _, m := range allMethods {
		byName[m.name] = m
	}
	for _, c := range []struct {
		name string
		d    time.Duration
		want uint64
	}{
		{"keeptime", time.Millisecond, 943},             // 1 s / (1 ms + 60 µs)
		{"keeptime-strict", 10 * time.Millisecond, 300}, // 1 s is 99: the floor of 300 (3 s)
		{"keeptime", 20 * time.Millisecond, 249},        // 300 would take 6 s: 5 s / 20.06 ms
		{"keeptime", 100 * time.Millisecond, 49},        // 5 s / 100.06 ms
		{"keeptime", 2500 * time.Microsecond, 390},      // 1 s holds more than the floor
		{"keeptime-efficient", 10 * time.Microsecond, 3_000},
		{"keeptime-spin", time.Millisecond, 47}, // 50 ms / 1.06 ms: a spin learns nothing
		{"time-sleep", 10 * time.Millisecond, 10},
		{"busy-loop", 10 * time.Microsecond, 714},
	} {
		if got := defaultWarmup(byName[c.name], c.d); got != c.want {
			t.Errorf("defaultWarmup(%s, %v) = %d, want %d", c.name, c.d, got, c.want)
		}
	}
}
