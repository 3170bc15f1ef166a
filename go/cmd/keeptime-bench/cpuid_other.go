//go:build !amd64

package main

func hypervisorFromCPUID() string { return "" }
