package keeptime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Host profiles (spec/estimator.md, "Profile"): what an earlier run on this
// machine learned, in a small text file, so that a new Sleeper starts from
// it instead of from nothing. spec/vectors/profile.json pins the format, the
// errors and the loading; the Rust core and the Java library read and write
// the same files.

// ProfileVersion is the profile format's version this package reads and writes.
const ProfileVersion = 1

// profileMagic is the first word of a profile's first line.
const profileMagic = "keeptime-profile"

// maxProfileNumber is the largest number a profile may hold (2^63 − 1, every
// runtime's signed 64-bit integer).
const maxProfileNumber = 1<<63 - 1

// fingerprintKeys are the fingerprint's keys, in file order.
var fingerprintKeys = [7]string{
	"cpu_vendor", "cpu_model", "cpus_online", "virtualization",
	"cpuidle_driver", "clocksource", "kernel_release",
}

// A Fingerprint is what identifies a machine to a wake-up model: the seven
// values of spec/estimator.md ("Machine fingerprint"), as strings. "-"
// stands for a value that could not be read (for Virtualization: no
// hypervisor seen). Two machines are the same to a profile when all seven
// are equal.
type Fingerprint struct {
	// CPUVendor is vendor_id of the first processor in /proc/cpuinfo
	// ("AuthenticAMD"), or its "CPU implementer" where there is none.
	CPUVendor string
	// CPUModel is MachineInfo.CPUModel.
	CPUModel string
	// CPUsOnline is MachineInfo.CPUsOnline in decimal.
	CPUsOnline string
	// Virtualization is MachineInfo.Virtualization's hypervisor.
	Virtualization string
	// CPUIdleDriver is MachineInfo.IdleDriver.
	CPUIdleDriver string
	// Clocksource is MachineInfo.Clocksource.
	Clocksource string
	// KernelRelease is MachineInfo.KernelRelease (uname -r).
	KernelRelease string
}

// MachineFingerprint is this machine's fingerprint, read as InspectClocks
// reads the machine (a few file reads and uname; nothing is measured). Off
// Linux every value is "-".
func MachineFingerprint() Fingerprint { return machineFingerprint() }

// values are the fingerprint's values in file order.
func (f Fingerprint) values() [7]string {
	return [7]string{f.CPUVendor, f.CPUModel, f.CPUsOnline, f.Virtualization, f.CPUIdleDriver, f.Clocksource, f.KernelRelease}
}

func fingerprintOf(v [7]string) Fingerprint {
	return Fingerprint{v[0], v[1], v[2], v[3], v[4], v[5], v[6]}
}

// fingerprintValue is v as a profile line holds it: "-" when unknown or
// when no line can hold it (empty, surrounding blanks, a line break).
func fingerprintValue(v string) string {
	if v == "" || strings.TrimSpace(v) != v || strings.ContainsAny(v, "\r\n") {
		return "-"
	}
	return v
}

// ProfileErrorCode is a profile error's code, as the spec's table and
// vectors name it.
type ProfileErrorCode string

// The codes of spec/estimator.md ("Errors").
const (
	// ProfileNotText: the file is not UTF-8.
	ProfileNotText ProfileErrorCode = "not_text"
	// ProfileNotAProfile: line 1 does not start with "keeptime-profile ".
	ProfileNotAProfile ProfileErrorCode = "not_a_profile"
	// ProfileUnsupportedVersion: a version other than ProfileVersion.
	ProfileUnsupportedVersion ProfileErrorCode = "unsupported_version"
	// ProfileBadLine: a line of the wrong shape.
	ProfileBadLine ProfileErrorCode = "bad_line"
	// ProfileBadNumber: a field that must be a number is not one, or
	// exceeds 2^63 − 1.
	ProfileBadNumber ProfileErrorCode = "bad_number"
	// ProfileBadBucket: a bucket out of range or order, a sample count
	// out of range, or a wait outside its section's bucket.
	ProfileBadBucket ProfileErrorCode = "bad_bucket"
	// ProfileTruncated: the text ends before "end" (or inside a line).
	ProfileTruncated ProfileErrorCode = "truncated"
	// ProfileAfterEnd: something follows "end".
	ProfileAfterEnd ProfileErrorCode = "after_end"
	// ProfileMachineMismatch: the profile was made on another machine.
	ProfileMachineMismatch ProfileErrorCode = "machine_mismatch"
)

