// What the tools compute, apart from the component's bindings, so
// `make test` runs it on your machine.
#ifndef GREET_H
#define GREET_H

#include <stddef.h>

// The greeting for the `len` bytes at `name`, in a malloc'd buffer of
// `*out_len` bytes (not NUL-terminated); NULL if out of memory.
char *greeting(const char *name, size_t len, size_t *out_len);

#endif
