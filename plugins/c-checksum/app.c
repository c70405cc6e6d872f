// Checksums of text for Wharf. The bindings (checksum.h, checksum.c and the
// component type object) are generated from wit/checksum.wit by wit-bindgen's C
// generator; this file implements the two exported functions of the `hash`
// interface. Arguments are owned by the callee (freed here); returned strings
// are malloc'ed and freed by the generated post-return function.

#include <stdlib.h>
#include <string.h>

#include "checksum.h"

typedef exports_wharf_examples_checksum_hash_algorithm_t algorithm_t;
typedef exports_wharf_examples_checksum_hash_format_t format_t;

static uint32_t crc32(const uint8_t *bytes, size_t len) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < len; i++) {
    crc ^= bytes[i];
    for (int bit = 0; bit < 8; bit++) {
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
  }
  return ~crc;
}

static uint32_t fnv1a(const uint8_t *bytes, size_t len) {
  uint32_t hash = 0x811c9dc5u;
  for (size_t i = 0; i < len; i++) {
    hash = (hash ^ bytes[i]) * 0x01000193u;
  }
  return hash;
}

static uint32_t adler32(const uint8_t *bytes, size_t len) {
  uint32_t a = 1, b = 0;
  for (size_t i = 0; i < len; i++) {
    a = (a + bytes[i]) % 65521u;
    b = (b + a) % 65521u;
  }
  return (b << 16) | a;
}

static uint32_t compute(const checksum_string_t *text, algorithm_t algorithm) {
  switch (algorithm) {
    case EXPORTS_WHARF_EXAMPLES_CHECKSUM_HASH_ALGORITHM_FNV1A:
      return fnv1a(text->ptr, text->len);
    case EXPORTS_WHARF_EXAMPLES_CHECKSUM_HASH_ALGORITHM_ADLER32:
      return adler32(text->ptr, text->len);
    default:
      return crc32(text->ptr, text->len);
  }
}

uint32_t exports_wharf_examples_checksum_hash_checksum(checksum_string_t *text,
                                                       algorithm_t algorithm) {
  uint32_t sum = compute(text, algorithm);
  checksum_string_free(text);
  return sum;
}

// Writes `value` in `radix` (2..=36), at least `width` digits, into `out` (at
// least 33 bytes). No printf: that would pull stdio into the component.
static void write_radix(uint32_t value, unsigned radix, size_t width, char *out) {
  char digits[33];
  size_t n = 0;
  do {
    digits[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[value % radix];
    value /= radix;
  } while (value != 0 || n < width);
  for (size_t i = 0; i < n; i++) {
    out[i] = digits[n - 1 - i];
  }
  out[n] = '\0';
}

bool exports_wharf_examples_checksum_hash_format_checksum(checksum_string_t *text,
                                                          algorithm_t algorithm,
                                                          format_t *format,
                                                          checksum_string_t *ret,
                                                          checksum_string_t *err) {
  uint32_t sum = compute(text, algorithm);
  checksum_string_free(text);
  char out[64];
  switch (format->tag) {
    case EXPORTS_WHARF_EXAMPLES_CHECKSUM_HASH_FORMAT_HEX:
      write_radix(sum, 16, 8, out);
      break;
    case EXPORTS_WHARF_EXAMPLES_CHECKSUM_HASH_FORMAT_DECIMAL:
      write_radix(sum, 10, 1, out);
      break;
    default: {
      unsigned radix = format->val.radix;
      if (radix < 2 || radix > 36) {
        strcpy(out, "radix ");
        write_radix(radix, 10, 1, out + strlen(out));
        strcat(out, " is outside 2..=36");
        checksum_string_dup(err, out);
        return false;
      }
      write_radix(sum, radix, 1, out);
    }
  }
  checksum_string_dup(ret, out);
  return true;
}
