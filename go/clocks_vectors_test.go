package keeptime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// clockVectors is spec/vectors/clocks.json: per case, the clock report's
// inputs and the findings every runtime must make from them, in order.
type clockVectors struct {
	Description string `json:"description"`
	Version     int    `json:"version"`
	Cases       []struct {
		Name        string             `json:"name"`
		Clocks      []ClockInfo        `json:"clocks"`
		Machine     MachineInfo        `json:"machine"`
		IdleLatency *IdleLatencyReport `json:"idle_latency"`
		Findings    []expectedFinding  `json:"findings"`
	} `json:"cases"`
}

type expectedFinding struct {
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
}

const clockSchemaPath = "../spec/clocks.schema.json"

// loadClockVectors decodes the vectors into Go's report types, refusing any
// field Go's types do not have.
func loadClockVectors(t *testing.T) clockVectors {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, "clocks.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var v clockVectors
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("clocks.json: %v", err)
	}
	if v.Version != 1 || len(v.Cases) < 15 {
		t.Fatalf("version %d, %d cases", v.Version, len(v.Cases))
	}
	return v
}

func TestClockFindingsVectors(t *testing.T) {
	for _, c := range loadClockVectors(t).Cases {
		got := []expectedFinding{}
		for _, f := range ClockFindings(c.Clocks, c.Machine, c.IdleLatency) {
			if f.Message == "" {
				t.Errorf("%s: %s has no message", c.Name, f.Code)
			}
			got = append(got, expectedFinding{f.Severity, f.Code})
		}
		want := c.Findings
		if want == nil {
			want = []expectedFinding{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("case %q:\n got  %v\n want %v", c.Name, got, want)
		}
	}
}

// Each vector's inputs with Go's findings, written as Go writes a report,
// follow the report's schema.
func TestClockReportsFromVectorsFollowTheSchema(t *testing.T) {
	var reports []ClockReport
	for _, c := range loadClockVectors(t).Cases {
		r := ClockReport{Clocks: c.Clocks, Machine: c.Machine, Findings: ClockFindings(c.Clocks, c.Machine, c.IdleLatency)}
		if r.Clocks == nil {
			r.Clocks = []ClockInfo{}
		}
		if c.IdleLatency != nil {
			r.IdleLatency = *c.IdleLatency
		}
		reports = append(reports, r)
	}
	validateClockReports(t, reports...)
}

// validateClockReports writes each report as JSON and runs Python's
// jsonschema on them against spec/clocks.schema.json, when python3 has that
// module.
func validateClockReports(t *testing.T, reports ...ClockReport) {
	t.Helper()
	if exec.Command("python3", "-c", "import jsonschema").Run() != nil {
		t.Skip("python3 with jsonschema not available: the report's JSON is not validated")
	}
	args := []string{"-c", `import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
bad = False
for path in sys.argv[2:]:
    for e in sorted(cls(schema).iter_errors(json.load(open(path))), key=str):
        bad = True
        print(path, "/".join(map(str, e.absolute_path)) or "(document)", ":", e.message)
sys.exit(1 if bad else 0)
`, clockSchemaPath}
	dir := t.TempDir()
	for i, r := range reports {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("report%d.json", i))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	if out, err := exec.Command("python3", args...).CombinedOutput(); err != nil {
		t.Fatalf("a report does not validate against %s:\n%s", clockSchemaPath, out)
	}
}
