#include "greet.h"

#include <stdlib.h>
#include <string.h>

char *greeting(const char *name, size_t len, size_t *out_len) {
  static const char prefix[] = "Hello, ";
  size_t prefix_len = sizeof prefix - 1;
  char *out = malloc(prefix_len + len + 1);
  if (out == NULL) {
    return NULL;
  }
  memcpy(out, prefix, prefix_len);
  memcpy(out + prefix_len, name, len);
  out[prefix_len + len] = '!';
  *out_len = prefix_len + len + 1;
  return out;
}
