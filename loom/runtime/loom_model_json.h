/* Reading the configuration JSON a model's loom_model_create receives, for
 * C models (header only; include it after loom_model.h).
 *
 * loom writes the configuration compactly (no blanks) with its flat keys
 * first, before the nested "description" object:
 *   {"name":"v3_4","data_type":"i32","model":"builtin:matmul_v3",
 *    "dims":["m","n","k"],"tile":[4,4,4],"description":{...}}
 * so the first occurrence of "key": is the top-level one for these keys.
 * "tile" holds the nominal tile size per dim in "dims" order (0 = "full"). */
#ifndef LOOM_MODEL_JSON_H
#define LOOM_MODEL_JSON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The text right after the first `"key":`, or NULL. */
static inline const char *loom_json_value(const char *json, const char *key) {
  size_t len = strlen(key);
  for (const char *p = json ? strchr(json, '"') : NULL; p; p = strchr(p + 1, '"')) {
    if (strncmp(p + 1, key, len) == 0 && p[len + 1] == '"' && p[len + 2] == ':')
      return p + len + 3;
  }
  return NULL;
}

/* Copies the string value of `key` (no escapes) into buf; 1 if found. */
static inline int loom_json_string(const char *json, const char *key, char *buf, size_t size) {
  const char *v = loom_json_value(json, key);
  if (!v || *v != '"' || size == 0) return 0;
  const char *end = strchr(v + 1, '"');
  if (!end) return 0;
  size_t n = (size_t)(end - v - 1);
  if (n >= size) n = size - 1;
  memcpy(buf, v + 1, n);
  buf[n] = '\0';
  return 1;
}

/* Element `index` of the integer array `key` (or the integer `key` itself
 * when index < 0) into *out; 1 if found. */
static inline int loom_json_int(const char *json, const char *key, int index, int64_t *out) {
  const char *v = loom_json_value(json, key);
  if (!v) return 0;
  if (index >= 0) {
    if (*v != '[') return 0;
    v++;
    for (int i = 0; i < index; i++) {
      v = strpbrk(v, ",]");
      if (!v || *v == ']') return 0;
      v++;
    }
  }
  char *end;
  long long value = strtoll(v, &end, 10);
  if (end == v) return 0;
  *out = (int64_t)value;
  return 1;
}

#endif