// A ProfileError says why a profile was refused: its code, the 1-based
// line, and (for ProfileMachineMismatch) the fingerprint key and both
// values. Use errors.As to get it from LoadProfile's or ParseProfile's error.
// Its message is one line naming the file (when there is one), the line and
// what was expected there.
type ProfileError struct {
	// File is the profile's path ("" when it was parsed from bytes).
	File string
	// Line is the 1-based line the error is on.
	Line int
	// Code is the spec's code.
	Code ProfileErrorCode
	// Key, InProfile and Here are, for ProfileMachineMismatch, the first
	// fingerprint key whose value differs, the profile's value and this
	// machine's; "" otherwise.
	Key, InProfile, Here string
	detail               string
}

func (e *ProfileError) Error() string {
	var b strings.Builder
	b.WriteString("keeptime: ")
	if e.File != "" {
		b.WriteString(e.File)
	} else {
		b.WriteString("profile")
	}
	fmt.Fprintf(&b, ": line %d: %s", e.Line, e.detail)
	return b.String()
}

func profileErr(code ProfileErrorCode, line int, format string, args ...any) *ProfileError {
	return &ProfileError{Line: line, Code: code, detail: fmt.Sprintf(format, args...)}
}

// ErrSleeperHasSlept is returned (wrapped) by Sleeper.UseProfile on a
// sleeper that has already slept: a profile is loaded only into a fresh model.
var ErrSleeperHasSlept = errors.New("keeptime: a profile is loaded only into a sleeper that has not slept")

// profileSection is one bucket's remembered wake-ups, oldest first.
type profileSection struct {
	bucket  int
	samples [][2]uint64 // wait_ns, overshoot_ns
}

// A Profile is a host profile: the machine it was made on, per OS-wait
// bucket its last wake-ups, and per bucket the cost of an OS wait
// (spec/estimator.md, "Profile"). A sleeper started from one (UseProfile)
// answers as it would after the profile's wake-ups, then learns and forgets
// as any sleeper does: the profile saves the hundreds to thousands of sleeps
// a fresh sleeper needs before its margins settle. Write one from a sleeper
// that has run a while on this machine (Sleeper.Profile, WriteFile) or with
// `keeptime trace --profile FILE`; load it in a later run:
//
//	p, err := keeptime.LoadProfile("host.profile") // refused if made on another machine
//	if err != nil {
//		var pe *keeptime.ProfileError
//		if errors.As(err, &pe) && pe.Code == keeptime.ProfileMachineMismatch {
//			log.Printf("profile from another machine (%s): starting fresh", pe.Key)
//		}
//	}
//	s := keeptime.NewSleeper(keeptime.Exact)
//	if p != nil {
//		_ = s.UseProfile(p) // before the sleeper's first sleep
//	}
//	t, _ := keeptime.NewTickerWith(s, time.Millisecond, keeptime.Skip) // the ticker starts from it too
//	keeptime.SetDefaultProfile(p) // Sleep, SleepUntil and NewTicker start from it too (nil: fresh)
//
// A Profile is immutable once made and safe for concurrent use.
type Profile struct {
	machine  Fingerprint
	sections []profileSection
	costs    [][2]uint64 // wait_ns, cpu_ns; buckets ascending
}

// A ProfileOption changes how a profile is loaded.
type ProfileOption func(*profileOptions)

type profileOptions struct{ ignoreMachine bool }

