/*
** main.c -- the cnpc command line: parse options into CnpOptions, run the front end,
** then dump the AST, stop (--check) or hand over to the code generator.
** Exit codes: 0 success, 1 errors in the input, 2 usage errors.
*/
#define _POSIX_C_SOURCE 200809L
#include "cnpc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
  "usage: cnpc [options] FILE.cnp\n"
  "\n"
  "Checks a .cnp pipeline and generates NAME.h, NAME.c (host) and NAME.cu (CUDA).\n"
  "\n"
  "options:\n"
  "  -o FILE              base name of the outputs (default: the pipeline's name,\n"
  "                       `pipeline pic;` writes pic.h, pic.c, ...; -o pic.c means pic)\n"
  "  --out-dir DIR        directory for the outputs (default: .; ignored with -o)\n"
  "  --emit=LIST          what to write: header,c,cuda,dot,manifest,fortran,cxx\n"
  "                       (default header,c,cuda; manifest = NAME.json, fortran =\n"
  "                       NAME_cnp.f90 + NAME_cnp_layout.c, cxx = NAME.hpp)\n"
  "  --no-line            no #line directives in the generated code\n"
  "  --debug-bounds       check gather/scatter/component indices in the generated code\n"
  "                       (as -DCNP_DEBUG_BOUNDS): out of range, step() is CNP_ERANGE\n"
  "  --explain-fusion     report which maps were fused into which kernels\n"
  "  -I DIR               search DIR for imported files\n"
  "  -MD, -MF FILE, -MT TARGET, -MP\n"
  "                       write a make depfile (as with gcc)\n"
  "  -Werror              treat warnings as errors (-Wno-error undoes it)\n"
  "  -W<name>, -Wno-<name>, -Werror=<name>, -Wno-error=<name>\n"
  "                       one warning on, off, as an error, or kept a warning;\n"
  "                       names: unused-event (an event recorded but never waited for),\n"
  "                       compact-omits, sort-omits (per-row data over a dim left out of\n"
  "                       a compaction or sort)\n"
  "  -w                   no warnings\n"
  "  --check              run the front end only (parse and check)\n"
  "  --dump-ast           print the checked AST and stop\n"
  "  --print              print the checked program back as .cnp source and stop\n"
  "  --interpret IN       run the steps with the reference interpreter on data file IN\n"
  "  --interpret-out OUT  (with --interpret) write the resulting fields to OUT\n"
  "  --interpret-order=host|cuda  (with --interpret) reduce into scalars in the host\n"
  "                       backend's order (the default) or the CUDA backend's block tree\n"
  "                       (the differential tests' file formats: docs/robustness.md)\n"
  "  --color=WHEN         color diagnostics: never (default), always, auto\n"
  "  --help, --version\n"
  "\n"
  "exit status: 0 success, 1 errors in the input, 2 usage error\n";

static int usage_error(const char *fmt, const char *arg) {
  fputs("cnpc: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n(run 'cnpc --help' for the options)\n", stderr);
  return 2;
}

/* --emit=header,c,... -> EMIT_* bits; 0 on an unknown name. */
static unsigned parse_emit(const char *list) {
  static const struct { const char *name; unsigned bit; } kinds[] = {
    {"header", EMIT_HEADER}, {"c", EMIT_C}, {"cuda", EMIT_CUDA},
    {"dot", EMIT_DOT}, {"manifest", EMIT_MANIFEST}, {"fortran", EMIT_FORTRAN}, {"cxx", EMIT_CXX},
  };
  unsigned bits = 0;
  const char *p = list;
  while (*p) {
    size_t n = strcspn(p, ",");
    unsigned bit = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
      if (strlen(kinds[k].name) == n && strncmp(kinds[k].name, p, n) == 0) bit = kinds[k].bit;
    if (!bit) return 0;
    bits |= bit;
    p += n;
    if (*p == ',') p++;
  }
  return bits;
}

/*
** Parse argv into *opt. Returns -1 to go on, else the exit code (help, version, usage).
*/
/* -W<name>, -Wno-<name>, -Werror=<name>, -Wno-error=<name>: 0, or -1 for an unknown name. */
static int warn_flag(const char *a, CnpOptions *opt) {
  const char *name = a + 2;
  int error = 0, off = 0;
  if (!strncmp(name, "error=", 6)) error = 1, name += 6;
  else if (!strncmp(name, "no-error=", 9)) error = -1, name += 9;
  else if (!strncmp(name, "no-", 3)) off = 1, name += 3;
  int w = diag_warn_lookup(name);
  if (w < 0) return -1;
  unsigned bit = 1u << w;
  if (error > 0) opt->warn_error |= bit, opt->warn_not_error &= ~bit, opt->warn_off &= ~bit;
  else if (error < 0) opt->warn_error &= ~bit, opt->warn_not_error |= bit;
  else if (off) opt->warn_off |= bit;
  else opt->warn_off &= ~bit;
  return 0;
}

