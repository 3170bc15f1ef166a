//go:build !linux

package main

import "time"

// Off Linux there is no thread CPU clock or timer slack here: CPU figures
// are reported as 0 and nanosleep falls back to time.Sleep.

func threadCPUNs() uint64 { return 0 }

func timerSlackNs() (uint64, bool) { return 0, false }

func setTimerSlackNs(uint64) {}

func nanosleepWaiter(_ time.Time, d time.Duration) { time.Sleep(d) }

func processCPUNs() (uint64, bool) { return 0, false }
