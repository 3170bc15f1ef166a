package keeptime

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// KEEPTIME_PROFILE (spec/estimator.md, "Default sleepers", "From the
// environment"): the default profile of a program that sets none.

// resetEnvProfileForTest puts the shared sleepers back as a process starts
// with them: KEEPTIME_PROFILE not read yet, no default profile, none in the
// free list. No sleep may be under way.
func resetEnvProfileForTest() {
	sharedSleepers.setProfile(nil)
	sharedSleepers.envOnce = sync.Once{}
}

// envTest starts a test of the environment's profile: KEEPTIME_PROFILE is
// path, not read yet, and the warning goes to the buffer returned. On
// cleanup the default is none and the variable spent, as after
// SetDefaultProfile(nil), so that no other test's sleeps read it.
func envTest(t *testing.T, path string) *bytes.Buffer {
	t.Helper()
	t.Setenv(profileEnv, path)
	warn := new(bytes.Buffer)
	stderr := envProfileWarn
	envProfileWarn = warn
	resetEnvProfileForTest()
	t.Cleanup(func() {
		envProfileWarn = stderr
		SetDefaultProfile(nil)
	})
	return warn
}

// hostProfileFile writes, in a new temporary directory, the profile of a
// simulated sleeper made on this machine (so LoadProfile takes it), and
// returns its path and the profile loaded back. Its model differs from
// learnedProfile's and from a fresh one.
func hostProfileFile(t *testing.T) (string, *Profile) {
	t.Helper()
	s := simulatedSleeper(12_000, 1_000, 4_973, 20_000, []uint64{1_500_000, 5_000_000}, 400)
	path := filepath.Join(t.TempDir(), "host.profile")
	if err := s.WriteProfile(path); err != nil {
		t.Fatal(err)
	}
	p, err := LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	from := startedFrom(t, p)
	if reflect.DeepEqual(from, NewSleeper(Exact)) || reflect.DeepEqual(from, startedFrom(t, learnedProfile(t))) {
		t.Fatal("the host profile's model is a fresh one or learnedProfile's")
	}
	return path, p
}

// envWarning is the line written for a KEEPTIME_PROFILE=path that
// LoadProfile refuses with the message msg: msg less its own "keeptime: ".
func envWarning(path, msg string) string {
	return "keeptime: KEEPTIME_PROFILE=" + path + ": " + strings.TrimPrefix(msg, "keeptime: ") +
		"; keeptime's own sleepers start fresh\n"
}

// A good profile named by KEEPTIME_PROFILE starts the shared sleepers and
// NewTicker's, whichever is made first, and says nothing; a Sleeper of the
// program's own starts fresh.
func TestEnvProfileStartsTheDefaultSleepers(t *testing.T) {
	path, p := hostProfileFile(t)
	want := startedFrom(t, p)

	warn := envTest(t, path)
	if own := NewSleeper(Exact); !reflect.DeepEqual(own, NewSleeper(Exact)) || sharedSleepers.start != nil {
		t.Fatal("NewSleeper read KEEPTIME_PROFILE")
	}
	s, gen := sharedSleepers.get()
	if !reflect.DeepEqual(s, want) {
		t.Fatal("the first shared sleeper was not started from KEEPTIME_PROFILE's profile")
	}
	sharedSleepers.put(s, gen)
	tickerStartsAs(t, want, "NewTicker's sleeper was not started from KEEPTIME_PROFILE's profile")

	// A Ticker made first reads it too.
	resetEnvProfileForTest()
	tk, err := NewTicker(time.Millisecond, Burst)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(unclocked(tk.sleeper), *want) {
		t.Fatal("the first NewTicker's sleeper was not started from KEEPTIME_PROFILE's profile")
	}

	// So does the first real Sleep: its sleeper started from the profile's
	// model, which stays the default.
	resetEnvProfileForTest()
	start := time.Now()
	Sleep(300 * time.Microsecond)
	if got := time.Since(start); got < 300*time.Microsecond {
		t.Fatalf("Sleep(300µs) returned after %v", got)
	}
	if !reflect.DeepEqual(sharedSleepers.start, p.estimator()) {
		t.Fatal("after the first Sleep, the default is not KEEPTIME_PROFILE's profile")
	}
	if warn.Len() != 0 {
		t.Fatalf("a good profile was warned about: %q", warn)
	}
}

