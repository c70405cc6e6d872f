// The `{{name}}` Wharf plugin: the exports of the world in wit/world.wit.
// `wharf build` generates the bindings (`{{name_snake}}.h`, with wit-bindgen's
// C generator), compiles src/*.c with clang for wasm32-wasi and makes the
// component with the WASI preview-1 reactor adapter.

#include <stdlib.h>

#include "{{name_snake}}.h"
#include "greet.h"

// greet: func(name: string) -> string. The export owns `name` (freed here);
// the bindings free `ret` after the call.
void exports_{{name_snake}}_greet({{name_snake}}_string_t *name, {{name_snake}}_string_t *ret) {
  size_t len = 0;
  char *text = greeting((const char *)name->ptr, name->len, &len);
  if (text == NULL) {
    abort();
  }
  ret->ptr = (uint8_t *)text;
  ret->len = len;
  {{name_snake}}_string_free(name);
}
