/* The clock report: a JSON string the caller frees, parsed back here. */
#include "harness.h"
#include "json.h"
#include "tests.h"

#include <keeptime.h>
#include <stdio.h>
#include <stdlib.h>
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

/* A growable string for writing JSON back out. */
typedef struct {
    char *s;
    size_t len, cap;
} buf;

static void put(buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 256) + n;
        char *grown = realloc(b->s, cap);
        if (!grown) return;
        b->s = grown;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void put_str(buf *b, const char *s) {
    put(b, "\"", 1);
    for (; *s; s++) {
        char esc[8];
        if (*s == '"' || *s == '\\') {
            esc[0] = '\\';
            esc[1] = *s;
            put(b, esc, 2);
        } else if ((unsigned char)*s < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned)(unsigned char)*s);
            put(b, esc, strlen(esc));
        } else {
            put(b, s, 1);
        }
    }
    put(b, "\"", 1);
}

/* `v` as JSON text (numbers as their literal). */
static void write_json(buf *b, const json *v) {
    size_t i;
    if (!v) {
        put(b, "null", 4);
        return;
    }
    switch (v->type) {
    case JSON_NULL: put(b, "null", 4); break;
    case JSON_BOOL: v->boolean ? put(b, "true", 4) : put(b, "false", 5); break;
    case JSON_NUMBER: put(b, v->text, strlen(v->text)); break;
    case JSON_STRING: put_str(b, v->text); break;
    case JSON_ARRAY:
        put(b, "[", 1);
        for (i = 0; i < v->count; i++) {
            if (i) put(b, ",", 1);
            write_json(b, v->items[i]);
        }
        put(b, "]", 1);
        break;
    case JSON_OBJECT:
        put(b, "{", 1);
        for (i = 0; i < v->count; i++) {
            if (i) put(b, ",", 1);
            put_str(b, v->keys[i]);
            put(b, ":", 1);
            write_json(b, v->items[i]);
        }
        put(b, "}", 1);
        break;
    }
}

/* spec/vectors/clocks.json: a report's parts in, the core's findings out,
 * through the ABI: severity and code, in order. */
void test_clock_findings_vectors(void) {
    const char *error = NULL;
    json *doc = json_parse_file(kt_spec_path("vectors/clocks.json"), &error);
    const json *cases = json_get(doc, "cases");
    size_t i, j;
    CHECK(doc != NULL);
    CHECK(cases && cases->type == JSON_ARRAY && cases->count >= 15);
    for (i = 0; cases && cases->type == JSON_ARRAY && i < cases->count; i++) {
        const json *c = cases->items[i];
        const json *want = json_get(c, "findings");
        const json *name = json_get(c, "name");
        buf parts = {0};
        char *out = NULL;
        json *got;
        kt_note("case %s", name && name->type == JSON_STRING ? name->text : "?");
        put(&parts, "{\"clocks\":", 10);
        write_json(&parts, json_get(c, "clocks"));
        put(&parts, ",\"machine\":", 11);
        write_json(&parts, json_get(c, "machine"));
        put(&parts, ",\"idle_latency\":", 16);
        write_json(&parts, json_get(c, "idle_latency"));
        put(&parts, "}", 1);
        CHECK_STATUS(kt_clock_findings_json(parts.s, &out), KT_OK);
        got = out ? json_parse(out, &error) : NULL;
        CHECK(got && got->type == JSON_ARRAY && want && want->type == JSON_ARRAY);
        if (got && want && got->count == want->count) {
            for (j = 0; j < want->count; j++) {
                const json *gs = json_get(got->items[j], "severity"), *gc = json_get(got->items[j], "code");
                const json *ws = json_get(want->items[j], "severity"), *wc = json_get(want->items[j], "code");
                const json *msg = json_get(got->items[j], "message");
                CHECK(gs && ws && strcmp(gs->text, ws->text) == 0);
                CHECK(gc && wc && strcmp(gc->text, wc->text) == 0);
                CHECK(msg && msg->type == JSON_STRING && msg->text[0] != '\0');
            }
        } else {
            CHECK_INT((int)(got ? got->count : 0), (int)(want ? want->count : 0));
        }
        json_free(got);
        kt_string_free(out);
        free(parts.s);
    }
    json_free(doc);
}

void test_errors_clock_findings(void) {
    char *out = (char *)&out;
    CHECK_STATUS(kt_clock_findings_json(NULL, &out), KT_ENULL);
    CHECK_STATUS(kt_clock_findings_json("{}", NULL), KT_ENULL);
    CHECK_STATUS(kt_clock_findings_json("not json", &out), KT_EINVAL);
    CHECK(out == NULL);
    CHECK_STATUS(kt_clock_findings_json("[1, 2]", &out), KT_EINVAL);
    CHECK_STATUS(kt_clock_findings_json("{\"clocks\": 3, \"machine\": {}}", &out), KT_EINVAL);
    CHECK(out == NULL);
    CHECK_STATUS(kt_clock_findings_json("{\"clocks\": [], \"machine\": {\"os\": \"linux\", \"arch\": \"x86_64\"}}", &out), KT_OK);
    CHECK(out != NULL && strcmp(out, "[]") == 0);
    kt_string_free(out);
}
