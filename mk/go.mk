# The Go module in go/: a native, pure-Go keeptime (no cgo).
#
#   make test-go    gofmt, go vet (also for a non-Linux target, so the
#                   fallback keeps compiling) and the tests under the race
#                   detector, spec vectors included (-race needs cgo's C
#                   compiler, which the Rust build needs as a linker anyway)
#   make bench-go   time.Sleep, unix.Nanosleep, a busy loop and keeptime,
#                   side by side on this machine, with the keeptime rows'
#                   tail target and sleeper stats (see go/README.md); e.g.
#                   GO_BENCH_ARGS='--tail-target strict' or
#                   GO_BENCH_ARGS='--methods busy-loop,keeptime-relaxed,keeptime,keeptime-strict'
#                   (keeptime-spin and keeptime-efficient are methods too);
#                   then the crowd rows (16 goroutines x 1 ms, time.Sleep vs
#                   keeptime), e.g. GO_BENCH_ARGS='--crowd-only --idle-hint 0'
#                   (adds keeptime holding the idle-latency hint) or '--crowd 0'
#
# Works on a fresh machine: `go mod download` fetches golang.org/x/sys from
# the module proxy.

GO ?= go
GO_BENCH_ARGS ?=

.PHONY: test-go bench-go

TEST_TARGETS += test-go

test-go:
	cd go && $(GO) mod download
	cd go && unformatted="$$("$$($(GO) env GOROOT)/bin/gofmt" -l .)" && \
	  { test -z "$$unformatted" || { echo "gofmt needed: $$unformatted"; exit 1; }; }
	cd go && $(GO) vet ./...
	cd go && GOOS=darwin $(GO) vet ./... && GOOS=windows GOARCH=amd64 $(GO) build ./...
	cd go && $(GO) test -race -count=1 ./...
	cd go && $(GO) test -count=1 -tags keeptime_fallback .

bench-go:
	cd go && $(GO) run ./cmd/keeptime-bench $(GO_BENCH_ARGS)