// A KEEPTIME_PROFILE that cannot be loaded fails nothing: one line on
// standard error, the loader's message in it, and fresh sleepers.
func TestEnvProfileThatCannotLoadStartsFresh(t *testing.T) {
	good, _ := hostProfileFile(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	dir := t.TempDir()

	missing := filepath.Join(dir, "missing.profile")

	cut := filepath.Join(dir, "cut.profile")
	cutText := strings.TrimSuffix(text, "end\n")
	if err := os.WriteFile(cut, []byte(cutText), 0o644); err != nil {
		t.Fatal(err)
	}

	other := filepath.Join(dir, "other.profile")
	here := MachineFingerprint().CPUsOnline
	otherText := strings.Replace(text, "\ncpus_online "+here+"\n", "\ncpus_online "+here+"0\n", 1)
	if otherText == text {
		t.Fatal("no cpus_online line to change")
	}
	if err := os.WriteFile(other, []byte(otherText), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, path, msg string
	}{
		{"missing", missing, "keeptime: reading the profile: open " + missing + ": no such file or directory"},
		{"malformed", cut, fmt.Sprintf(`keeptime: %s: line %d: the profile ends here, cut short: expected a "cost WAIT_NS CPU_NS" line or "end"`,
			cut, strings.Count(cutText, "\n")+1)},
		{"another machine's", other, fmt.Sprintf(`keeptime: %s: line 4: made on another machine: cpus_online is "%s0" in the profile, "%s" here (load it anyway with keeptime.IgnoreMachine())`,
			other, here, here)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := LoadProfile(c.path); err == nil || err.Error() != c.msg {
				t.Fatalf("LoadProfile: %v, want %s", err, c.msg)
			}
			warn := envTest(t, c.path)
			// The program's own sleepers do not read it.
			if _, err := NewTickerWith(NewSleeper(Exact), time.Millisecond, Skip); err != nil || warn.Len() != 0 {
				t.Fatalf("NewSleeper or NewTickerWith read KEEPTIME_PROFILE: %v, %q", err, warn)
			}
			s, gen := sharedSleepers.get()
			if !reflect.DeepEqual(s, NewSleeper(Exact)) {
				t.Fatal("the shared sleeper is not fresh")
			}
			sharedSleepers.put(s, gen)
			tickerStartsAs(t, NewSleeper(Exact), "NewTicker's sleeper is not fresh")
			Sleep(50 * time.Microsecond)
			if got, want := warn.String(), envWarning(c.path, c.msg); got != want {
				t.Fatalf("warned\n%q\nwant once\n%q", got, want)
			}
			if lit := "keeptime: KEEPTIME_PROFILE=" + missing + ": reading the profile: open " + missing +
				": no such file or directory; keeptime's own sleepers start fresh\n"; c.name == "missing" && warn.String() != lit {
				t.Fatalf("warned %q, want %q", warn.String(), lit)
			}
		})
	}
}

// Concurrent first sleeps load the profile once, and each starts from what
// that load left.
func TestEnvProfileIsReadOnceByConcurrentFirstSleeps(t *testing.T) {
	good, p := hostProfileFile(t)
	missing := filepath.Join(t.TempDir(), "missing.profile")
	for _, path := range []string{good, missing} {
		warn := envTest(t, path)
		want := NewSleeper(Exact)
		if path == good {
			want = startedFrom(t, p)
		}
		var wg sync.WaitGroup
		ready := make(chan struct{})
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-ready
				// As Sleep borrows; none is given back, so each is new.
				if s, _ := sharedSleepers.get(); !reflect.DeepEqual(s, want) {
					t.Error("a first shared sleeper did not start from the one load's result")
				}
			}()
		}
		close(ready)
		wg.Wait()
		Sleep(20 * time.Microsecond)
		if path == missing {
			_, err := LoadProfile(missing)
			if got, want := warn.String(), envWarning(missing, err.Error()); got != want {
				t.Fatalf("warned\n%q\nwant once\n%q", got, want)
			}
		} else if warn.Len() != 0 {
			t.Fatalf("a good profile was warned about: %q", warn)
		}
	}
}