static int parse_args(int argc, char **argv, CnpOptions *opt) {
  static const char *dirs[256];
  opt->include_dirs = dirs;
  opt->emit = EMIT_DEFAULT;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_ARG() do { if (!next) return usage_error("option '%s' needs an argument", a); i++; } while (0)
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage_text, stdout);
      return 0;
    } else if (!strcmp(a, "--version")) {
      printf("cnpc %s\n", CNPC_VERSION);
      return 0;
    } else if (!strcmp(a, "-o")) {
      NEED_ARG(); opt->output = next;
    } else if (!strcmp(a, "--out-dir")) {
      NEED_ARG(); opt->out_dir = next;
    } else if (!strncmp(a, "--out-dir=", 10)) {
      opt->out_dir = a + 10;
    } else if (!strncmp(a, "--emit=", 7)) {
      if (!(opt->emit = parse_emit(a + 7)))
        return usage_error("--emit takes a list of header,c,cuda,dot,manifest,fortran,cxx, not '%s'", a + 7);
    } else if (!strcmp(a, "--no-line")) {
      opt->no_line = true;
    } else if (!strcmp(a, "--debug-bounds")) {
      opt->debug_bounds = true;
    } else if (!strcmp(a, "--explain-fusion")) {
      opt->explain_fusion = true;
    } else if (!strcmp(a, "--dump-ast")) {
      opt->dump_ast = true;
    } else if (!strcmp(a, "--print")) {
      opt->print = true;
    } else if (!strcmp(a, "--interpret")) {
      NEED_ARG(); opt->interpret = next;
    } else if (!strcmp(a, "--interpret-out")) {
      NEED_ARG(); opt->interpret_out = next;
    } else if (!strcmp(a, "--interpret-order=host") || !strcmp(a, "--interpret-order=cuda")) {
      opt->interpret_cuda = !strcmp(a, "--interpret-order=cuda");
    } else if (!strcmp(a, "--check")) {
      opt->check_only = true;
    } else if (!strcmp(a, "-Werror")) {
      opt->werror = true;
    } else if (!strcmp(a, "-Wno-error")) {
      opt->werror = false;
    } else if (!strcmp(a, "-w")) {
      opt->no_warnings = true;
    } else if (!strcmp(a, "-Wall") || !strcmp(a, "-Wextra")) {
      opt->warn_off = 0;                      /* every warning is on by default */
    } else if (!strncmp(a, "-Werror=", 8) || !strncmp(a, "-Wno-error=", 11) ||
               !strncmp(a, "-Wno-", 5) || (!strncmp(a, "-W", 2) && a[2])) {
      if (warn_flag(a, opt)) return usage_error("unknown warning option '%s'", a);
    } else if (!strcmp(a, "-I") || (!strncmp(a, "-I", 2) && a[2])) {
      const char *d = a + 2;
      if (!*d) { NEED_ARG(); d = next; }
      if (opt->n_include_dirs >= 256) return usage_error("too many -I options%s", "");
      dirs[opt->n_include_dirs++] = d;
    } else if (!strcmp(a, "-MD")) {
      opt->md = true;
    } else if (!strcmp(a, "-MF")) {
      NEED_ARG(); opt->mf = next;
    } else if (!strcmp(a, "-MT")) {
      NEED_ARG(); opt->mt = next;
    } else if (!strcmp(a, "-MP")) {
      opt->mp = true;
    } else if (!strncmp(a, "--color=", 8)) {
      const char *w = a + 8;
      if (!strcmp(w, "never")) opt->color = COLOR_NEVER;
      else if (!strcmp(w, "always")) opt->color = COLOR_ALWAYS;
      else if (!strcmp(w, "auto")) opt->color = COLOR_AUTO;
      else return usage_error("--color takes never, always or auto, not '%s'", w);
    } else if (a[0] == '-' && a[1]) {
      return usage_error("unknown option '%s'", a);
    } else if (opt->input) {
      return usage_error("more than one input file ('%s')", a);
    } else {
      opt->input = a;
    }
#undef NEED_ARG
  }
  if (!opt->input) return usage_error("no input file%s", "");
  if (!opt->interpret != !opt->interpret_out)
    return usage_error("--interpret and --interpret-out go together%s", "");
  return -1;
}

int main(int argc, char **argv) {
  CnpOptions opt = {0};
  opt.report = stdout;                  /* --explain-fusion prints here */
  int rc = parse_args(argc, argv, &opt);
  if (rc >= 0) return rc;
  Cnp *cc = cnp_new(&opt, stderr);
  cc->color = opt.color == COLOR_ALWAYS || (opt.color == COLOR_AUTO && isatty(STDERR_FILENO));
  rc = 0;
  if (cnp_compile_file(cc, opt.input) > 0) rc = 1;
  else if (opt.dump_ast) dump_ast(cc, stdout);
  else if (opt.print) print_program(cc, stdout);
  else if (opt.interpret) rc = interp_run(cc, opt.interpret, opt.interpret_out, stderr);
  else if (!opt.check_only && gen_emit(cc, &opt) != 0) rc = 1;
  cnp_free(cc);
  return rc;
}
