//go:build linux

package keeptime

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// mayHoldPmqos checks write access to the device with the effective ids
// (faccessat with AT_EACCESS), without opening it (opening would add a
// request), and when denied says which permission is lacking.
func mayHoldPmqos(path string) (bool, string) {
	err := unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS)
	if err == nil {
		return true, ""
	}
	if !errors.Is(err, fs.ErrPermission) {
		return false, describeDeviceError(path, "write", &fs.PathError{Op: "access", Path: path, Err: err}).Error()
	}
	fi, serr := os.Stat(path)
	if serr != nil {
		return false, describeDeviceError(path, "write", err).Error()
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false, describeDeviceError(path, "write", err).Error()
	}
	groups, _ := os.Getgroups()
	inGroup := slices.Contains(groups, int(st.Gid))
	return false, lackedWritePermission(path, fi.Mode(), st.Uid, st.Gid,
		uint32(os.Geteuid()), uint32(os.Getegid()), inGroup)
}

// credentials are the device's mode and owner (nil when it cannot be
// read) and this process's effective uid, effective gid and supplementary
// groups.
func credentials(path string) (*DeviceAccess, *uint32, []uint32) {
	var dev *DeviceAccess
	var st unix.Stat_t
	if unix.Stat(path, &st) == nil {
		dev = &DeviceAccess{Mode: st.Mode & 0o7777, UID: st.Uid, GID: st.Gid}
	}
	euid, egid := uint32(os.Geteuid()), uint32(os.Getegid())
	groups := []uint32{egid}
	if gs, err := os.Getgroups(); err == nil {
		for _, g := range gs {
			if uint32(g) != egid {
				groups = append(groups, uint32(g))
			}
		}
	}
	return dev, &euid, groups
}