// The program's choice, made before the first sleep, wins: the variable is
// never read.
func TestSetDefaultProfileBeforeTheFirstSleepWins(t *testing.T) {
	warn := envTest(t, filepath.Join(t.TempDir(), "missing.profile"))
	SetDefaultProfile(nil)
	if s, _ := sharedSleepers.get(); !reflect.DeepEqual(s, NewSleeper(Exact)) {
		t.Fatal("after SetDefaultProfile(nil), the shared sleeper is not fresh")
	}
	Sleep(50 * time.Microsecond)
	tickerStartsAs(t, NewSleeper(Exact), "after SetDefaultProfile(nil), NewTicker's sleeper is not fresh")
	if warn.Len() != 0 {
		t.Fatalf("KEEPTIME_PROFILE was read after SetDefaultProfile(nil): %q", warn)
	}

	good, _ := hostProfileFile(t)
	warn = envTest(t, good)
	mine := learnedProfile(t)
	SetDefaultProfile(mine)
	if s, _ := sharedSleepers.get(); !reflect.DeepEqual(s, startedFrom(t, mine)) {
		t.Fatal("the shared sleeper did not start from the program's profile")
	}
	tickerStartsAs(t, startedFrom(t, mine), "NewTicker's sleeper did not start from the program's profile")
	if warn.Len() != 0 {
		t.Fatalf("warned: %q", warn)
	}
}

// KEEPTIME_PROFILE empty or unset: nothing read, nothing said.
func TestEmptyEnvProfileIsNone(t *testing.T) {
	for _, unset := range []bool{false, true} {
		warn := envTest(t, "")
		if unset {
			os.Unsetenv(profileEnv) // t.Setenv puts it back
		}
		if s, _ := sharedSleepers.get(); !reflect.DeepEqual(s, NewSleeper(Exact)) {
			t.Fatal("the shared sleeper is not fresh")
		}
		tickerStartsAs(t, NewSleeper(Exact), "NewTicker's sleeper is not fresh")
		if warn.Len() != 0 || sharedSleepers.start != nil {
			t.Fatalf("something was read: %q", warn)
		}
	}
}

// A later SetDefaultProfile replaces the environment's profile as any
// change does, and the variable is not read again.
func TestSetDefaultProfileReplacesTheEnvProfile(t *testing.T) {
	good, p := hostProfileFile(t)
	warn := envTest(t, good)
	s, gen := sharedSleepers.get()
	if !reflect.DeepEqual(s, startedFrom(t, p)) {
		t.Fatal("the first shared sleeper was not started from KEEPTIME_PROFILE's profile")
	}
	sharedSleepers.put(s, gen)

	t.Setenv(profileEnv, filepath.Join(t.TempDir(), "missing.profile"))
	mine := learnedProfile(t)
	SetDefaultProfile(mine)
	if next, _ := sharedSleepers.get(); next == s || !reflect.DeepEqual(next, startedFrom(t, mine)) {
		t.Fatal("after SetDefaultProfile, the shared sleeper is not started from the program's profile")
	}
	SetDefaultProfile(nil)
	if next, _ := sharedSleepers.get(); !reflect.DeepEqual(next, NewSleeper(Exact)) {
		t.Fatal("after SetDefaultProfile(nil), the shared sleeper is not fresh")
	}
	tickerStartsAs(t, NewSleeper(Exact), "after SetDefaultProfile(nil), NewTicker's sleeper is not fresh")
	if warn.Len() != 0 {
		t.Fatalf("KEEPTIME_PROFILE was read again: %q", warn)
	}
}

// tickerStartsAs fails with msg unless a ticker made now by NewTicker
// waits with a sleeper equal to want.
func tickerStartsAs(t *testing.T, want *Sleeper, msg string) {
	t.Helper()
	tk, err := NewTicker(time.Millisecond, Skip)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(unclocked(tk.sleeper), *want) {
		t.Fatal(msg)
	}
}
