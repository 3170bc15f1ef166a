# The C# library (dotnet/): KeepTime.dll, P/Invoke over libkeeptime, built with
# Mono's mcs (C# 7) and tested with NUnit 2.6 on Mono.
#
#   make test-dotnet    installs mono-devel and nunit-console with apt-get if
#                       missing, builds libkeeptime, KeepTime.dll and the NUnit
#                       suite, and runs it (spec vectors, never early, disposal,
#                       cancellation, bad input, 1000 concurrent delays; ~1 min)
#   make bench-dotnet   the C# bench: every way of waiting in .NET against
#                       a keeptime Sleeper and KeepTime.Delay (~1-2 min), writing
#                       target/dotnet/bench-dotnet.json (spec/bench-result.md)
#                       DOTNET_BENCH_ARGS="--scale 0.25" for a quicker, noisier run,
#                       "--warmup N" for N warm-up waits per cell (--help).
#
# dotnet/src/KeepTime/KeepTime.csproj is for .NET SDK users; it is not built here.

DOTNET_DIR    := dotnet
DOTNET_BUILD  := $(abspath $(or $(CARGO_TARGET_DIR),target)/dotnet)
DOTNET_SRCS   := $(wildcard $(DOTNET_DIR)/src/KeepTime/*.cs)
DOTNET_TESTS  := $(wildcard $(DOTNET_DIR)/tests/KeepTime.Tests/*.cs)
# The child process of EnvProfileTests (KEEPTIME_PROFILE is read once per process).
DOTNET_ENV_CHILD := $(wildcard $(DOTNET_DIR)/tests/EnvProfileChild/*.cs)
DOTNET_BENCH  := $(wildcard $(DOTNET_DIR)/bench/*.cs)
# The bench's pieces the NUnit suite tests, compiled into it too: the warm-up
# rule, the command line, the methods and the cells (one waiter per cell).
# They use only System and KeepTime.dll.
DOTNET_BENCH_TESTED := $(addprefix $(DOTNET_DIR)/bench/,WarmupRule.cs BenchArgs.cs Methods.cs Cells.cs)
# csc-compatible flags; C# 7 is what Mono's mcs speaks.
MCS_FLAGS     := -langversion:7 -optimize+ -debug -warnaserror+ -nologo
NUNIT_LIB     := /usr/lib/cli/nunit.framework-2.6.3/nunit.framework.dll
DOTNET_BENCH_ARGS ?=

TEST_TARGETS += test-dotnet

.PHONY: dotnet-setup dotnet-lib test-dotnet bench-dotnet

# mcs, mono and nunit-console from Debian (as root, non-interactive).
dotnet-setup:
	@if ! command -v mcs >/dev/null || ! command -v nunit-console >/dev/null || [ ! -f $(NUNIT_LIB) ]; then \
		echo "dotnet-setup: installing mono-devel and nunit-console"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mono-devel nunit-console >/dev/null; fi

# KeepTime.dll beside libkeeptime.so and KeepTime.dll.config (Mono's dllmap).
dotnet-lib: dotnet-setup c-lib
	@mkdir -p $(DOTNET_BUILD)
	mcs $(MCS_FLAGS) -target:library -doc:$(DOTNET_BUILD)/KeepTime.xml -out:$(DOTNET_BUILD)/KeepTime.dll $(DOTNET_SRCS)
	cp $(DOTNET_DIR)/src/KeepTime/KeepTime.dll.config $(DOTNET_BUILD)/
	cp $(C_TARGET)/libkeeptime.so $(DOTNET_BUILD)/

# nunit-console exits with the number of failed tests: a failure fails make.
# -domain:None runs the suite in the process's own AppDomain: keeptime's waiter
# thread, once it has called into Mono, lives until the process ends, and Mono
# cannot unload a domain such a thread has run in.
test-dotnet: dotnet-lib
	mcs $(MCS_FLAGS) -target:library -r:$(DOTNET_BUILD)/KeepTime.dll -r:$(NUNIT_LIB) \
		-out:$(DOTNET_BUILD)/KeepTime.Tests.dll $(DOTNET_TESTS) $(DOTNET_BENCH_TESTED)
	mcs $(MCS_FLAGS) -target:exe -r:$(DOTNET_BUILD)/KeepTime.dll \
		-out:$(DOTNET_BUILD)/keeptime-env-child.exe $(DOTNET_ENV_CHILD)
	cp $(NUNIT_LIB) $(DOTNET_BUILD)/
	cd $(DOTNET_BUILD) && KEEPTIME_SPEC_DIR=$(CURDIR)/spec nunit-console -nologo -noshadow -domain:None \
		-labels -xml=$(DOTNET_BUILD)/TestResult.xml KeepTime.Tests.dll

bench-dotnet: dotnet-lib
	mcs $(MCS_FLAGS) -target:exe -r:$(DOTNET_BUILD)/KeepTime.dll -out:$(DOTNET_BUILD)/keeptime-bench.exe $(DOTNET_BENCH)
	mono --optimize=all $(DOTNET_BUILD)/keeptime-bench.exe $(DOTNET_BENCH_ARGS) --json $(DOTNET_BUILD)/bench-dotnet.json
	$(C_CHECK_BENCH) $(DOTNET_BUILD)/bench-dotnet.json $(CURDIR)/spec csharp
