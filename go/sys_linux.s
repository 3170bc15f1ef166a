//go:build linux && !keeptime_fallback

// Empty: its presence lets sys_linux.go declare the runtime functions it
// reaches through go:linkname (entersyscallblock, exitsyscall) without bodies.
