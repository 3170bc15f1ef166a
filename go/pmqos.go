package keeptime

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"log"
	"os"
	"sync"
	"syscall"
)

// The process-wide, reference-counted PM QoS CPU latency request behind the
// idle-latency hint (spec/idle-hint.md). The kernel keeps a request on
// /dev/cpu_dma_latency exactly as long as the file is open, so the holder
// opens it for the first live hint, writes the strictest live value
// whenever that changes, and closes it when the last hint is released.

// pmqosDevicePath is the PM QoS CPU latency device.
const pmqosDevicePath = "/dev/cpu_dma_latency"

// pmqosRequest is one open request on the device.
type pmqosRequest interface {
	// write makes us (µs) the request's value.
	write(us int32) error
	// close ends the request.
	close() error
}

// pmqosDevice opens requests: the real device file, or a fake in tests.
type pmqosDevice interface {
	open() (pmqosRequest, error)
}

// pmqosFile is a PM QoS device at a path.
type pmqosFile struct{ path string }

type pmqosOpenFile struct {
	f    *os.File
	path string
}

func (d pmqosFile) open() (pmqosRequest, error) {
	f, err := os.OpenFile(d.path, os.O_WRONLY, 0)
	if err != nil {
		return nil, refusal(d.path, "open", err)
	}
	return &pmqosOpenFile{f: f, path: d.path}, nil
}

// write writes the value as one native-endian s32, as cyclictest does: the
// device takes a 4-byte write as a binary value.
func (o *pmqosOpenFile) write(us int32) error {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], uint32(us))
	if _, err := o.f.Write(b[:]); err != nil {
		return refusal(o.path, "write", err)
	}
	return nil
}

func (o *pmqosOpenFile) close() error { return o.f.Close() }

// IdleHintError says why an idle-latency hint was refused: the device could
// not be opened or written. It unwraps to the OS's error, so
// errors.Is(err, fs.ErrPermission) and errors.Is(err, fs.ErrNotExist) work.
type IdleHintError struct {
	// Path is the device, /dev/cpu_dma_latency.
	Path string
	// Op is what failed: "open" or "write".
	Op string
	// Err is the OS's error.
	Err error
}

// Error names the device and the reason: "no such device", "permission
// denied (writing it needs root or write access to the device)", or the
// OS's message.
func (e *IdleHintError) Error() string {
	var why string
	switch {
	case errors.Is(e.Err, fs.ErrNotExist) || errors.Is(e.Err, syscall.ENODEV) || errors.Is(e.Err, syscall.ENXIO):
		why = "no such device (no PM QoS CPU latency interface here)"
	case errors.Is(e.Err, fs.ErrPermission):
		why = "permission denied (writing it needs root or write access to the device)"
	default:
		var pe *fs.PathError
		msg := e.Err
		if errors.As(e.Err, &pe) {
			msg = pe.Err // the path is named already
		}
		why = e.Op + " failed: " + msg.Error()
	}
	return "keeptime: idle-latency hint refused: " + e.Path + ": " + why
}

// Unwrap returns the OS's error.
func (e *IdleHintError) Unwrap() error { return e.Err }

func refusal(path, op string, err error) error {
	return &IdleHintError{Path: path, Op: op, Err: err}
}

// pmqosHolder is the reference-counted holder of one device. The process
// uses one (pmqos()); tests make their own with a fake device.
type pmqosHolder struct {
	dev pmqosDevice
	// warn says, once per holder (once per process for the process's
	// holder), that a hint was refused.
	warn func(error)

	mu      sync.Mutex
	req     pmqosRequest // nil while no hint is live
	values  map[uint64]int32
	nextID  uint64
	written int32 // the value in force, while req != nil
	warned  bool
}

func newPmqosHolder(dev pmqosDevice, warn func(error)) *pmqosHolder {
	return &pmqosHolder{dev: dev, warn: warn, values: map[uint64]int32{}}
}

var (
	processPmqosOnce sync.Once
	processPmqos     *pmqosHolder
)

// pmqos is the process's holder of /dev/cpu_dma_latency; refusals are
// logged once per process with the standard log package.
func pmqos() *pmqosHolder {
	processPmqosOnce.Do(func() {
		processPmqos = newPmqosHolder(pmqosFile{path: pmqosDevicePath}, func(err error) {
			log.Printf("%v; sleeping without the idle-latency hint (said once per process)", err)
		})
	})
	return processPmqos
}

// idleHold is one live hint. It is allocated on its own, referenced only by
// the sleeper that asked, so its finalizer (the backstop for a sleeper
// dropped without Close) runs once that sleeper is unreachable.
type idleHold struct {
	h  *pmqosHolder
	id uint64
	us int32

	once sync.Once
	err  error
}

// acquire adds a hint for at most us µs (0 ≤ us, validated by IdleHint): it
// opens the device if no hint is live and writes the value if it is
// stricter than the one in force. On error nothing is held, and the first
// refusal of this holder is warned about.
func (h *pmqosHolder) acquire(us int32) (*idleHold, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	openedNow := false
	if h.req == nil {
		req, err := h.dev.open()
		if err != nil {
			return nil, h.refused(err)
		}
		h.req, openedNow = req, true
	}
	if openedNow || us < h.written {
		if err := h.req.write(us); err != nil {
			if openedNow {
				_ = h.req.close()
				h.req = nil
			}
			return nil, h.refused(err)
		}
		h.written = us
	}
	id := h.nextID
	h.nextID++
	h.values[id] = us
	return &idleHold{h: h, id: id, us: us}, nil
}

// refused warns about err the first time; the caller holds h.mu.
func (h *pmqosHolder) refused(err error) error {
	if !h.warned {
		h.warned = true
		if h.warn != nil {
			h.warn(err)
		}
	}
	return err
}

// inForce is the value written to the open device, ok false while no hint
// is live.
func (h *pmqosHolder) inForce() (us int32, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.written, h.req != nil
}

// holders is the number of live hints.
func (h *pmqosHolder) holders() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.values)
}

// release ends this hint (once; later calls return the first result). The
// last one closes the device, which ends the kernel's request; otherwise
// the strictest remaining value is written if it differs from the one in
// force (a failed relaxation leaves the stricter value: still safe).
func (d *idleHold) release() error {
	d.once.Do(func() { d.err = d.h.release(d.id) })
	return d.err
}

func (h *pmqosHolder) release(id uint64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.values[id]; !ok {
		return nil
	}
	delete(h.values, id)
	if len(h.values) == 0 {
		err := h.req.close()
		h.req, h.written = nil, 0
		return err
	}
	strictest, first := int32(0), true
	for _, v := range h.values {
		if first || v < strictest {
			strictest, first = v, false
		}
	}
	if strictest != h.written && h.req.write(strictest) == nil {
		h.written = strictest
	}
	return nil
}
