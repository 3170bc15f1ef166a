package keeptime

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeRoot builds a root directory with the given files (path → content).
func fakeRoot(t *testing.T, files map[string][]byte) string {
	t.Helper()
	root := t.TempDir()
	for p, b := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func s32(v int32) []byte { return binary.NativeEndian.AppendUint32(nil, uint32(v)) }

func TestIdleReportReadsDriverGovernorAndValueInForce(t *testing.T) {
	root := fakeRoot(t, map[string][]byte{
		"sys/devices/system/cpu/cpuidle/current_driver":   []byte("haltpoll\n"),
		"sys/devices/system/cpu/cpuidle/current_governor": []byte("haltpoll\n"),
		"dev/cpu_dma_latency":                             s32(0),
	})
	r := inspectIdleLatency(root)
	if r.Driver != "haltpoll" || r.Governor != "haltpoll" || r.InForceMicros == nil || *r.InForceMicros != 0 ||
		r.ReadError != "" || r.Unconstrained() {
		t.Fatalf("%+v", r)
	}
	if hasAbsoluteWait || !r.MayRequest { // a file of ours, 0600: writable on Linux
		if !r.MayRequest || r.RequestRefused != "" {
			t.Fatalf("may not request: %+v", r)
		}
	}
	f, ok := idleFinding(r, MachineInfo{})
	if !ok || f.Code != "idle_hint_available" || !strings.Contains(f.Message, "A process already holds 0 µs.") {
		t.Errorf("finding %+v", f)
	}

	root = fakeRoot(t, map[string][]byte{
		"sys/devices/system/cpu/cpuidle/current_driver":   []byte("none\n"),
		"sys/devices/system/cpu/cpuidle/current_governor": []byte("menu\n"),
		"dev/cpu_dma_latency":                             s32(pmqosUnconstrainedMicros),
	})
	r = inspectIdleLatency(root)
	if r.Driver != "none" || r.Governor != "menu" || !r.Unconstrained() {
		t.Fatalf("%+v", r)
	}
	if f, ok := idleFinding(r, MachineInfo{}); !ok || f.Code != "idle_hint_little_effect" || !strings.Contains(f.Message, "changes little") {
		t.Fatalf("finding %+v", f)
	}
}

func TestIdleReportWithoutDeviceOrCpuidle(t *testing.T) {
	root := fakeRoot(t, map[string][]byte{"dev/cpu_dma_latency_short": s32(1)[:2]})
	r := inspectIdleLatency(root)
	dev := filepath.Join(root, "dev/cpu_dma_latency")
	want := dev + ": no such device (no PM QoS CPU latency interface here)"
	if r.Driver != "" || r.Governor != "" || r.InForceMicros != nil || r.ReadError != want || r.MayRequest {
		t.Fatalf("%+v", r)
	}
	if hasAbsoluteWait && r.RequestRefused != want {
		t.Fatalf("refused %q, want %q", r.RequestRefused, want)
	}
	// A device that reads short is an error naming it, not a value.
	if _, err := readPmqos(filepath.Join(root, "dev/cpu_dma_latency_short")); err == nil ||
		!strings.HasPrefix(err.Error(), filepath.Join(root, "dev/cpu_dma_latency_short")+": cannot read it: ") {
		t.Fatalf("short read: %v", err)
	}
}

func TestLackedWritePermissionNamesTheClassAndTheBit(t *testing.T) {
	mode := fs.ModeDevice | fs.ModeCharDevice | 0o600
	for _, c := range []struct {
		euid, egid uint32
		inGroup    bool
		want       string
	}{
		{1000, 1000, false, "falls under others, which lack o+w"},
		{1000, 5, true, "falls under its group (gid 5), which lack g+w"},
		{1000, 5, false, "falls under its group (gid 5), which lack g+w"},
		{7, 1000, false, "falls under its owner, which lack u+w"},
	} {
		got := lackedWritePermission("/dev/cpu_dma_latency", mode, 7, 5, c.euid, c.egid, c.inGroup)
		want := "no write permission on /dev/cpu_dma_latency (mode crw-------, owner uid 7, group gid 5): " +
			"this process (euid " + itoa(c.euid) + ", egid " + itoa(c.egid) + ") " + c.want +
			"; holding the idle-latency hint needs root (CAP_DAC_OVERRIDE) or write access to the device"
		if got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
}

func itoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

// The real machine: only that the report is complete and consistent.
func TestRealIdleReportIsConsistent(t *testing.T) {
	r := InspectIdleLatency()
	if (r.InForceMicros == nil) == (r.ReadError == "") {
		t.Fatalf("value and read error: %+v", r)
	}
	if r.MayRequest == (r.RequestRefused != "") {
		t.Fatalf("may request and refusal: %+v", r)
	}
	if r.InForceMicros != nil && *r.InForceMicros < 0 {
		t.Fatalf("negative value in force: %+v", r)
	}
}
