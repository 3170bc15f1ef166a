# The C library (crates/keeptime-c): libkeeptime.a, libkeeptime.so, keeptime.h.
#
#   make c-lib                    build target/release/libkeeptime.{a,so}
#   make install PREFIX=/usr/local   header, libraries, keeptime.pc, CMake package
#   make test-c                   header freshness, C tests, examples via pkg-config and CMake
#   make c-header                 regenerate crates/keeptime-c/include/keeptime.h (cbindgen)
#   make c-asan / c-valgrind      the C tests under AddressSanitizer+UBSan / valgrind
#   make bench-c                  nanosleep, a compensated nanosleep, a spin and keeptime's waits, with targets
#                                 (C_BENCH_ARGS="--tail-target strict" for another target)

C_DIR       := crates/keeptime-c
C_HEADER    := $(C_DIR)/include/keeptime.h
C_VERSION   := $(shell sed -n 's/^version = "\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
C_SOVERSION := 0
C_TARGET    := $(abspath $(or $(CARGO_TARGET_DIR),target)/release)
C_BUILD     := $(abspath $(or $(CARGO_TARGET_DIR),target)/c)
C_STAGE     := $(C_BUILD)/prefix
C_CFLAGS    := -std=c99 -Wall -Wextra -Werror -pedantic -g
# What the Rust standard library inside libkeeptime.a needs on Linux
# (`cargo rustc -p keeptime-c -- --print native-static-libs`).
C_STATIC_LIBS := -lpthread -ldl -lm -lrt -lutil -lgcc_s
C_TEST_SRCS := $(wildcard $(C_DIR)/tests/*.c)
C_TEST_DEFS := -DKT_SPEC_DIR='"$(CURDIR)/spec"' -DKT_EXPECTED_VERSION='"$(C_VERSION)"'
# cbindgen's output differs between versions; the checked-in header is this one's.
# A bench result must follow spec/bench-result.md (and its schema).
C_CHECK_BENCH := python3 $(C_DIR)/tests/check_bench_result.py
CBINDGEN_VERSION := 0.29.4
CBINDGEN := $(shell cbindgen --version 2>/dev/null | grep -qx 'cbindgen $(CBINDGEN_VERSION)' \
	&& echo cbindgen || echo $(C_BUILD)/tools/bin/cbindgen)

C_BENCH_ARGS ?=

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DESTDIR    ?=

TEST_TARGETS += test-c

.PHONY: c-setup c-lib c-header c-header-check c-header-compiles c-tests c-examples test-c install \
	c-asan c-valgrind bench-c

# Tools: cbindgen (pinned, built unoptimised under target/c/tools if the one on PATH
# differs), a C compiler, cmake and pkg-config (apt, when root and missing).
c-setup:
	@[ -x "$$(command -v $(CBINDGEN) || true)" ] || \
		$(CARGO) install cbindgen --locked --debug --version $(CBINDGEN_VERSION) --root $(C_BUILD)/tools
	@missing=""; for tool in cc cmake pkg-config; do \
		command -v $$tool >/dev/null || missing="$$missing $$tool"; done; \
	if [ -n "$$missing" ]; then \
		echo "c-setup: installing$$missing"; \
		apt-get update -qq && apt-get install -y -qq gcc cmake pkg-config >/dev/null; fi

c-lib:
	$(CARGO) build --release --locked -p keeptime-c

c-header: c-setup
	cd $(C_DIR) && $(CBINDGEN) --quiet --config cbindgen.toml --crate keeptime-c --output include/keeptime.h

# The checked-in header must be what cbindgen makes of the current source.
c-header-check: c-setup
	@mkdir -p $(C_BUILD)
	cd $(C_DIR) && $(CBINDGEN) --quiet --config cbindgen.toml --crate keeptime-c \
		--output $(C_BUILD)/keeptime.h.fresh
	@diff -u $(C_HEADER) $(C_BUILD)/keeptime.h.fresh || \
		{ echo "c-header-check: $(C_HEADER) is stale; run 'make c-header' and commit it"; exit 1; }
	@echo "c-header-check: $(C_HEADER) is up to date"

# The header compiles alone as C99 (pedantic) and as C++.
c-header-compiles:
	@mkdir -p $(C_BUILD)
	printf '#include <keeptime.h>\nint main(void) { return kt_version() == 0; }\n' > $(C_BUILD)/header.c
	$(CC) $(C_CFLAGS) -I$(C_DIR)/include -fsyntax-only $(C_BUILD)/header.c
	$(CXX) -std=c++11 -Wall -Wextra -Werror -pedantic -I$(C_DIR)/include -fsyntax-only -x c++ $(C_BUILD)/header.c

# The C tests, linked with the static library (the .so is used by the examples).
c-tests: c-lib c-header-compiles
	@mkdir -p $(C_BUILD)
	$(CC) $(C_CFLAGS) -O1 -I$(C_DIR)/include $(C_TEST_DEFS) $(C_TEST_SRCS) \
		$(C_TARGET)/libkeeptime.a $(C_STATIC_LIBS) -o $(C_BUILD)/keeptime-tests
	$(C_BUILD)/keeptime-tests

install: c-lib
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(LIBDIR)/cmake/keeptime
	install -m 644 $(C_HEADER) $(DESTDIR)$(INCLUDEDIR)/keeptime.h
	install -m 644 $(C_TARGET)/libkeeptime.a $(DESTDIR)$(LIBDIR)/libkeeptime.a
	install -m 755 $(C_TARGET)/libkeeptime.so $(DESTDIR)$(LIBDIR)/libkeeptime.so.$(C_VERSION)
	ln -sf libkeeptime.so.$(C_VERSION) $(DESTDIR)$(LIBDIR)/libkeeptime.so.$(C_SOVERSION)
	ln -sf libkeeptime.so.$(C_SOVERSION) $(DESTDIR)$(LIBDIR)/libkeeptime.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(C_VERSION)|' -e 's|@STATIC_LIBS@|$(C_STATIC_LIBS)|' \
		-e "s|@URL@|$$(sed -n 's/^repository = "\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)|" \
		$(C_DIR)/pkg/keeptime.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/keeptime.pc
	cmake_dir=$(LIBDIR)/cmake/keeptime; \
	rel_lib=$$(realpath -m --relative-to=$$cmake_dir $(LIBDIR)); \
	rel_inc=$$(realpath -m --relative-to=$$cmake_dir $(INCLUDEDIR)); \
	major=$$(echo $(C_VERSION) | cut -d. -f1); minor=$$(echo $(C_VERSION) | cut -d. -f2); \
	sed -e "s|@REL_LIBDIR@|$$rel_lib|" -e "s|@REL_INCLUDEDIR@|$$rel_inc|" \
		-e 's|@VERSION@|$(C_VERSION)|' -e 's|@SOVERSION@|$(C_SOVERSION)|' \
		$(C_DIR)/pkg/keeptimeConfig.cmake.in > $(DESTDIR)$$cmake_dir/keeptimeConfig.cmake; \
	sed -e 's|@VERSION@|$(C_VERSION)|' -e "s|@VERSION_MAJOR@|$$major|" -e "s|@VERSION_MINOR@|$$minor|" \
		-e "s|@SIZEOF_VOID_P@|$$(getconf LONG_BIT | awk '{print $$1/8}')|" \
		$(C_DIR)/pkg/keeptimeConfigVersion.cmake.in > $(DESTDIR)$$cmake_dir/keeptimeConfigVersion.cmake
	@echo "installed libkeeptime $(C_VERSION) under $(DESTDIR)$(PREFIX)"

# The examples, built the way a user would against an installed copy (a fresh
# prefix under target/c): plain cc + pkg-config, and CMake find_package.
c-examples: c-lib
	rm -rf $(C_STAGE) $(C_BUILD)/examples
	$(MAKE) --no-print-directory install PREFIX=$(C_STAGE)
	@mkdir -p $(C_BUILD)/examples/cc
	export PKG_CONFIG_PATH=$(C_STAGE)/lib/pkgconfig; \
	test "$$(pkg-config --modversion keeptime)" = "$(C_VERSION)"; \
	for ex in hello ticker bench; do \
		$(CC) $(C_CFLAGS) -O2 examples/c/$$ex.c $$(pkg-config --cflags --libs keeptime) -lm \
			-o $(C_BUILD)/examples/cc/$$ex; done
	readelf -d $(C_BUILD)/examples/cc/hello | grep -q 'NEEDED.*\[libkeeptime\.so\.$(C_SOVERSION)\]'
	LD_LIBRARY_PATH=$(C_STAGE)/lib $(C_BUILD)/examples/cc/hello
	LD_LIBRARY_PATH=$(C_STAGE)/lib $(C_BUILD)/examples/cc/ticker 200
	LD_LIBRARY_PATH=$(C_STAGE)/lib $(C_BUILD)/examples/cc/bench --samples 30 --warmup 10 \
		--json $(C_BUILD)/examples/bench-smoke.json >/dev/null
	$(C_CHECK_BENCH) $(C_BUILD)/examples/bench-smoke.json $(CURDIR)/spec
	cmake -S examples/c -B $(C_BUILD)/examples/cmake -DCMAKE_PREFIX_PATH=$(C_STAGE) \
		-DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null
	cmake --build $(C_BUILD)/examples/cmake >/dev/null
	$(C_BUILD)/examples/cmake/hello
	$(C_BUILD)/examples/cmake/hello_static
	$(C_BUILD)/examples/cmake/ticker 200
	@echo "c-examples: built against $(C_STAGE) with pkg-config and with CMake, and ran"

test-c: c-setup
	$(MAKE) --no-print-directory c-header-check
	$(MAKE) --no-print-directory c-tests
	$(MAKE) --no-print-directory c-examples

# The C tests under AddressSanitizer + UndefinedBehaviorSanitizer (the C side
# is instrumented; every allocation, Rust's included, goes through ASan's malloc).
c-asan: c-lib
	@mkdir -p $(C_BUILD)
	$(CC) $(C_CFLAGS) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
		-I$(C_DIR)/include $(C_TEST_DEFS) $(C_TEST_SRCS) \
		$(C_TARGET)/libkeeptime.a $(C_STATIC_LIBS) -o $(C_BUILD)/keeptime-tests-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$(C_BUILD)/keeptime-tests-asan

c-valgrind: c-tests
	@command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
	valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		$(C_BUILD)/keeptime-tests

# Benchmark, not a test: see crates/keeptime-c/README.md. Builds against the
# library directly (static) so it measures what a C program gets.
bench-c: c-lib
	@mkdir -p $(C_BUILD)
	$(CC) -std=c99 -O2 -Wall -Wextra -I$(C_DIR)/include examples/c/bench.c \
		$(C_TARGET)/libkeeptime.a $(C_STATIC_LIBS) -o $(C_BUILD)/bench
	$(CARGO) build --release --locked -q -p keeptime-c --example core_call
	$(C_BUILD)/bench $(C_BENCH_ARGS) --json $(C_BUILD)/bench-c.json
	$(C_CHECK_BENCH) $(C_BUILD)/bench-c.json $(CURDIR)/spec
	@echo "call cost, C library vs the Rust core called directly, alternating (5 rounds each):"
	@for round in 1 2 3 4 5; do \
		$(C_BUILD)/bench --calls-only; $(C_TARGET)/examples/core_call; done
