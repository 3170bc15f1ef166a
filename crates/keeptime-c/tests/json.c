/* The tiny JSON reader of json.h: recursive descent, no dependencies. */
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
    const char *p;
    const char *error;
    int depth;
};

static json *parse_value(struct parser *ps);

static void skip_ws(struct parser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static json *new_value(json_type type) {
    json *v = calloc(1, sizeof *v);
    if (v) v->type = type;
    return v;
}

static int fail(struct parser *ps, const char *message) {
    if (!ps->error) ps->error = message;
    return 0;
}

static int push(json *container, json *item, char *key) {
    json **items = realloc(container->items, (container->count + 1) * sizeof *items);
    if (!items) return 0;
    container->items = items;
    if (container->type == JSON_OBJECT) {
        char **keys = realloc(container->keys, (container->count + 1) * sizeof *keys);
        if (!keys) return 0;
        container->keys = keys;
        keys[container->count] = key;
    }
    items[container->count++] = item;
    return 1;
}

static void put_utf8(char **out, unsigned cp) {
    unsigned char *o = (unsigned char *)*out;
    if (cp < 0x80) {
        *o++ = (unsigned char)cp;
    } else if (cp < 0x800) {
        *o++ = (unsigned char)(0xC0 | (cp >> 6));
        *o++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (unsigned char)(0xE0 | (cp >> 12));
        *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (unsigned char)(0xF0 | (cp >> 18));
        *o++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (unsigned char)(0x80 | (cp & 0x3F));
    }
    *out = (char *)o;
}

static int hex4(const char *s, unsigned *out) {
    unsigned v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

/* Parses a string literal at ps->p (which is at the opening quote). */
static char *parse_string(struct parser *ps) {
    const char *start = ++ps->p;
    size_t raw = 0;
    char *buf, *o;
    while (start[raw] && start[raw] != '"') raw += start[raw] == '\\' && start[raw + 1] ? 2 : 1;
    if (start[raw] != '"') return fail(ps, "unterminated string"), NULL;
    buf = malloc(raw + 1); /* decoding never lengthens the text */
    if (!buf) return fail(ps, "out of memory"), NULL;
    o = buf;
    while (*ps->p != '"') {
        char c = *ps->p++;
        if ((unsigned char)c < 0x20) return free(buf), fail(ps, "control character in string"), NULL;
        if (c != '\\') {
            *o++ = c;
            continue;
        }
        c = *ps->p++;
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (!hex4(ps->p, &cp)) return free(buf), fail(ps, "bad \\u escape"), NULL;
            ps->p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && ps->p[0] == '\\' && ps->p[1] == 'u' &&
                hex4(ps->p + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                ps->p += 6;
            }
            put_utf8(&o, cp);
            break;
        }
        default: return free(buf), fail(ps, "bad escape in string"), NULL;
        }
    }
    ps->p++;
    *o = '\0';
    return buf;
}

static json *parse_number(struct parser *ps) {
    const char *s = ps->p;
    json *v;
    size_t n;
    if (*ps->p == '-') ps->p++;
    if (*ps->p < '0' || *ps->p > '9') return fail(ps, "bad number"), NULL;
    while (*ps->p >= '0' && *ps->p <= '9') ps->p++;
    if (*ps->p == '.') {
        ps->p++;
        while (*ps->p >= '0' && *ps->p <= '9') ps->p++;
    }
    if (*ps->p == 'e' || *ps->p == 'E') {
        ps->p++;
        if (*ps->p == '+' || *ps->p == '-') ps->p++;
        while (*ps->p >= '0' && *ps->p <= '9') ps->p++;
    }
    n = (size_t)(ps->p - s);
    v = new_value(JSON_NUMBER);
    if (!v || !(v->text = malloc(n + 1))) return free(v), fail(ps, "out of memory"), NULL;
    memcpy(v->text, s, n);
    v->text[n] = '\0';
    return v;
}

