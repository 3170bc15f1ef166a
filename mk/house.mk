# The house check (tools/check_house.py): no issue numbers, seed document
# names, absolute paths, commit hashes or citations of files the repository
# does not have, in any tracked code, make file, spec or README; relative
# Markdown links must resolve. It prints FILE:LINE: KIND for each finding and
# fails. Its self-test runs first: the patterns on the strings of
# tools/check_house_cases.json (data: the lines it must flag), exact results.
# Then the circle check (tools/check_circles.py): no two modules of a Rust
# crate import each other, directly or through others; it prints each circle
# with the lines that make it and fails. Its self-test runs first too.
#
#   make test-house    both self-tests, then the whole tree (about a second)

HOUSE_CHECK := python3 tools/check_house.py
CIRCLE_CHECK := python3 tools/check_circles.py

TEST_TARGETS += test-house

.PHONY: test-house

test-house:
	$(HOUSE_CHECK) --self-test
	$(HOUSE_CHECK)
	$(CIRCLE_CHECK) --self-test
	$(CIRCLE_CHECK)
