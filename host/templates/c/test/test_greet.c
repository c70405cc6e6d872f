// `make test`: the logic on your machine's C compiler.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/greet.h"

int main(void) {
  size_t len = 0;
  char *text = greeting("Ada", 3, &len);
  if (text == NULL || len != 11 || memcmp(text, "Hello, Ada!", 11) != 0) {
    fprintf(stderr, "greeting(Ada) is wrong\n");
    return 1;
  }
  free(text);
  printf("1 passed, 0 failed\n");
  return 0;
}
