/*
 * A tiny JSON reader for the spec vectors: enough JSON for data files
 * (objects, arrays, strings, numbers, true/false/null), with numbers kept as
 * text so 64-bit integers such as 18446744073709551615 are read exactly
 * (a double would round them).
 */
#ifndef KT_TEST_JSON_H
#define KT_TEST_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json {
    json_type type;
    int boolean;        /* JSON_BOOL */
    char *text;         /* JSON_NUMBER: the literal; JSON_STRING: the decoded UTF-8 */
    size_t count;       /* JSON_ARRAY, JSON_OBJECT: number of items */
    struct json **items;
    char **keys;        /* JSON_OBJECT: items[i] is the value of keys[i] */
} json;

/* Parses a whole document; NULL on a syntax error, with a message in *error. */
json *json_parse(const char *text, const char **error);
/* Reads and parses a file; NULL (and *error) if it cannot. */
json *json_parse_file(const char *path, const char **error);
void json_free(json *value);

/* The member `key` of an object, or NULL (also when `obj` is not an object). */
const json *json_get(const json *obj, const char *key);
/* An exact unsigned 64-bit integer: 1 on success, 0 if not one. */
int json_u64(const json *value, uint64_t *out);

#endif
