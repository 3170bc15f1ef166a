package keeptime

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// spec/vectors/profile.json, replayed: every error case's code, line (and
// key), every loaded case's steps and final state.
func TestProfileVectors(t *testing.T) {
	var v struct {
		Constants struct {
			Buckets        uint64   `json:"BUCKETS"`
			Window         uint64   `json:"WINDOW"`
			Horizon        uint64   `json:"HORIZON"`
			MaxSampleNs    uint64   `json:"MAX_SAMPLE_NS"`
			Version        uint64   `json:"version"`
			CheckSharesPpm []uint64 `json:"check_shares_ppm"`
		} `json:"constants"`
		Machine map[string]string `json:"machine"`
		Cases   []struct {
			Name          string  `json:"name"`
			Text          *string `json:"text"`
			IgnoreMachine *bool   `json:"ignore_machine"`
			ExpectError   *struct {
				Code string  `json:"code"`
				Line int     `json:"line"`
				Key  *string `json:"key"`
			} `json:"expect_error"`
			Steps []estimatorStep `json:"steps"`
			Final *estimatorState `json:"final"`
		} `json:"cases"`
	}
	loadVectors(t, "profile.json", &v)
	k := v.Constants
	if got, want := [5]uint64{k.Buckets, k.Window, k.Horizon, k.MaxSampleNs, k.Version}, [5]uint64{buckets, window, horizon, maxSampleNs, ProfileVersion}; got != want {
		t.Fatalf("constants: vectors %v, Go %v", got, want)
	}
	if len(k.CheckSharesPpm) == 0 || len(v.Cases) == 0 {
		t.Fatal("no check_shares_ppm or no cases")
	}
	var here [7]string
	for i, key := range fingerprintKeys {
		val, ok := v.Machine[key]
		if !ok {
			t.Fatalf("machine: no %s", key)
		}
		here[i] = val
	}
	if len(v.Machine) != len(fingerprintKeys) {
		t.Fatalf("machine: %d keys, want %d", len(v.Machine), len(fingerprintKeys))
	}
	machine := fingerprintOf(here)
	loaded, refused := 0, 0
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Text == nil { // an estimator case: observed one by one
				if c.Final == nil {
					t.Fatal("no text and no final")
				}
				var e estimator
				replayEstimatorSteps(t, &e, c.Steps, k.CheckSharesPpm)
				if got := stateOf(&e, k.CheckSharesPpm); !reflect.DeepEqual(got, *c.Final) {
					t.Errorf("final state\n got %+v\nwant %+v", got, *c.Final)
				}
				return
			}
			if c.IgnoreMachine == nil {
				t.Fatal("no ignore_machine")
			}
			p, err := ParseProfile([]byte(*c.Text), IgnoreMachine())
			if err == nil && !*c.IgnoreMachine {
				err = p.CheckMachine(machine)
			}
			if x := c.ExpectError; x != nil {
				refused++
				var pe *ProfileError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v, want a *ProfileError %s at line %d", err, x.Code, x.Line)
				}
				if string(pe.Code) != x.Code || pe.Line != x.Line {
					t.Errorf("error %s at line %d (%v), want %s at line %d", pe.Code, pe.Line, pe, x.Code, x.Line)
				}
				if x.Key != nil && pe.Key != *x.Key || x.Key == nil && pe.Key != "" {
					t.Errorf("error key %q, want %v", pe.Key, fmtKey(x.Key))
				}
				if strings.Contains(pe.Error(), "\n") {
					t.Errorf("message has more than one line: %q", pe.Error())
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if c.Final == nil {
				t.Fatal("neither expect_error nor final")
			}
			loaded++
			e := p.estimator()
			replayEstimatorSteps(t, e, c.Steps, k.CheckSharesPpm)
			if got := stateOf(e, k.CheckSharesPpm); !reflect.DeepEqual(got, *c.Final) {
				t.Errorf("final state\n got %+v\nwant %+v", got, *c.Final)
			}
		})
	}
	if loaded == 0 || refused == 0 {
		t.Fatalf("vectors loaded %d and refused %d profiles", loaded, refused)
	}
}

func fmtKey(k *string) string {
	if k == nil {
		return "none"
	}
	return fmt.Sprintf("%q", *k)
}

// testMachine is "this machine" of the tests below.
var testMachine = Fingerprint{"AuthenticAMD", "AMD EPYC", "2", "KVM", "haltpoll", "tsc", "6.18.44"}

