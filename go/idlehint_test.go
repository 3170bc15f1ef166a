package keeptime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"
)

// fakeDevice records what the holder does to it, and refuses on request.
type fakeDevice struct {
	log         []string
	refuseOpen  error
	refuseWrite error
}

type fakeRequest struct{ d *fakeDevice }

func (d *fakeDevice) open() (pmqosRequest, error) {
	if d.refuseOpen != nil {
		return nil, refusal(pmqosDevicePath, "open", d.refuseOpen)
	}
	d.log = append(d.log, "open")
	return fakeRequest{d}, nil
}

func (r fakeRequest) write(us int32) error {
	if r.d.refuseWrite != nil {
		return refusal(pmqosDevicePath, "write", r.d.refuseWrite)
	}
	r.d.log = append(r.d.log, fmt.Sprintf("write %d", us))
	return nil
}

func (r fakeRequest) close() error {
	r.d.log = append(r.d.log, "close")
	return nil
}

// newFakeHolder is a holder of a fake device whose warnings are collected.
func newFakeHolder(d *fakeDevice) (*pmqosHolder, *[]string) {
	var warnings []string
	return newPmqosHolder(d, func(err error) { warnings = append(warnings, err.Error()) }), &warnings
}

func expectLog(t *testing.T, d *fakeDevice, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	got := d.log
	if got == nil {
		got = []string{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("device saw %q, want %q", got, want)
	}
}

func TestHolderOpensOnceWritesTheStrictestAndClosesWithTheLast(t *testing.T) {
	d := &fakeDevice{}
	h, warnings := newFakeHolder(d)
	if _, ok := h.inForce(); ok {
		t.Fatal("in force before any hint")
	}
	a, err := h.acquire(50)
	if err != nil {
		t.Fatal(err)
	}
	expectLog(t, d, "open", "write 50")
	b, _ := h.acquire(10) // stricter: rewritten
	c, _ := h.acquire(30) // looser: nothing written
	expectLog(t, d, "open", "write 50", "write 10")
	if us, ok := h.inForce(); !ok || us != 10 || h.holders() != 3 {
		t.Fatalf("in force %d %v with %d holders", us, ok, h.holders())
	}
	_ = b.release() // the strictest goes: the next strictest is written
	expectLog(t, d, "open", "write 50", "write 10", "write 30")
	_ = b.release() // twice: nothing more
	_ = a.release() // 30 is still the strictest: no write
	expectLog(t, d, "open", "write 50", "write 10", "write 30")
	if us, _ := h.inForce(); us != 30 {
		t.Fatalf("in force %d", us)
	}
	_ = c.release() // the last: closed
	expectLog(t, d, "open", "write 50", "write 10", "write 30", "close")
	if _, ok := h.inForce(); ok || h.holders() != 0 {
		t.Fatal("still held after the last release")
	}
	// A new hint opens the device again.
	e, _ := h.acquire(0)
	_ = e.release()
	expectLog(t, d, "open", "write 50", "write 10", "write 30", "close", "open", "write 0", "close")
	if len(*warnings) != 0 {
		t.Fatalf("warnings %q", *warnings)
	}
}

func TestHolderEqualValuesShareOneWrite(t *testing.T) {
	d := &fakeDevice{}
	h, _ := newFakeHolder(d)
	a, _ := h.acquire(0)
	b, _ := h.acquire(0)
	_ = a.release()
	expectLog(t, d, "open", "write 0")
	_ = b.release()
	expectLog(t, d, "open", "write 0", "close")
}

func TestRefusalWarnsOncePerHolderAndHoldsNothing(t *testing.T) {
	d := &fakeDevice{refuseOpen: &fs.PathError{Op: "open", Path: pmqosDevicePath, Err: syscall.EACCES}}
	h, warnings := newFakeHolder(d)
	const want = "keeptime: idle-latency hint refused: /dev/cpu_dma_latency: permission denied (writing it needs root or write access to the device)"
	for i := 0; i < 3; i++ {
		_, err := h.acquire(0)
		if err == nil || err.Error() != want || !errors.Is(err, fs.ErrPermission) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	if !reflect.DeepEqual(*warnings, []string{want}) {
		t.Fatalf("warnings %q", *warnings)
	}
	if _, ok := h.inForce(); ok || h.holders() != 0 {
		t.Fatal("something held after a refusal")
	}
	expectLog(t, d)

	// Opened, but the write refused: closed again at once, nothing held.
	d = &fakeDevice{refuseWrite: syscall.EIO}
	h, warnings = newFakeHolder(d)
	if _, err := h.acquire(5); err == nil {
		t.Fatal("a refused write held the hint")
	}
	expectLog(t, d, "open", "close")
	if h.holders() != 0 || len(*warnings) != 1 {
		t.Fatalf("%d holders, warnings %q", h.holders(), *warnings)
	}
}

func TestRefusalMessagesNameTheDeviceAndTheReason(t *testing.T) {
	for _, c := range []struct {
		op   string
		err  error
		want string
	}{
		{"open", &fs.PathError{Op: "open", Path: pmqosDevicePath, Err: syscall.ENOENT},
			"no such device (no PM QoS CPU latency interface here)"},
		{"open", &fs.PathError{Op: "open", Path: pmqosDevicePath, Err: syscall.ENODEV},
			"no such device (no PM QoS CPU latency interface here)"},
		{"open", &fs.PathError{Op: "open", Path: pmqosDevicePath, Err: syscall.EPERM},
			"permission denied (writing it needs root or write access to the device)"},
		{"write", &fs.PathError{Op: "write", Path: pmqosDevicePath, Err: syscall.EIO},
			"write failed: " + syscall.EIO.Error()},
		{"write", syscall.EINVAL, "write failed: " + syscall.EINVAL.Error()},
	} {
		got := refusal(pmqosDevicePath, c.op, c.err).Error()
		if want := "keeptime: idle-latency hint refused: /dev/cpu_dma_latency: " + c.want; got != want {
			t.Errorf("%v: %q, want %q", c.err, got, want)
		}
	}
}

func TestIdleHintRange(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int32
	}{
		{0, 0}, {999 * time.Nanosecond, 0}, {1999 * time.Nanosecond, 1}, // truncated: a stricter bound
		{50 * time.Microsecond, 50},
		{MaxIdleHintMicros*time.Microsecond + 999, MaxIdleHintMicros},
	} {
		h, err := NewIdleHint(c.d)
		if err != nil || h.Micros() != c.want {
			t.Errorf("NewIdleHint(%v) = %v, %v; want %d µs", c.d, h, err, c.want)
		}
	}
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Nanosecond, "keeptime: idle-latency hint must be 0 to 2147483647 µs (got -1ns)"},
		{(MaxIdleHintMicros + 1) * time.Microsecond, "keeptime: idle-latency hint must be 0 to 2147483647 µs (got 35m47.483648s)"},
		{time.Duration(1<<63 - 1), "keeptime: idle-latency hint must be 0 to 2147483647 µs (got 2562047h47m16.854775807s)"},
	} {
		_, err := NewIdleHint(c.d)
		if !errors.Is(err, ErrInvalidIdleHint) || err.Error() != c.want {
			t.Errorf("NewIdleHint(%v): %v", c.d, err)
		}
	}
	if h, err := IdleHintMicros(MaxIdleHintMicros); err != nil || h.Micros() != MaxIdleHintMicros || h.String() != "2147483647 µs" {
		t.Errorf("IdleHintMicros(max) = %v, %v", h, err)
	}
	for _, us := range []int64{-1, MaxIdleHintMicros + 1, -1 << 63} {
		_, err := IdleHintMicros(us)
		if want := fmt.Sprintf("keeptime: idle-latency hint must be 0 to 2147483647 µs (got %d µs)", us); !errors.Is(err, ErrInvalidIdleHint) || err.Error() != want {
			t.Errorf("IdleHintMicros(%d): %v", us, err)
		}
	}
	if IdleHintZero != (IdleHint{}) || IdleHintZero.Duration() != 0 {
		t.Error("the zero IdleHint is not 0 µs")
	}
}

