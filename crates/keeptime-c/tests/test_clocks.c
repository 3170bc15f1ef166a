/* The clock report: a JSON string the caller frees, parsed back here. */
#include "harness.h"
#include "json.h"
#include "tests.h"

#include <keeptime.h>
#include <stdio.h>
#include <string.h>

void test_errors_clocks(void) {
    CHECK_STATUS(kt_clocks_json(NULL), KT_ENULL);
}

void test_clocks_json_report(void) {
    char *text = (char *)&text; /* poisoned: must be replaced */
    const char *error = NULL;
    json *doc;
    const json *clocks, *findings, *machine;
    size_t i;
    int monotonic = 0;

    CHECK_STATUS(kt_clocks_json(&text), KT_OK);
    CHECK(text != NULL && text != (char *)&text);
    if (!text || text == (char *)&text) return;
    doc = json_parse(text, &error);
    if (!doc) printf("  not JSON (%s): %.200s\n", error ? error : "?", text);
    CHECK(doc && doc->type == JSON_OBJECT);
    clocks = json_get(doc, "clocks");
    findings = json_get(doc, "findings");
    machine = json_get(doc, "machine");
    CHECK(clocks && clocks->type == JSON_ARRAY && clocks->count >= 1);
    CHECK(findings && findings->type == JSON_ARRAY);
    CHECK(machine && machine->type == JSON_OBJECT);
    for (i = 0; clocks && i < clocks->count; i++) {
        const json *name = json_get(clocks->items[i], "name");
        const json *cost = json_get(clocks->items[i], "read_cost_ns");
        CHECK(name && name->type == JSON_STRING);
        CHECK(cost && cost->type == JSON_NUMBER);
        if (name && name->type == JSON_STRING && strcmp(name->text, "MONOTONIC") == 0) {
            uint64_t violations = 1;
            monotonic = 1;
            CHECK(json_u64(json_get(clocks->items[i], "monotonic_violations"), &violations));
            CHECK_U64(violations, 0);
            kt_note("CLOCK_MONOTONIC read cost %s ns", cost ? cost->text : "?");
        }
    }
    CHECK(monotonic);
    for (i = 0; findings && i < findings->count; i++) {
        const json *code = json_get(findings->items[i], "code");
        CHECK(code && code->type == JSON_STRING && strlen(code->text) > 0);
    }
    json_free(doc);
    kt_string_free(text);
}
