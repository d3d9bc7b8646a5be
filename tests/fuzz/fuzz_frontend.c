/*
** fuzz_frontend.c -- libFuzzer target for the cnpc front end: lexer, parser, imports,
** sema and the AST dump on an arbitrary buffer. It must never crash, hang or leak.
**
** libFuzzer:  scripts/fuzz-frontend [seconds]   (clang -fsanitize=fuzzer,address)
** Standalone: built with -DCNP_FUZZ_STANDALONE, replays the files named on the command line
**             (the ctest regression run over the seed corpus).
*/
#include "cnpc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!sink) sink = fopen("/dev/null", "w");
  CnpOptions opt = {0};
  Cnp *cc = cnp_new(&opt, sink);
  int n = cnp_compile_buffer(cc, "fuzz.cnp", (const char *)data, size);
  if (n == 0) dump_ast(cc, sink);
  /* use the results so the optimizer keeps the work */
  if (n < 0 || (cc->decls && !cc->decls->loc.file)) abort();
  cnp_free(cc);
  return 0;
}

#ifdef CNP_FUZZ_STANDALONE
int main(int argc, char **argv) {
  int done = 0;
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (!f) {
      fprintf(stderr, "cannot read %s\n", argv[i]);
      return 2;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0, k;
    char chunk[4096];
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
      if (n + k > cap) {
        cap = 2 * (n + k);
        char *nb = realloc(buf, cap);
        if (!nb) return 2;
        buf = nb;
      }
      memcpy(buf + n, chunk, k);
      n += k;
    }
    fclose(f);
    /* the whole file, then every prefix at a few cut points (truncated input) */
    LLVMFuzzerTestOneInput((const uint8_t *)buf, n);
    for (size_t cut = 1; cut < n; cut += n / 7 + 1) LLVMFuzzerTestOneInput((const uint8_t *)buf, cut);
    free(buf);
    done++;
  }
  printf("replayed %d inputs\n", done);
  return 0;
}
#endif