// The knob on sleepers and tickers: each adds a holder while it holds the
// hint; replacing a hint holds the new one before letting go of the old.
func TestSleepersAndTickersHoldTheHintUntilClose(t *testing.T) {
	d := &fakeDevice{}
	h, warnings := newFakeHolder(d)
	s1 := newSleeperOn(newSim(0), Exact)
	s1.hint.holder = h
	tk, err := newTickerOn(newSleeperOn(newSim(0), Exact), time.Millisecond, Skip)
	if err != nil {
		t.Fatal(err)
	}
	tk.sleeper.hint.holder = h
	if st := s1.IdleHintStatus(); st != (IdleHintStatus{}) || st.String() != "not asked" {
		t.Fatalf("before: %+v", st)
	}

	s1.SetIdleHint(IdleHint{us: 50})
	tk.SetIdleHint(IdleHint{us: 10})
	expectLog(t, d, "open", "write 50", "write 10")
	want := IdleHintStatus{State: IdleHintHeld, Asked: IdleHint{us: 50}, InForce: IdleHint{us: 10}}
	if st := s1.IdleHintStatus(); st != want || st.String() != "held: 10 µs in force (asked 50 µs)" {
		t.Fatalf("s1: %+v %v", st, st)
	}
	s1.SetIdleHint(IdleHint{us: 50}) // the same again: nothing changes
	s1.SetIdleHint(IdleHint{us: 20}) // replaced: 10 is still the strictest
	expectLog(t, d, "open", "write 50", "write 10")
	if h.holders() != 2 {
		t.Fatalf("%d holders", h.holders())
	}
	if err := tk.Close(); err != nil { // 20 is left
		t.Fatal(err)
	}
	expectLog(t, d, "open", "write 50", "write 10", "write 20")
	if st := tk.IdleHintStatus(); st.State != IdleHintNotAsked {
		t.Fatalf("ticker after Close: %+v", st)
	}
	_ = tk.Close() // twice: harmless
	s1.ClearIdleHint()
	expectLog(t, d, "open", "write 50", "write 10", "write 20", "close")
	if err := s1.Close(); err != nil || h.holders() != 0 || len(*warnings) != 0 {
		t.Fatalf("close: %v, %d holders, warnings %q", err, h.holders(), *warnings)
	}
}

