# `keeptime report`: one self-contained HTML page of bench results.
#
# test-report (in make test, ~1 min after the first build): a real short bench
# (a few samples per cell, two durations), the page it writes, and a two-file
# page side by side with different durations, each checked in headless
# Chromium: no console errors, no network, the expected number of charts,
# axis labels and a drawn series per method in each (the first run also has a
# --crowd 2 table), a non-blank screenshot,
# no overflow at phone width. Debian's chromium is installed when missing
# (apt-get, as root); playwright-core (pinned in package-lock.json) only
# drives it and never downloads a browser.
#
# report-screenshot: a default bench on this machine (release build, about
# 55 s), its page, and docs/report.png (the picture in docs/report.md) from it.

REPORT_NODE_DIR := crates/keeptime-cli/tests/browser
REPORT_TEST_DIR := $(CURDIR)/target/report-test
REPORT_SHOT_DIR := $(CURDIR)/target/report-shot
REPORT_BENCH_ARGS ?=
# Two charts per duration; the default bench has four durations.
REPORT_SHOT_CHARTS ?= 8
KEEPTIME_DEV = $(CARGO) run --locked -q -p keeptime-cli --
KEEPTIME_REL = $(CARGO) run --release --locked -q -p keeptime-cli --

TEST_TARGETS += test-report
.PHONY: test-report report-screenshot report-deps

report-deps:
	@test -x /usr/bin/chromium || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }
	@command -v node >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm; }
	@test -f $(REPORT_NODE_DIR)/node_modules/playwright-core/package.json || \
		(cd $(REPORT_NODE_DIR) && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)

test-report: report-deps
	rm -rf $(REPORT_TEST_DIR) && mkdir -p $(REPORT_TEST_DIR)
	$(KEEPTIME_DEV) bench -q --samples 30 --warmup 5 --durations 1ms,100us --crowd 2 \
		--export-json $(REPORT_TEST_DIR)/a.json --report $(REPORT_TEST_DIR)/a.html > $(REPORT_TEST_DIR)/a.txt
	grep -q '<table class="crowd">' $(REPORT_TEST_DIR)/a.html
	$(KEEPTIME_DEV) bench -q --samples 30 --warmup 5 --durations 1ms,20us \
		--export-json $(REPORT_TEST_DIR)/b.json > $(REPORT_TEST_DIR)/b.txt
	$(KEEPTIME_DEV) report $(REPORT_TEST_DIR)/a.json $(REPORT_TEST_DIR)/b.json -o $(REPORT_TEST_DIR)/ab.html
	cd $(REPORT_NODE_DIR) && node check-report.mjs $(REPORT_TEST_DIR)/a.html 4 $(REPORT_TEST_DIR)/a.png
	# 1 ms is shared (2 charts side by side), then each file's 2 durations x 2.
	cd $(REPORT_NODE_DIR) && node check-report.mjs $(REPORT_TEST_DIR)/ab.html 10 $(REPORT_TEST_DIR)/ab.png

report-screenshot: report-deps
	mkdir -p $(REPORT_SHOT_DIR) docs
	$(KEEPTIME_REL) bench -q $(REPORT_BENCH_ARGS) --export-json $(REPORT_SHOT_DIR)/bench.json \
		--report $(REPORT_SHOT_DIR)/report.html | tee $(REPORT_SHOT_DIR)/bench.txt
	cd $(REPORT_NODE_DIR) && node check-report.mjs $(REPORT_SHOT_DIR)/report.html $(REPORT_SHOT_CHARTS) \
		$(REPORT_SHOT_DIR)/view.png $(CURDIR)/docs/report.png
	@echo "report: $(REPORT_SHOT_DIR)/report.html; picture: docs/report.png ($$(stat -c %s docs/report.png) bytes)"