static json *parse_container(struct parser *ps, json_type type) {
    char close = type == JSON_ARRAY ? ']' : '}';
    json *v = new_value(type);
    if (!v) return fail(ps, "out of memory"), NULL;
    if (++ps->depth > 64) return free(v), fail(ps, "nested too deeply"), NULL;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        ps->depth--;
        return v;
    }
    for (;;) {
        char *key = NULL;
        json *item;
        skip_ws(ps);
        if (type == JSON_OBJECT) {
            if (*ps->p != '"' || !(key = parse_string(ps))) {
                fail(ps, "expected a string key");
                break;
            }
            skip_ws(ps);
            if (*ps->p != ':') {
                free(key);
                fail(ps, "expected ':'");
                break;
            }
            ps->p++;
        }
        item = parse_value(ps);
        if (!item || !push(v, item, key)) {
            json_free(item);
            free(key);
            fail(ps, "out of memory");
            break;
        }
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            ps->depth--;
            return v;
        }
        fail(ps, type == JSON_ARRAY ? "expected ',' or ']'" : "expected ',' or '}'");
        break;
    }
    json_free(v);
    return NULL;
}

static json *parse_value(struct parser *ps) {
    json *v;
    skip_ws(ps);
    switch (*ps->p) {
    case '{': return parse_container(ps, JSON_OBJECT);
    case '[': return parse_container(ps, JSON_ARRAY);
    case '"':
        v = new_value(JSON_STRING);
        if (!v) return fail(ps, "out of memory"), NULL;
        if (!(v->text = parse_string(ps))) return free(v), NULL;
        return v;
    case 't':
    case 'f':
    case 'n': {
        static const struct { const char *word; json_type type; int boolean; } words[] = {
            {"true", JSON_BOOL, 1}, {"false", JSON_BOOL, 0}, {"null", JSON_NULL, 0}};
        size_t i;
        for (i = 0; i < 3; i++) {
            size_t n = strlen(words[i].word);
            if (strncmp(ps->p, words[i].word, n) == 0) {
                ps->p += n;
                v = new_value(words[i].type);
                if (!v) return fail(ps, "out of memory"), NULL;
                v->boolean = words[i].boolean;
                return v;
            }
        }
        return fail(ps, "unknown literal"), NULL;
    }
    default:
        return parse_number(ps);
    }
}

json *json_parse(const char *text, const char **error) {
    struct parser ps = {text, NULL, 0};
    json *v = parse_value(&ps);
    if (v) {
        skip_ws(&ps);
        if (*ps.p) {
            json_free(v);
            v = NULL;
            fail(&ps, "trailing characters after the document");
        }
    }
    if (error) *error = v ? NULL : ps.error;
    return v;
}

json *json_parse_file(const char *path, const char **error) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    json *v;
    if (!f) {
        if (error) *error = strerror(errno);
        return NULL;
    }
    do {
        if (len + 4096 + 1 > cap) {
            char *grown = realloc(buf, cap = 2 * cap + 4096 + 1);
            if (!grown) {
                free(buf);
                fclose(f);
                if (error) *error = "out of memory";
                return NULL;
            }
            buf = grown;
        }
        n = fread(buf + len, 1, 4096, f);
        len += n;
    } while (n > 0);
    fclose(f);
    buf[len] = '\0';
    v = json_parse(buf, error);
    free(buf);
    return v;
}

void json_free(json *v) {
    size_t i;
    if (!v) return;
    for (i = 0; i < v->count; i++) {
        json_free(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->text);
    free(v);
}

const json *json_get(const json *obj, const char *key) {
    size_t i;
    if (!obj || obj->type != JSON_OBJECT) return NULL;
    for (i = 0; i < obj->count; i++)
        if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
    return NULL;
}

int json_u64(const json *v, uint64_t *out) {
    const char *s;
    uint64_t x = 0;
    if (!v || v->type != JSON_NUMBER) return 0;
    s = v->text;
    if (!*s) return 0;
    for (; *s; s++) {
        unsigned d;
        if (*s < '0' || *s > '9') return 0; /* sign, fraction or exponent */
        d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10) return 0; /* does not fit */
        x = x * 10 + d;
    }
    *out = x;
    return 1;
}