// A refused hint never fails the sleeper: it sleeps as without it, the
// refusal is reported by each sleeper and warned about once.
func TestRefusedHintLeavesTheSleeperWorking(t *testing.T) {
	d := &fakeDevice{refuseOpen: &fs.PathError{Op: "open", Path: pmqosDevicePath, Err: syscall.ENOENT}}
	h, warnings := newFakeHolder(d)
	for i := 0; i < 2; i++ {
		sim := newSim(0)
		s := newSleeperOn(sim, Exact)
		s.hint.holder = h
		s.SetIdleHint(IdleHintZero)
		st := s.IdleHintStatus()
		if st.State != IdleHintRefused || !errors.Is(st.Err, fs.ErrNotExist) ||
			st.String() != "refused (asked 0 µs): keeptime: idle-latency hint refused: /dev/cpu_dma_latency: no such device (no PM QoS CPU latency interface here)" {
			t.Fatalf("status %+v", st)
		}
		// It sleeps exactly as a sleeper that never asked.
		ref := newSim(0)
		plain := newSleeperOn(ref, Exact)
		for _, d := range []uint64{1_000_000, 2_000_000, 2_300_000} {
			if woke, want := s.sleepUntilNs(d), plain.sleepUntilNs(d); woke != want || woke < d {
				t.Fatalf("woke at %d, without the hint at %d, deadline %d", woke, want, d)
			}
		}
		if !reflect.DeepEqual(sim.waits, ref.waits) || s.Stats() != plain.Stats() {
			t.Fatalf("waits %v / %v, stats %+v / %+v", sim.waits, ref.waits, s.Stats(), plain.Stats())
		}
		if err := s.Close(); err != nil || s.IdleHintStatus().State != IdleHintNotAsked {
			t.Fatalf("close: %v %+v", err, s.IdleHintStatus())
		}
	}
	if len(*warnings) != 1 {
		t.Fatalf("warnings %q", *warnings)
	}
}

// The device file: one native-endian s32 per write, on a regular file
// standing in for the device.
func TestDeviceFileWritesANativeEndianS32(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu_dma_latency")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h, _ := newFakeHolder(nil)
	h.dev = pmqosFile{path: path}
	a, err := h.acquire(MaxIdleHintMicros)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := h.acquire(7)
	_ = b.release()
	_ = a.release()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, v := range []int32{MaxIdleHintMicros, 7, MaxIdleHintMicros} {
		want = binary.NativeEndian.AppendUint32(want, uint32(v))
	}
	if !reflect.DeepEqual(data, want) {
		t.Fatalf("wrote % x, want % x", data, want)
	}

	h.dev = pmqosFile{path: filepath.Join(t.TempDir(), "missing")}
	if _, err := h.acquire(0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing device: %v", err)
	}
}

// On the real device only invariants: the hint is held or refused with a
// reason, sleeps stay never early, Close lets go of it.
func TestRealIdleHintIsHeldOrRefused(t *testing.T) {
	s := NewSleeper(Exact)
	s.SetIdleHint(IdleHintZero)
	st := s.IdleHintStatus()
	switch st.State {
	case IdleHintHeld:
		if st.InForce.Micros() != 0 || pmqos().holders() < 1 {
			t.Fatalf("held: %+v, %d holders", st, pmqos().holders())
		}
		if v, err := readPmqos(pmqosDevicePath); err == nil && v > 0 {
			t.Fatalf("the system's value %d µs while 0 is held", v)
		}
	case IdleHintRefused:
		var e *IdleHintError
		if !errors.As(st.Err, &e) || e.Path != pmqosDevicePath {
			t.Fatalf("refused without a reason: %+v", st)
		}
	default:
		t.Fatalf("status %+v", st)
	}
	for i := 0; i < 50; i++ {
		deadline := time.Now().Add(200 * time.Microsecond)
		s.SleepUntil(deadline)
		if now := time.Now(); now.Before(deadline) {
			t.Fatalf("woke %v early with the hint %v", deadline.Sub(now), st.State)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.IdleHintStatus().State != IdleHintNotAsked || pmqos().holders() != 0 {
		t.Fatalf("after Close: %+v, %d holders", s.IdleHintStatus(), pmqos().holders())
	}
}