// IgnoreMachine loads a profile whichever machine made it: the fingerprint
// comparison is skipped, every other check still applies.
func IgnoreMachine() ProfileOption {
	return func(o *profileOptions) { o.ignoreMachine = true }
}

// LoadProfile reads the profile at path and checks that it was made on this
// machine (MachineFingerprint), unless IgnoreMachine is given. A bad,
// truncated or foreign profile is a *ProfileError naming the file and the
// line; nothing is loaded anywhere. An unreadable file is the os error,
// wrapped.
func LoadProfile(path string, opts ...ProfileOption) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keeptime: reading the profile: %w", err)
	}
	p, err := loadProfile(data, opts)
	if err != nil {
		var pe *ProfileError
		if errors.As(err, &pe) {
			pe.File = path
		}
		return nil, err
	}
	return p, nil
}

// ParseProfile parses a profile's bytes and checks that it was made on this
// machine (MachineFingerprint), unless IgnoreMachine is given; errors are
// *ProfileError. To check against another fingerprint, parse with
// IgnoreMachine and call CheckMachine.
func ParseProfile(data []byte, opts ...ProfileOption) (*Profile, error) {
	return loadProfile(data, opts)
}

// ReadProfile is ParseProfile of everything r holds.
func ReadProfile(r io.Reader, opts ...ProfileOption) (*Profile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("keeptime: reading the profile: %w", err)
	}
	return loadProfile(data, opts)
}

