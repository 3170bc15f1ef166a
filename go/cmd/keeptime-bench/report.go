package main

import (
	"encoding/json"
	"github.com/keeptime/keeptime/go"
	"os"
	"runtime"
	"strings"
	"time"
)

// The bench result document: the project's one result format
// (spec/bench-result.md, validated by spec/bench-result.schema.json), the
// same fields the Rust bench writes.

const (
	formatName    = "keeptime-bench"
	formatVersion = 2
	toolName      = "keeptime-bench-go"
	toolVersion   = "0.1.0"
)

type report struct {
	Format     string       `json:"format"`
	Version    int          `json:"version"`
	Created    string       `json:"created"`
	Tool       tool         `json:"tool"`
	Runtime    runtimeInfo  `json:"runtime"`
	Machine    machine      `json:"machine"`
	Parameters parameters   `json:"parameters"`
	Methods    []methodInfo `json:"methods"`
	Results    []cellResult `json:"results"`
}

type tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type runtimeInfo struct {
	Language string `json:"language"`
	Name     string `json:"name"`
	Version  string `json:"version"`
}

// machine: every field but os and arch is null where it cannot be read.
type machine struct {
	OS             string  `json:"os"`
	Arch           string  `json:"arch"`
	Kernel         *string `json:"kernel"`
	CPUModel       *string `json:"cpu_model"`
	CPUs           *uint64 `json:"cpus"`
	Clocksource    *string `json:"clocksource"`
	TimerSlackNs   *uint64 `json:"timer_slack_ns"`
	Virtualization *string `json:"virtualization"`
	Preemption     *string `json:"preemption"`
}

type parameters struct {
	Schedule    string   `json:"schedule"`
	CPUClock    string   `json:"cpu_clock"`
	DurationsNs []uint64 `json:"durations_ns"`
	Methods     []string `json:"methods"`
	Samples     *uint64  `json:"samples"`
	Warmup      *uint64  `json:"warmup"`
	BudgetNs    *uint64  `json:"budget_ns"`
	PinCPU      *uint32  `json:"pin_cpu"`
	Priority    *uint32  `json:"priority"`
}

type methodInfo struct {
	Name           string `json:"name"`
	Description    string `json:"description"`
	Family         string `json:"family"`
	MayReturnEarly bool   `json:"may_return_early"`
}

// cellResult is one method at one duration, its statistics flattened in.
type cellResult struct {
	Method       string  `json:"method"`
	DurationNs   uint64  `json:"duration_ns"`
	Warmup       uint64  `json:"warmup"`
	TimerSlackNs *uint64 `json:"timer_slack_ns"`
	Stats
	// Sleeper: keeptime's cells only.
	Sleeper *sleeperCell `json:"sleeper,omitempty"`
	// late counts the errors above lateThresholdNs (printed, not exported).
	late uint64
}

func ptr[T any](v T) *T { return &v }

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// archNames maps GOARCH to the names `uname -m` and the Rust bench use.
var archNames = map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "x86", "ppc64le": "powerpc64le"}

func thisMachine(startSlack *uint64) machine {
	arch := runtime.GOARCH
	if a, ok := archNames[arch]; ok {
		arch = a
	}
	osName := runtime.GOOS
	if osName == "darwin" {
		osName = "macos"
	}
	// The library's inspection (spec/clocks.md) is the one reader of the
	// machine; the bench keeps the timer slack it found at start-up.
	var mi keeptime.MachineInfo
	if r, err := keeptime.InspectClocks(); err == nil {
		mi = r.Machine
	}
	m := machine{
		OS:           osName,
		Arch:         arch,
		Kernel:       nonEmpty(mi.KernelRelease),
		CPUModel:     nonEmpty(mi.CPUModel),
		Clocksource:  nonEmpty(mi.Clocksource),
		TimerSlackNs: startSlack,
		Preemption:   nonEmpty(preemptionName[mi.Preemption]),
	}
	if mi.CPUsOnline != nil {
		m.CPUs = ptr(uint64(*mi.CPUsOnline))
	}
	if mi.Virtualization != nil {
		m.Virtualization = nonEmpty(mi.Virtualization.Hypervisor)
	}
	return m
}

// preemptionName is the result format's wording of a preemption model (the
// Rust bench's).
var preemptionName = map[keeptime.Preemption]string{
	keeptime.PreemptionRT:              "PREEMPT_RT",
	keeptime.PreemptionFull:            "PREEMPT (full)",
	keeptime.PreemptionDynamic:         "PREEMPT_DYNAMIC",
	keeptime.PreemptionNoneOrVoluntary: "none or voluntary",
}

func newReport(created time.Time, m machine, p parameters, methods []method, results []cellResult) report {
	r := report{
		Format:     formatName,
		Version:    formatVersion,
		Created:    created.UTC().Format(time.RFC3339),
		Tool:       tool{Name: toolName, Version: toolVersion},
		Runtime:    runtimeInfo{Language: "go", Name: "gc", Version: strings.TrimPrefix(runtime.Version(), "go")},
		Machine:    m,
		Parameters: p,
		Results:    results,
	}
	for _, mt := range methods {
		r.Methods = append(r.Methods, methodInfo{
			Name: mt.name, Description: mt.description, Family: mt.family, MayReturnEarly: mt.mayReturnEarly,
		})
	}
	return r
}

func writeJSON(path string, r report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
