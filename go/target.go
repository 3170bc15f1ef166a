package keeptime

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The tail target: the share of Exact sleeps a Sleeper lets end late, its
// presets, and its parsing.

// TailTarget is the share of Exact sleeps a Sleeper lets end late because
// the OS woke the thread after the deadline. For each sleep keeptime picks
// the plan with the least expected CPU (one OS wait then a spin, a long
// wait plus a short one then a spin, or a pure spin) whose late share,
// predicted from this machine's learned wake-ups, meets the target. A
// stricter target spins longer; see the README for what each preset costs.
//
// It is held in parts per million. The presets are TailRelaxed (5 %),
// TailBalanced (1 %, the default) and TailStrict (0.1 %); NewTailTarget and
// ParseTailTarget make others and reject what is out of range, never
// clamping. The zero TailTarget stands for TailBalanced.
type TailTarget struct {
	ppm uint32
}

var (
	// TailRelaxed lets 5 % of sleeps end late: the cheapest preset.
	TailRelaxed = TailTarget{ppm: 50_000}
	// TailBalanced lets 1 % of sleeps end late (the default): a spin-level p99.
	TailBalanced = TailTarget{ppm: 10_000}
	// TailStrict lets 0.1 % of sleeps end late: a spin-level p99.9, at a
	// higher CPU price.
	TailStrict = TailTarget{ppm: 1_000}
)

// ErrInvalidTailTarget is returned (wrapped) for a tail target outside
// (0, 1), NaN, or below the resolution of 10⁻⁶ (an error, not rounded up).
var ErrInvalidTailTarget = errors.New("keeptime: tail target must be a share strictly between 0 and 1, at least 0.000001")

// NewTailTarget returns the target for a share in [10⁻⁶, 1), e.g. 0.01 for
// 1 %; the share is rounded to parts per million. NaN, shares below 10⁻⁶
// (the resolution: an error, never rounded up) or >= 1, and shares that
// round above 1 − 10⁻⁶ return an error wrapping ErrInvalidTailTarget.
func NewTailTarget(share float64) (TailTarget, error) {
	if !(share >= 1e-6 && share < 1) {
		return TailTarget{}, fmt.Errorf("%w (got %v)", ErrInvalidTailTarget, share)
	}
	p := math.Round(share * 1e6)
	if p < 1 || p > 999_999 {
		return TailTarget{}, fmt.Errorf("%w (got %v)", ErrInvalidTailTarget, share)
	}
	return TailTarget{ppm: uint32(p)}, nil
}

// ParseTailTarget parses "relaxed", "balanced" (or "default"), "strict"
// (any case), a share such as "0.01", or a percentage such as "1%". Anything
// else, and shares NewTailTarget rejects, return an error wrapping
// ErrInvalidTailTarget.
func ParseTailTarget(s string) (TailTarget, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "relaxed":
		return TailRelaxed, nil
	case "balanced", "default":
		return TailBalanced, nil
	case "strict":
		return TailStrict, nil
	}
	scale := 1.0
	if p, ok := strings.CutSuffix(t, "%"); ok {
		t, scale = strings.TrimSpace(p), 100
	}
	share, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return TailTarget{}, fmt.Errorf("%w (got %q; or relaxed, balanced, strict)", ErrInvalidTailTarget, s)
	}
	target, err := NewTailTarget(share / scale)
	if err != nil {
		return TailTarget{}, fmt.Errorf("%w (got %q)", ErrInvalidTailTarget, s)
	}
	return target, nil
}

// Share returns the target as a share, e.g. 0.01.
func (t TailTarget) Share() float64 { return float64(t.PPM()) / 1e6 }

// PPM returns the target in parts per million (1 to 999 999).
func (t TailTarget) PPM() uint32 {
	if t.ppm == 0 {
		return TailBalanced.ppm
	}
	return t.ppm
}

// String returns the target as a percentage, e.g. "1%".
func (t TailTarget) String() string {
	return strconv.FormatFloat(float64(t.PPM())/1e4, 'f', -1, 64) + "%"
}