// A sleeper's profile, written and parsed back, starts a new sleeper that
// answers every query as the first did, and sleeps the same on the same
// simulated wake-ups.
func TestProfileRoundTrip(t *testing.T) {
	sim := newSim(1_000_000)
	sim.defaultOvershoot = 30_000
	first := newSleeperOn(sim, Exact)
	var overs []uint64
	for i := uint64(0); i < 3000; i++ {
		overs = append(overs, 2_000+(i*7_919)%60_000)
	}
	sim.overshoots = overs
	for i := 0; i < 600; i++ {
		d := []uint64{250_000, 1_000_000, 2_500_000, 10_000_000}[i%4]
		first.sleepUntilNs(sim.now() + d)
	}
	first.est.observe(40_000, 300_000) // a young bucket, one outlier
	p := profileOf(&first.est, testMachine)
	text, err := p.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseProfile(text, IgnoreMachine())
	if err != nil {
		t.Fatalf("own profile refused: %v\n%s", err, text)
	}
	if !reflect.DeepEqual(back, p) {
		t.Fatal("parsed profile differs from the written one")
	}
	if err := back.CheckMachine(testMachine); err != nil {
		t.Fatal(err)
	}
	next := newSleeperOn(newSim(0), Exact)
	if err := next.UseProfile(back); err != nil {
		t.Fatal(err)
	}
	a, b := &first.est, &next.est
	if b.seq != 0 {
		t.Fatalf("loaded seq %d, want 0", b.seq)
	}
	live := 0
	for k := 0; k < buckets; k++ {
		if a.liveSamples(k) != b.liveSamples(k) || a.cost(k) != b.cost(k) || a.compensation(k) != b.compensation(k) {
			t.Errorf("bucket %d: live %d/%d, cost %d/%d, compensation %d/%d", k,
				a.liveSamples(k), b.liveSamples(k), a.cost(k), b.cost(k), a.compensation(k), b.compensation(k))
		}
		live += a.liveSamples(k)
		for _, share := range []uint64{50_000, 10_000, 5_000, 1_000} {
			if a.margin(k, share) != b.margin(k, share) || a.samples(k, share) != b.samples(k, share) ||
				a.established(k, share) != b.established(k, share) {
				t.Errorf("bucket %d at %d ppm: margin %d/%d", k, share, a.margin(k, share), b.margin(k, share))
			}
			for _, g := range []uint64{5_000, 20_000, 40_000, 70_000} {
				if a.tail(k, share, g) != b.tail(k, share, g) {
					t.Errorf("bucket %d at %d ppm: tail(%d) %+v/%+v", k, share, g, a.tail(k, share, g), b.tail(k, share, g))
				}
				w1, r1 := a.splitCounts(k, share, g/2, g)
				w2, r2 := b.splitCounts(k, share, g/2, g)
				if w1 != w2 || r1 != r2 {
					t.Errorf("bucket %d at %d ppm: splitCounts(%d) differ", k, share, g)
				}
			}
		}
	}
	if live == 0 || len(p.sections) < 2 || len(p.costs) == 0 {
		t.Fatalf("round trip of a near-empty model: %d live samples, %d sections, %d costs", live, len(p.sections), len(p.costs))
	}
	// Loaded, the next sleeper's first plans are the first sleeper's plans
	// (at its own seq, so the same exploration step).
	for _, rem := range []uint64{250_000, 1_000_000, 2_500_000, 10_000_000} {
		step := planStep{first: true}
		p1, ok1 := planExact(a, rem, 10_000, 0, step)
		p2, ok2 := planExact(b, rem, 10_000, 0, step)
		if p1 != p2 || ok1 != ok2 {
			t.Errorf("plan for %d ns: %+v %v / %+v %v", rem, p1, ok1, p2, ok2)
		}
	}
	// A sleeper that has slept refuses a profile and keeps its model.
	before := first.est.seq
	if err := first.UseProfile(back); !errors.Is(err, ErrSleeperHasSlept) {
		t.Errorf("UseProfile on a sleeper that slept: %v, want ErrSleeperHasSlept", err)
	}
	if first.est.seq != before {
		t.Error("a refused profile changed the sleeper")
	}
	// Before its first sleep, a second profile replaces the first.
	fresh := NewSleeper(Exact)
	if err := fresh.UseProfile(profileOf(new(estimator), testMachine)); err != nil {
		t.Fatal(err)
	}
	if err := fresh.UseProfile(back); err != nil || fresh.est.liveSamples(bucketOf(1_000_000)) != a.liveSamples(bucketOf(1_000_000)) {
		t.Errorf("second profile: %v", err)
	}
	if err := next.UseProfile(nil); err == nil {
		t.Error("UseProfile(nil) succeeded")
	}
}