func loadProfile(data []byte, opts []ProfileOption) (*Profile, error) {
	var o profileOptions
	for _, opt := range opts {
		opt(&o)
	}
	p, perr := parseProfile(data)
	if perr != nil {
		return nil, perr
	}
	if !o.ignoreMachine {
		if err := p.CheckMachine(MachineFingerprint()); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// CheckMachine reports whether the profile was made on the machine here:
// nil when all seven fingerprint values are equal, else a *ProfileError
// (ProfileMachineMismatch) naming the first key that differs, in file
// order, and both values.
func (p *Profile) CheckMachine(here Fingerprint) error {
	mine, theirs := p.machine.values(), here.values()
	for i, k := range fingerprintKeys {
		if mine[i] != theirs[i] {
			e := profileErr(ProfileMachineMismatch, 2+i,
				"made on another machine: %s is %q in the profile, %q here (load it anyway with keeptime.IgnoreMachine())",
				k, mine[i], theirs[i])
			e.Key, e.InProfile, e.Here = k, mine[i], theirs[i]
			return e
		}
	}
	return nil
}

// Machine is the fingerprint of the machine the profile was made on.
func (p *Profile) Machine() Fingerprint { return p.machine }

// Samples is the number of wake-ups the profile holds for each OS-wait
// bucket (0 for a bucket it has none of; at most 1024).
func (p *Profile) Samples() [buckets]int {
	var n [buckets]int
	for _, s := range p.sections {
		n[s.bucket] = len(s.samples)
	}
	return n
}

// estimator is a fresh estimator with the profile loaded (spec/estimator.md,
// "Loading"): each section's samples observed, then each cost, with no
// sleep begun; then every remembered sample is marked loaded, each bucket
// noting its own margin at staleSharePpm (a stale bucket keeps its own).
func (p *Profile) estimator() *estimator {
	e := new(estimator)
	for _, s := range p.sections {
		for _, x := range s.samples {
			e.observe(x[0], x[1])
		}
	}
	for _, c := range p.costs {
		e.observeCost(c[0], c[1])
	}
	e.markLoaded()
	return e
}

// profileOf is the profile of what e remembers, made on machine
// (spec/estimator.md, "Writing", from a sleeper): each live bucket's samples
// oldest first, as the bucket's shortest wait and the sample's bin's lower
// edge, then each bucket's own learned cost.
func profileOf(e *estimator, machine Fingerprint) *Profile {
	p := &Profile{machine: machine}
	for b := 0; b < buckets; b++ {
		h := &e.buckets[b]
		w := bucketLo(b)
		if n := e.liveSamples(b); n > 0 {
			start := 0
			if n == window {
				start = h.next // a full ring's oldest sample is overwritten next
			}
			s := profileSection{bucket: b, samples: make([][2]uint64, n)}
			for i := range s.samples {
				s.samples[i] = [2]uint64{w, binLo(int(h.ring[(start+i)%window]))}
			}
			p.sections = append(p.sections, s)
		}
		if h.hasCost {
			p.costs = append(p.costs, [2]uint64{w, h.cost})
		}
	}
	return p
}

// MarshalText is the profile's text (spec/estimator.md, "Format"), ending in
// a line break.
func (p *Profile) MarshalText() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %d\n", profileMagic, ProfileVersion)
	for i, v := range p.machine.values() {
		fmt.Fprintf(&b, "%s %s\n", fingerprintKeys[i], v)
	}
	for _, s := range p.sections {
		fmt.Fprintf(&b, "bucket %d %d\n", s.bucket, len(s.samples))
		for _, x := range s.samples {
			fmt.Fprintf(&b, "%d %d\n", x[0], x[1])
		}
	}
	for _, c := range p.costs {
		fmt.Fprintf(&b, "cost %d %d\n", c[0], c[1])
	}
	b.WriteString("end\n")
	return b.Bytes(), nil
}

// WriteTo writes the profile's text to w.
func (p *Profile) WriteTo(w io.Writer) (int64, error) {
	text, _ := p.MarshalText()
	n, err := w.Write(text)
	return int64(n), err
}

// WriteFile writes the profile's text to the file at path (created or
// truncated, mode 0644).
func (p *Profile) WriteFile(path string) error {
	text, _ := p.MarshalText()
	if err := os.WriteFile(path, text, 0o644); err != nil {
		return fmt.Errorf("keeptime: writing the profile: %w", err)
	}
	return nil
}

// Profile is a host profile of what this sleeper has learned, made on this
// machine: a sleeper started from it (UseProfile) answers every margin and
// cost as this one does now, its buckets ageing from its own first sleep.
//
//	s := keeptime.NewSleeper(keeptime.Exact)
//	for i := 0; i < 3000; i++ {
//		s.Sleep(time.Millisecond)
//	}
//	err := s.Profile().WriteFile("host.profile")
func (s *Sleeper) Profile() *Profile {
	return profileOf(&s.est, MachineFingerprint())
}

// WriteProfile writes Profile() to the file at path.
func (s *Sleeper) WriteProfile(path string) error {
	return s.Profile().WriteFile(path)
}

// UseProfile starts this sleeper from p: its model answers as it would
// after the profile's wake-ups, then learns and forgets as any sleeper's (a
// loaded wait length the sleeper does not use within 255 sleeps is
// forgotten; the first 256 sleeps still explore). LoadProfile has already
// refused a profile from another machine. Only a sleeper that has not slept
// takes a profile (a second one replaces the first): otherwise UseProfile
// returns an error wrapping ErrSleeperHasSlept and changes nothing. A Ticker
// made from this sleeper with NewTickerWith starts from the profile too.
func (s *Sleeper) UseProfile(p *Profile) error {
	if p == nil {
		return errors.New("keeptime: UseProfile needs a profile (got nil)")
	}
	if s.est.seq != 0 || s.waitsPlanned != 0 {
		return fmt.Errorf("%w (it has begun %d sleeps)", ErrSleeperHasSlept, s.est.seq)
	}
	s.est = *p.estimator() // a fresh estimator: an earlier profile is replaced
	return nil
}

// profileLines splits a profile's text into lines: separated by "\n", a
// "\r" ending a line dropped, a final "\n" ending the last line.
func profileLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if strings.HasSuffix(text, "\n") {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// parseProfile parses and checks everything but the machine. A last line
// with no line break after it that does not read as a whole line was cut
// inside it: the error is ProfileTruncated on that line.
func parseProfile(data []byte) (*Profile, *ProfileError) {
	if !utf8.Valid(data) {
		valid := 0
		for valid < len(data) {
			r, size := utf8.DecodeRune(data[valid:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			valid += size
		}
		return nil, profileErr(ProfileNotText, bytes.Count(data[:valid], []byte("\n"))+1,
			"not a profile: the text is not UTF-8")
	}
	text := string(data)
	ps := &profileParser{lines: profileLines(text)}
	p, err := ps.profile()
	if err == nil {
		return p, nil
	}
	last := len(ps.lines)
	cut := !strings.HasSuffix(text, "\n") && err.Line == last
	if cut {
		switch err.Code {
		case ProfileBadLine, ProfileBadNumber, ProfileBadBucket:
		case ProfileNotAProfile, ProfileUnsupportedVersion:
			// Line 1 alone: cut when it is a proper beginning of the header.
			header := fmt.Sprintf("%s %d", profileMagic, ProfileVersion)
			cut = len(ps.lines[0]) < len(header) && strings.HasPrefix(header, ps.lines[0])
		default:
			cut = false
		}
	}
	if cut {
		return nil, profileErr(ProfileTruncated, err.Line, "the profile ends inside this line, cut short: %s", err.detail)
	}
	return nil, err
}

// profileParser reads a profile's lines in order.
type profileParser struct {
	lines []string
	at    int // index of the next line
}

// next is the next line and its number, or ProfileTruncated expecting what.
func (ps *profileParser) next(what string) (int, string, *ProfileError) {
	n := ps.at + 1
	if ps.at >= len(ps.lines) {
		return n, "", profileErr(ProfileTruncated, n, "the profile ends here, cut short: expected %s", what)
	}
	ps.at++
	return n, ps.lines[ps.at-1], nil
}

// shown is a line or field as an error quotes it, shortened to 60 characters.
func shown(s string) string {
	if utf8.RuneCountInString(s) > 60 {
		r := []rune(s)
		return strconv.Quote(string(r[:60])) + "…"
	}
	return strconv.Quote(s)
}

func (ps *profileParser) profile() (*Profile, *ProfileError) {
	header := fmt.Sprintf("%q", fmt.Sprintf("%s %d", profileMagic, ProfileVersion))
	_, first, err := ps.next("the header " + header)
	if err != nil {
		return nil, err
	}
	version, ok := strings.CutPrefix(first, profileMagic+" ")
	if !ok {
		return nil, profileErr(ProfileNotAProfile, 1, "not a keeptime profile: expected the header %s, found %s", header, shown(first))
	}
	if version != strconv.Itoa(ProfileVersion) {
		return nil, profileErr(ProfileUnsupportedVersion, 1,
			"a profile of version %s; this keeptime reads version %d (write it again with this keeptime)", shown(version), ProfileVersion)
	}
	var values [7]string
	for i, key := range fingerprintKeys {
		n, line, err := ps.next("the machine's " + key + " line")
		if err != nil {
			return nil, err
		}
		v, ok := strings.CutPrefix(line, key+" ")
		if !ok || v == "" {
			return nil, profileErr(ProfileBadLine, n, "expected the machine's \"%s VALUE\", found %s", key, shown(line))
		}
		values[i] = v
	}
	p := &Profile{machine: fingerprintOf(values)}
	lastCostBucket := -1
	for {
		expected := `a "bucket B N" section, a "cost WAIT_NS CPU_NS" line or "end"`
		if len(p.costs) > 0 {
			expected = `a "cost WAIT_NS CPU_NS" line or "end"`
		}
		n, line, err := ps.next(expected)
		if err != nil {
			return nil, err
		}
		f := strings.Split(line, " ")
		switch {
		case len(f) == 1 && f[0] == "end":
			if ps.at < len(ps.lines) {
				return nil, profileErr(ProfileAfterEnd, ps.at+1, "nothing may follow \"end\", found %s", shown(ps.lines[ps.at]))
			}
			return p, nil
		case len(f) == 3 && f[0] == "bucket" && len(p.costs) == 0:
			s, err := ps.section(n, f[1], f[2], p.sections)
			if err != nil {
				return nil, err
			}
			p.sections = append(p.sections, s)
		case len(f) == 3 && f[0] == "cost":
			w, err := profileNumber(n, f[1], "a wait in ns")
			if err != nil {
				return nil, err
			}
			c, err := profileNumber(n, f[2], "a CPU time in ns")
			if err != nil {
				return nil, err
			}
			b := bucketOf(w)
			if b <= lastCostBucket {
				return nil, profileErr(ProfileBadBucket, n,
					"a cost for bucket %d after one for bucket %d: cost lines go in ascending bucket order, one per bucket", b, lastCostBucket)
			}
			lastCostBucket = b
			p.costs = append(p.costs, [2]uint64{w, c})
		default:
			return nil, profileErr(ProfileBadLine, n, "expected %s, found %s", expected, shown(line))
		}
	}
}

// section reads a section whose "bucket B N" line is line n, and its samples.
func (ps *profileParser) section(n int, bField, countField string, before []profileSection) (profileSection, *ProfileError) {
	b64, err := profileNumber(n, bField, "a bucket")
	if err != nil {
		return profileSection{}, err
	}
	count, err := profileNumber(n, countField, "a sample count")
	if err != nil {
		return profileSection{}, err
	}
	if b64 >= buckets {
		return profileSection{}, profileErr(ProfileBadBucket, n, "bucket %d does not exist: buckets are 0 to %d", b64, buckets-1)
	}
	b := int(b64)
	if len(before) > 0 && b <= before[len(before)-1].bucket {
		return profileSection{}, profileErr(ProfileBadBucket, n,
			"bucket %d after bucket %d: sections go in ascending bucket order, each once", b, before[len(before)-1].bucket)
	}
	if count == 0 || count > window {
		return profileSection{}, profileErr(ProfileBadBucket, n, "bucket %d with %d samples: expected 1 to %d", b, count, window)
	}
	s := profileSection{bucket: b, samples: make([][2]uint64, 0, count)}
	for k := uint64(1); k <= count; k++ {
		what := fmt.Sprintf(`sample %d of %d of bucket %d, "WAIT_NS OVERSHOOT_NS"`, k, count, b)
		m, line, err := ps.next(what)
		if err != nil {
			return profileSection{}, err
		}
		f := strings.Split(line, " ")
		if len(f) != 2 {
			return profileSection{}, profileErr(ProfileBadLine, m, "expected %s, found %s", what, shown(line))
		}
		w, err := profileNumber(m, f[0], "a wait in ns")
		if err != nil {
			return profileSection{}, err
		}
		o, err := profileNumber(m, f[1], "an overshoot in ns")
		if err != nil {
			return profileSection{}, err
		}
		if bucketOf(w) != b {
			return profileSection{}, profileErr(ProfileBadBucket, m,
				"a wait of %d ns is in bucket %d, not in this section's bucket %d", w, bucketOf(w), b)
		}
		s.samples = append(s.samples, [2]uint64{w, o})
	}
	return s, nil
}

// profileNumber is a field that must be a number: ASCII digits, at most
// 2^63 − 1.
func profileNumber(line int, field, what string) (uint64, *ProfileError) {
	digits := field != ""
	for i := 0; i < len(field) && digits; i++ {
		digits = '0' <= field[i] && field[i] <= '9'
	}
	if !digits {
		return 0, profileErr(ProfileBadNumber, line, "expected %s (a whole number), found %s", what, shown(field))
	}
	v, err := strconv.ParseUint(field, 10, 64)
	if err != nil || v > maxProfileNumber {
		return 0, profileErr(ProfileBadNumber, line, "expected %s (a whole number at most %d), found %s", what, uint64(maxProfileNumber), shown(field))
	}
	return v, nil
}
