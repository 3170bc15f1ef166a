package keeptime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// pmqosUnconstrainedMicros is what the device reads when nobody constrains
// CPU latency: the kernel's PM_QOS_CPU_LATENCY_DEFAULT_VALUE, 2000 s in µs.
const pmqosUnconstrainedMicros = 2_000_000_000

// IdleLatencyReport is the machine's CPU idle states and PM QoS CPU latency
// request, as they bear on the idle-latency hint (see IdleHint): what
// InspectIdleLatency and InspectClocks report. Nothing is changed to find
// it out.
type IdleLatencyReport struct {
	// Driver is the cpuidle driver (/sys/devices/system/cpu/cpuidle/current_driver):
	// "none" (idle CPUs poll or halt, no exit latency to cap), "haltpoll",
	// "intel_idle", "acpi_idle", …; empty when there is no cpuidle interface.
	Driver string `json:"driver,omitempty"`
	// Governor is the cpuidle governor ("menu", "teo", "haltpoll", …).
	Governor string `json:"governor,omitempty"`
	// InForceMicros is the CPU latency bound in force system-wide, µs, read
	// from /dev/cpu_dma_latency (4 bytes, a native-endian s32);
	// 2000000000 means unconstrained. Nil when it could not be read.
	InForceMicros *int32 `json:"in_force_us"`
	// ReadError says why InForceMicros could not be read.
	ReadError string `json:"read_error,omitempty"`
	// MayRequest says whether this process may hold a request: write access
	// to the device, checked with the effective ids without opening it.
	MayRequest bool `json:"may_request"`
	// RequestRefused says, when it may not, which permission it lacks (or
	// that there is no device).
	RequestRefused string `json:"request_refused,omitempty"`
	// Device is the device's permission bits and owner; nil when it does
	// not exist (or off Linux).
	Device *DeviceAccess `json:"device"`
	// EUID is this process's effective uid; nil off Linux.
	EUID *uint32 `json:"euid"`
	// Groups are this process's effective gid and supplementary groups.
	Groups []uint32 `json:"groups,omitempty"`
}

// DeviceAccess is a device's permission bits and owner.
type DeviceAccess struct {
	// Mode is the permission bits (0o600 for the usual root-only device).
	Mode uint32 `json:"mode"`
	// UID is the owner's uid.
	UID uint32 `json:"uid"`
	// GID is the group's gid.
	GID uint32 `json:"gid"`
}

// Unconstrained reports whether the value in force is the kernel's default
// (no process constrains CPU latency).
func (r IdleLatencyReport) Unconstrained() bool {
	return r.InForceMicros != nil && *r.InForceMicros >= pmqosUnconstrainedMicros
}

// InspectIdleLatency reports the cpuidle driver and governor, the PM QoS
// CPU latency value in force and whether this process may hold a request.
// It reads a few small files and takes well under a millisecond.
func InspectIdleLatency() IdleLatencyReport { return inspectIdleLatency("/") }

// inspectIdleLatency is InspectIdleLatency under another root directory
// (the tests' fake one).
func inspectIdleLatency(root string) IdleLatencyReport {
	cpuidle := filepath.Join(root, "sys/devices/system/cpu/cpuidle")
	device := filepath.Join(root, strings.TrimPrefix(pmqosDevicePath, "/"))
	r := IdleLatencyReport{
		Driver:   readTrimmed(filepath.Join(cpuidle, "current_driver")),
		Governor: readTrimmed(filepath.Join(cpuidle, "current_governor")),
	}
	if v, err := readPmqos(device); err == nil {
		r.InForceMicros = &v
	} else {
		r.ReadError = err.Error()
	}
	r.MayRequest, r.RequestRefused = mayHoldPmqos(device)
	r.Device, r.EUID, r.Groups = credentials(device)
	return r
}

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// readPmqos reads the value in force from a PM QoS device: one binary s32.
// (Opening the device adds a request at the kernel's default, which
// constrains nothing, and closing it ends that request.)
func readPmqos(path string) (int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, describeDeviceError(path, "read", err)
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return 0, describeDeviceError(path, "read", err)
	}
	return int32(binary.NativeEndian.Uint32(b[:])), nil
}

// describeDeviceError is one line naming the device and the reason; what
// is "read" or "write".
func describeDeviceError(path, what string, err error) error {
	gerund := map[string]string{"read": "reading", "write": "writing"}[what]
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.ENXIO):
		return fmt.Errorf("%s: no such device (no PM QoS CPU latency interface here)", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied (%s it needs root or %s access to the device)", path, gerund, what)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: cannot %s it: %v", path, what, err)
}

// lackedWritePermission says which permission a process with effective ids
// euid and egid (member of the device's group or not) lacks to write a
// device of the given mode and owner, and what would grant it.
func lackedWritePermission(path string, mode fs.FileMode, uid, gid, euid, egid uint32, inGroup bool) string {
	var class, bit string
	switch {
	case euid == uid:
		class, bit = "its owner", "u+w"
	case inGroup || egid == gid:
		class, bit = fmt.Sprintf("its group (gid %d)", gid), "g+w"
	default:
		class, bit = "others", "o+w"
	}
	return fmt.Sprintf("no write permission on %s (mode %v, owner uid %d, group gid %d): "+
		"this process (euid %d, egid %d) falls under %s, which lack %s; "+
		"holding the idle-latency hint needs root (CAP_DAC_OVERRIDE) or write access to the device",
		path, lsMode(mode), uid, gid, euid, egid, class, bit)
}

// lsMode is the mode as ls -l shows it: "crw-------" for a character device.
func lsMode(m fs.FileMode) string {
	kind := "-"
	switch {
	case m&fs.ModeCharDevice != 0:
		kind = "c"
	case m&fs.ModeDevice != 0:
		kind = "b"
	case m.IsDir():
		kind = "d"
	}
	return kind + m.Perm().String()[1:]
}