// A profile made on another machine is refused with the first differing
// key and both values, and loads with IgnoreMachine; LoadProfile names the
// file.
func TestProfileMachineMismatch(t *testing.T) {
	var e estimator
	e.observe(900_000, 20_000)
	e.observeCost(900_000, 9_000)
	other := testMachine
	other.CPUsOnline, other.Clocksource = "4", "hpet"
	p := profileOf(&e, other)
	err := p.CheckMachine(testMachine)
	var pe *ProfileError
	if !errors.As(err, &pe) {
		t.Fatalf("CheckMachine: %v, want a *ProfileError", err)
	}
	if pe.Code != ProfileMachineMismatch || pe.Line != 4 || pe.Key != "cpus_online" || pe.InProfile != "4" || pe.Here != "2" {
		t.Errorf("mismatch %+v", pe)
	}
	want := `keeptime: profile: line 4: made on another machine: cpus_online is "4" in the profile, "2" here (load it anyway with keeptime.IgnoreMachine())`
	if pe.Error() != want {
		t.Errorf("message\n got %s\nwant %s", pe.Error(), want)
	}

	// Through a file, against this machine: a profile claiming another
	// kernel is refused, and loads with IgnoreMachine.
	here := MachineFingerprint()
	foreign := here
	foreign.KernelRelease = here.KernelRelease + "-other"
	path := filepath.Join(t.TempDir(), "host.profile")
	if err := profileOf(&e, foreign).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	_, err = LoadProfile(path)
	if !errors.As(err, &pe) || pe.Code != ProfileMachineMismatch || pe.Key != "kernel_release" || pe.File != path || pe.Line != 8 {
		t.Fatalf("LoadProfile of a foreign profile: %v", err)
	}
	if !strings.HasPrefix(pe.Error(), "keeptime: "+path+": line 8: made on another machine: kernel_release is ") {
		t.Errorf("message %q", pe.Error())
	}
	loaded, err := LoadProfile(path, IgnoreMachine())
	if err != nil {
		t.Fatalf("LoadProfile with IgnoreMachine: %v", err)
	}
	if loaded.Machine() != foreign || loaded.Samples()[bucketOf(900_000)] != 1 {
		t.Errorf("loaded %+v, samples %v", loaded.Machine(), loaded.Samples())
	}
	s := NewSleeper(Exact)
	if err := s.UseProfile(loaded); err != nil {
		t.Fatal(err)
	}
	if s.est.cost(bucketOf(900_000)) != 9_000 {
		t.Errorf("loaded cost %d", s.est.cost(bucketOf(900_000)))
	}
	// This machine's own profile loads without the opt-out.
	if err := profileOf(&e, here).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProfile(path); err != nil {
		t.Errorf("this machine's profile refused: %v", err)
	}
	if _, err := LoadProfile(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
}

// A profile cut anywhere, at a line's end or inside a line, is refused as
// truncated (never loaded, never another code); only the final line break
// may be missing.
func TestProfileCutAnywhereIsTruncated(t *testing.T) {
	var e estimator
	for i := uint64(0); i < 40; i++ {
		e.observe(60_000, 3_000+i*500)
		e.observe(190_000, 12_345+i*1_000)
	}
	e.observe(9_000_000, 80_000)
	e.observeCost(60_000, 2_400)
	e.observeCost(9_000_000, 3_300)
	text, _ := profileOf(&e, testMachine).MarshalText()
	lines := bytes.Count(text, []byte("\n"))
	cuts := 0
	for n := 0; n < len(text)-1; n++ {
		_, err := ParseProfile(text[:n], IgnoreMachine())
		var pe *ProfileError
		if !errors.As(err, &pe) || pe.Code != ProfileTruncated {
			t.Fatalf("cut after %d bytes (%q): %v, want truncated", n, text[max(0, n-20):n], err)
		}
		// The cut line when it does not read as a whole line, the next
		// one when it does ("640000 14" of "640000 14336").
		wantLine := bytes.Count(text[:n], []byte("\n")) + 1
		atLineEnd := n == 0 || text[n-1] == '\n'
		if pe.Line != wantLine && (atLineEnd || pe.Line != wantLine+1) {
			t.Errorf("cut after %d bytes: line %d, want %d", n, pe.Line, wantLine)
		}
		if n > 0 && text[n-1] == '\n' {
			cuts++
		}
	}
	if cuts != lines-1 {
		t.Fatalf("cut at %d line ends, want %d", cuts, lines-1)
	}
	for _, whole := range [][]byte{text, text[:len(text)-1]} {
		if _, err := ParseProfile(whole, IgnoreMachine()); err != nil {
			t.Errorf("whole profile refused: %v", err)
		}
	}
}

// Errors the vectors cannot hold (bytes that are not UTF-8), and messages.
func TestProfileErrorsNameLineAndExpectation(t *testing.T) {
	base, _ := profileOf(new(estimator), testMachine).MarshalText()
	cases := []struct {
		text    string
		code    ProfileErrorCode
		line    int
		message string
	}{
		{"keeptime-profile 1\n\xff\n", ProfileNotText, 2, "keeptime: profile: line 2: not a profile: the text is not UTF-8"},
		{"keeptime-profile 1\ncpu_vendor Authentic\xe9AMD\n", ProfileNotText, 2, ""},
		{"\xc0\x80", ProfileNotText, 1, ""},
		{"hello", ProfileNotAProfile, 1, `keeptime: profile: line 1: not a keeptime profile: expected the header "keeptime-profile 1", found "hello"`},
		{"keeptime-profile ", ProfileTruncated, 1, ""},
		{"keeptime-profile 12", ProfileUnsupportedVersion, 1, ""},
		{"", ProfileTruncated, 1, `keeptime: profile: line 1: the profile ends here, cut short: expected the header "keeptime-profile 1"`},
		{strings.Replace(string(base), "end\n", "bucket 6 2\n640000 5000\n", 1), ProfileTruncated, 11,
			`keeptime: profile: line 11: the profile ends here, cut short: expected sample 2 of 2 of bucket 6, "WAIT_NS OVERSHOOT_NS"`},
		{strings.Replace(string(base), "end\n", "bucket 6 1\n640000 5e3\nend\n", 1), ProfileBadNumber, 10,
			`keeptime: profile: line 10: expected an overshoot in ns (a whole number), found "5e3"`},
		{strings.Replace(string(base), "end\n", "bucket 6 1\n640000 9223372036854775808\nend\n", 1), ProfileBadNumber, 10, ""},
		{strings.Replace(string(base), "end\n", "bucket 6 1\n640000 9223372036854775807\nend\n", 1), "", 0, ""},
		{strings.Replace(string(base), "end\n", "bucket 6 1\n1280000 5000\nend\n", 1), ProfileBadBucket, 10,
			`keeptime: profile: line 10: a wait of 1280000 ns is in bucket 7, not in this section's bucket 6`},
		{strings.Replace(string(base), "end\n", "cost 1 2\ncost 3 4\nend\n", 1), ProfileBadBucket, 10, ""},
		{strings.Replace(string(base), "end\n", "bucket 6 1\n64", 1), ProfileTruncated, 10, ""},
		{strings.Replace(string(base), "cpu_model AMD EPYC", "cpu_model "+strings.Repeat("x", 100), 1) + "end\n", ProfileAfterEnd, 10,
			`keeptime: profile: line 10: nothing may follow "end", found "end"`},
		{strings.Replace(string(base), "cpu_model AMD EPYC", "cpu_model", 1), ProfileBadLine, 3,
			`keeptime: profile: line 3: expected the machine's "cpu_model VALUE", found "cpu_model"`},
		{strings.Replace(string(base), "end\n", strings.Repeat("y", 70)+"\nend\n", 1), ProfileBadLine, 9,
			`keeptime: profile: line 9: expected a "bucket B N" section, a "cost WAIT_NS CPU_NS" line or "end", found "` + strings.Repeat("y", 60) + `"…`},
	}
	for i, c := range cases {
		p, err := ParseProfile([]byte(c.text), IgnoreMachine())
		if c.code == "" {
			if err != nil || p == nil {
				t.Errorf("case %d: %v", i, err)
			}
			continue
		}
		var pe *ProfileError
		if !errors.As(err, &pe) || pe.Code != c.code || pe.Line != c.line {
			t.Errorf("case %d (%q): %v, want %s at line %d", i, c.text, err, c.code, c.line)
			continue
		}
		if c.message != "" && pe.Error() != c.message {
			t.Errorf("case %d message\n got %s\nwant %s", i, pe.Error(), c.message)
		}
	}
}

// The fingerprint's CPU vendor is the first processor's, vendor_id on x86
// and the CPU implementer elsewhere; values no line can hold are "-".
func TestFingerprintValues(t *testing.T) {
	x86 := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n"
	arm := "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n\nprocessor\t: 1\nCPU implementer\t: 0x51\n"
	for text, want := range map[string]string{x86: "AuthenticAMD", arm: "0x41", "": ""} {
		if got := parseCPUVendor(text); got != want {
			t.Errorf("parseCPUVendor = %q, want %q", got, want)
		}
	}
	for v, want := range map[string]string{"": "-", " x": "-", "a\nb": "-", "a\r": "-", "AMD EPYC": "AMD EPYC"} {
		if got := fingerprintValue(v); got != want {
			t.Errorf("fingerprintValue(%q) = %q, want %q", v, got, want)
		}
	}
	for i, v := range MachineFingerprint().values() {
		if v != fingerprintValue(v) {
			t.Errorf("this machine's %s is %q, which no profile line holds", fingerprintKeys[i], v)
		}
	}
}
