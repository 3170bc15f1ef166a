//go:build !linux

package keeptime

// mayHoldPmqos: the PM QoS CPU latency device exists only on Linux.
func mayHoldPmqos(path string) (bool, string) {
	return false, path + ": no such device (the PM QoS CPU latency interface is Linux's)"
}

// credentials: nothing to report off Linux.
func credentials(string) (*DeviceAccess, *uint32, []uint32) { return nil, nil, nil }
