/*
** gen_fortran.c -- the Fortran 2008 interface (--emit=fortran): STEM_cnp.f90, a module
** NAME_cnp with bind(C) interfaces to the C API of STEM.h, a bind(C) mirror of NAME_config
** and NAME_stats, the status codes as named constants, the error texts as Fortran strings
** and typed accessors that hand back Fortran pointers to the fields and snapshots; and
** STEM_cnp_layout.c, the C side of the layout check NAME_setup() does before it calls the C setup
** (offsets and sizes of NAME_config, NAME_stats and cnp_array as the C compiler lays them
** out). docs/interfaces.md describes the result; gen_cxx.c is the C++ sibling.
**
** Index mapping: a field F : T[e0, ..., e(r-1)] (C order, the last extent varies fastest)
** is the Fortran array F(e(r-1), ..., e0): C F[i0, ..., i(r-1)] is Fortran
** F(i(r-1) + 1, ..., i0 + 1), the same memory without a copy.
**
** Fortran names are case-insensitive, start with a letter and have at most 63 characters:
** a name that clashes (case-insensitively) with an earlier one in the same scope gets '_'
** appended until it is free; a leading '_' gets 'u' put in front.
*/
#define _DEFAULT_SOURCE 1
#include "gen.h"
#include <cnp/cnp.h>     /* CNP_STATUS_MAP: the status codes as the runtime defines them */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fortran lines have at most 132 characters (gfortran -Wall makes longer ones an error):
** fold_lines() breaks longer ones, code after a ", " outside quotes with a continuation '&',
** comments into a second comment line. */
static void fold_line(Buf *out, const char *s, size_t n) {
  const size_t max = 110;
  size_t ind = 0;
  while (ind < n && s[ind] == ' ') ind++;
  bool comment = ind < n && s[ind] == '!';
  while (n > max) {
    size_t cut = 0;
    bool quote = false;
    char q = 0;
    for (size_t i = ind + 1; i + 1 < n && i < max; i++) {
      if (quote) {
        if (s[i] == q) quote = false;
      } else if (!comment && (s[i] == '\'' || s[i] == '"')) {
        quote = true, q = s[i];
      } else if (s[i] == ',' && s[i + 1] == ' ') {
        cut = i + 1;
      } else if (comment && s[i] == ' ') {
        cut = i;
      }
    }
    size_t rest = cut + 1;
    while (rest < n && s[rest] == ' ') rest++;
    if (!cut || (rest + 1 == n && s[rest] == '&')) break;
    buf_put(out, s, cut);
    if (comment) buf_printf(out, "\n%*s!  ", (int)ind, "");
    else buf_printf(out, " &\n%*s", (int)ind + 6, "");
    s += cut + 1;
    n -= cut + 1;
  }
  buf_put(out, s, n);
}

static void fold_lines(Buf *b) {
  Buf out = {0};
  const char *s = buf_str(b);
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    fold_line(&out, s, n);
    if (nl) buf_put(&out, "\n", 1);
    s += n + (nl ? 1 : 0);
  }
  buf_free(b);
  *b = out;
}

typedef struct FNames {
  const char *v[1024];
  int n;
} FNames;

static bool fn_taken(const FNames *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (!strcasecmp(s->v[i], name)) return true;
  return false;
}

/* A Fortran name for `want`, unique (case-insensitively) in scope s, recorded there. */
static const char *fn_unique(GenUnit *u, FNames *s, const char *want) {
  Arena *a = &u->cc->arena;
  const char *name = want[0] == '_' ? arena_printf(a, "u%s", want) : want;
  while (fn_taken(s, name)) name = arena_printf(a, "%s_", name);
  if (strlen(name) > 63) {
    diag_plain(u->cc, "cannot generate the Fortran module: the name '%s' has more than 63 characters", name);
    name = "too_long_name";
  }
  if (s->n < (int)(sizeof s->v / sizeof s->v[0])) s->v[s->n++] = name;
  return name;
}

static void fn_reserve(FNames *s, const char *name) {
  if (s->n < (int)(sizeof s->v / sizeof s->v[0])) s->v[s->n++] = name;
}

/* Fortran type of an element (fields) or of a C API value (params, config). */
static const char *f_type(DType t, bool api) {
  switch (t) {
  case DT_BOOL: return "logical(c_bool)";       /* one byte, 0 or 1 (uint8_t in C) */
  case DT_I32: return "integer(c_int32_t)";
  case DT_I64: return "integer(c_int64_t)";
  case DT_U64: return "integer(c_int64_t)";     /* Fortran has no unsigned: the same bits */
  case DT_F16: return api ? "real(c_float)" : "integer(c_int16_t)";   /* binary16 bits */
  case DT_F32: return "real(c_float)";
  case DT_F64: return "real(c_double)";
  case DT_C64: return "complex(c_float_complex)";
  case DT_C128: return "complex(c_double_complex)";
  default: cnp_ice("no Fortran type for %s", dtype_name(t));
  }
}

static int elem_size(DType t) {
  switch (t) {
  case DT_BOOL: return 1;
  case DT_F16: return 2;
  case DT_I32: case DT_F32: return 4;
  case DT_C128: return 16;
  default: return 8;
  }
}

static const char *f_zero(DType t) {
  switch (t) {
  case DT_BOOL: return ".false._c_bool";
  case DT_I32: return "0_c_int32_t";
  case DT_I64: case DT_U64: return "0_c_int64_t";
  case DT_F16: case DT_F32: return "0.0_c_float";
  case DT_F64: return "0.0_c_double";
  case DT_C64: return "(0.0_c_float, 0.0_c_float)";
  case DT_C128: return "(0.0_c_double, 0.0_c_double)";
  default: return "0";
  }
}

/* One config component: its C name, its Fortran name. */
typedef struct FComp {
  const char *c, *f;
} FComp;

typedef struct FMod {
  GenUnit *u;
  FNames mod;             /* module-scope names */
  FComp comp[512];        /* NAME_config's components, in C order */
  int n_comp;
  int n_streams;
  int accessors;          /* typed accessors (fields and snapshots) */
} FMod;

static void config_type(FMod *m, Buf *b) {
  GenUnit *u = m->u;
  FNames cs = {0};
  static const char *const fixed[] = {"backend", "strict", "mpi_fcomm", "cuda_streams"};
  for (int i = 0; i < 4; i++) {
    fn_reserve(&cs, fixed[i]);
    m->comp[m->n_comp++] = (FComp){fixed[i], fixed[i]};
  }
  buf_printf(b, "  ! %s_config (%s.h): fill the dims and setup params, then call %s_setup.\n", u->name,
             u->stem, u->name);
  buf_printf(b, "  type, bind(C) :: %s_config\n", u->name);
  buf_puts(b, "    integer(c_int) :: backend = CNP_BACKEND_HOST  ! or CNP_BACKEND_CUDA\n");
  buf_puts(b, "    integer(c_int) :: strict = 0                  ! 1: fail if the backend cannot be used\n");
  buf_puts(b, "    integer(c_int) :: mpi_fcomm = 0               ! the Fortran MPI communicator (MPI pipelines)\n");
  buf_printf(b, "    type(c_ptr) :: cuda_streams(%s_NUM_STREAMS + 1) = c_null_ptr  ! cudaStream_t per stream\n",
             u->upper);
  for (Decl *d = u->cc->decls; d; d = d->next) {
    const char *file = base_name(d->loc.file->path);
    const char *f;
    if (d->kind == DECL_DIM) {
      f = fn_unique(u, &cs, d->name);
      buf_printf(b, "    integer(c_int64_t) :: %s = 0_c_int64_t  ! dim %s (%s:%d): capacity, > 0\n", f, d->name,
                 file, d->loc.line);
      m->comp[m->n_comp++] = (FComp){d->name, f};
    } else if (d->kind == DECL_PARAM && d->setup) {
      f = fn_unique(u, &cs, d->name);
      buf_printf(b, "    %s :: %s = %s  ! param %s (%s:%d)\n", f_type(d->dtype, true), f, f_zero(d->dtype),
                 d->name, file, d->loc.line);
      m->comp[m->n_comp++] = (FComp){d->name, f};
    } else if (d->kind == DECL_MIRROR) {
      const char *c = arena_printf(&u->cc->arena, "%s_host", d->name);
      f = fn_unique(u, &cs, c);
      buf_printf(b, "    type(c_ptr) :: %s = c_null_ptr  ! mirror %s (%s:%d): host array of %s\n", f, d->name,
                 file, d->loc.line, d->target.decl->name);
      m->comp[m->n_comp++] = (FComp){c, f};
    }
    if (m->n_comp >= 510) break;
  }
  buf_printf(b, "  end type %s_config\n\n", u->name);
}

/* The dummy arguments of step(): p, then the per-step params (Fortran names). */
static void step_dummies(FMod *m, const char **names) {
  FNames s = {0};
  /* the handle, the result and the names the interface imports */
  static const char *const taken[] = {"p", "st", "c_ptr", "c_int", "c_int8_t", "c_int32_t", "c_int64_t",
                                      "c_float", "c_double", "c_float_complex", "c_double_complex"};
  for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++) fn_reserve(&s, taken[i]);
  int k = 0;
  for (Decl *d = m->u->cc->decls; d; d = d->next)
    if (d->kind == DECL_PARAM && !d->setup) names[k++] = fn_unique(m->u, &s, d->name);
}

static void interfaces(FMod *m, Buf *b) {
  GenUnit *u = m->u;
  const char *n = u->name;
  const char *dn[512];
  step_dummies(m, dn);
  buf_puts(b, "  interface\n");
  /* step */
  buf_printf(b, "    ! %s_step(p", n);
  int k = 0;
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_PARAM && !d->setup) buf_printf(b, ", %s", dn[k++]);
  buf_puts(b, "): enqueue one step; 0 or a CNP_E* status\n");
  buf_printf(b, "    function %s_step(p", n);
  k = 0;
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_PARAM && !d->setup) buf_printf(b, ", %s", dn[k++]);
  buf_printf(b, ") result(st) bind(C, name=\"%s_step\")\n", n);
  buf_puts(b, "      import :: c_ptr, c_int, c_int8_t, c_int32_t, c_int64_t, c_float, c_double, &\n"
              "                c_float_complex, c_double_complex\n");
  buf_puts(b, "      type(c_ptr), value :: p\n");
  k = 0;
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_PARAM && !d->setup) {
      const char *t = d->dtype == DT_BOOL ? "integer(c_int8_t)" : f_type(d->dtype, true);
      buf_printf(b, "      %s, value :: %s  ! param %s\n", t, dn[k++], d->name);
    }
  buf_puts(b, "      integer(c_int) :: st\n");
  buf_printf(b, "    end function %s_step\n", n);
  /* sync, teardown, stats, backend */
  buf_printf(b, "    ! %s_sync(p): wait for every stream\n", n);
  buf_printf(b, "    function %s_sync(p) result(st) bind(C, name=\"%s_sync\")\n", n, n);
  buf_puts(b, "      import :: c_ptr, c_int\n      type(c_ptr), value :: p\n      integer(c_int) :: st\n");
  buf_printf(b, "    end function %s_sync\n", n);
  buf_printf(b, "    subroutine %s_teardown(p) bind(C, name=\"%s_teardown\")\n", n, n);
  buf_puts(b, "      import :: c_ptr\n      type(c_ptr), value :: p\n");
  buf_printf(b, "    end subroutine %s_teardown\n", n);
  buf_printf(b, "    subroutine %s_stats_get(p, stats) bind(C, name=\"%s_stats_get\")\n", n, n);
  buf_printf(b, "      import :: c_ptr, %s_stats\n      type(c_ptr), value :: p\n", n);
  buf_printf(b, "      type(%s_stats), intent(out) :: stats\n", n);
  buf_printf(b, "    end subroutine %s_stats_get\n", n);
  buf_printf(b, "    ! %s_backend(p): CNP_BACKEND_HOST or CNP_BACKEND_CUDA, the backend in use\n", n);
  buf_printf(b, "    function %s_backend(p) result(be) bind(C, name=\"%s_backend\")\n", n, n);
  buf_puts(b, "      import :: c_ptr, c_int\n      type(c_ptr), value :: p\n      integer(c_int) :: be\n");
  buf_printf(b, "    end function %s_backend\n", n);
  /* the C functions that take strings: wrapped below */
  buf_puts(b, "    ! The C functions that take or return C strings; the module procedures below wrap\n"
              "    ! them with Fortran strings.\n");
  buf_printf(b, "    function %s_setup_c(p, cfg, err, errlen) result(st) bind(C, name=\"%s_setup\")\n", n, n);
  buf_printf(b, "      import :: c_ptr, c_int, c_char, c_size_t, %s_config\n", n);
  buf_puts(b, "      type(c_ptr), intent(out) :: p\n");
  buf_printf(b, "      type(%s_config), intent(in) :: cfg\n", n);
  buf_puts(b, "      character(kind=c_char), intent(out) :: err(*)\n");
  buf_puts(b, "      integer(c_size_t), value :: errlen\n      integer(c_int) :: st\n");
  buf_printf(b, "    end function %s_setup_c\n", n);
  buf_printf(b, "    function %s_field_c(p, name) result(view) bind(C, name=\"%s_field\")\n", n, n);
  buf_puts(b, "      import :: c_ptr, c_char, cnp_array\n      type(c_ptr), value :: p\n");
  buf_puts(b, "      character(kind=c_char), intent(in) :: name(*)\n      type(cnp_array) :: view\n");
  buf_printf(b, "    end function %s_field_c\n", n);
  buf_printf(b, "    function %s_extent_c(p, dim) result(ext) bind(C, name=\"%s_extent\")\n", n, n);
  buf_puts(b, "      import :: c_ptr, c_char, c_int64_t\n      type(c_ptr), value :: p\n");
  buf_puts(b, "      character(kind=c_char), intent(in) :: dim(*)\n      integer(c_int64_t) :: ext\n");
  buf_printf(b, "    end function %s_extent_c\n", n);
  buf_printf(b, "    function %s_set_extent_c(p, dim, ext) result(st) bind(C, name=\"%s_set_extent\")\n", n, n);
  buf_puts(b, "      import :: c_ptr, c_char, c_int, c_int64_t\n      type(c_ptr), value :: p\n");
  buf_puts(b, "      character(kind=c_char), intent(in) :: dim(*)\n      integer(c_int64_t), value :: ext\n");
  buf_puts(b, "      integer(c_int) :: st\n");
  buf_printf(b, "    end function %s_set_extent_c\n", n);
  buf_printf(b, "    function %s_snapshot_c(p, name, view) result(st) bind(C, name=\"%s_snapshot\")\n", n, n);
  buf_puts(b, "      import :: c_ptr, c_char, c_int, cnp_array\n      type(c_ptr), value :: p\n");
  buf_puts(b, "      character(kind=c_char), intent(in) :: name(*)\n      type(cnp_array), intent(out) :: view\n");
  buf_puts(b, "      integer(c_int) :: st\n");
  buf_printf(b, "    end function %s_snapshot_c\n", n);
  buf_printf(b, "    function %s_error_c(p) result(msg) bind(C, name=\"%s_error\")\n", n, n);
  buf_puts(b, "      import :: c_ptr\n      type(c_ptr), value :: p\n      type(c_ptr) :: msg\n");
  buf_printf(b, "    end function %s_error_c\n", n);
  buf_printf(b, "    ! %s_cnp_layout.c (cnpc --emit=fortran): the C compiler's layout of %s_config, %s_stats\n"
                "    ! and cnp_array, which %s_setup compares with this module's before the C setup\n",
             u->stem, n, n, n);
  buf_printf(b, "    function %s_cnp_layout(offsets, n, sizes) result(cfg_size) &\n", n);
  buf_printf(b, "        bind(C, name=\"%s_cnp_layout\")\n", n);
  buf_puts(b, "      import :: c_size_t\n      integer(c_size_t), intent(out) :: offsets(*)\n");
  buf_puts(b, "      integer(c_size_t), value :: n\n      integer(c_size_t), intent(out) :: sizes(2)\n");
  buf_puts(b, "      integer(c_size_t) :: cfg_size\n");
  buf_printf(b, "    end function %s_cnp_layout\n", n);
  buf_printf(b, "    function %s_cnp_status_name_c(st) result(s) bind(C, name=\"cnp_status_name\")\n", n);
  buf_puts(b, "      import :: c_ptr, c_int\n      integer(c_int), value :: st\n      type(c_ptr) :: s\n");
  buf_printf(b, "    end function %s_cnp_status_name_c\n", n);
  buf_printf(b, "    function %s_cnp_last_error_c() result(s) bind(C, name=\"cnp_last_error\")\n", n);
  buf_puts(b, "      import :: c_ptr\n      type(c_ptr) :: s\n");
  buf_printf(b, "    end function %s_cnp_last_error_c\n", n);
  buf_printf(b, "    function %s_cnp_strlen(s) result(len) bind(C, name=\"strlen\")\n", n);
  buf_puts(b, "      import :: c_ptr, c_size_t\n      type(c_ptr), value :: s\n      integer(c_size_t) :: len\n");
  buf_printf(b, "    end function %s_cnp_strlen\n", n);
  buf_puts(b, "  end interface\n\n");
}

/* The generic helpers: strings, the setup with its layout check, the lookups by name. */
static void procedures(FMod *m, Buf *b) {
  GenUnit *u = m->u;
  const char *n = u->name;
  /* strings */
  buf_printf(b, "  ! A C string as a Fortran string ('' for a null pointer).\n");
  buf_printf(b, "  function %s_cnp_string(cp) result(s)\n", n);
  buf_puts(b, "    type(c_ptr), intent(in) :: cp\n    character(len=:), allocatable :: s\n");
  buf_puts(b, "    character(kind=c_char), pointer :: chars(:)\n    integer(c_size_t) :: k, len\n");
  buf_puts(b, "    if (.not. c_associated(cp)) then\n      s = ''\n      return\n    end if\n");
  buf_printf(b, "    len = %s_cnp_strlen(cp)\n", n);
  buf_puts(b, "    call c_f_pointer(cp, chars, [len])\n    allocate(character(len=len) :: s)\n");
  buf_puts(b, "    do k = 1, len\n      s(k:k) = chars(k)\n    end do\n");
  buf_printf(b, "  end function %s_cnp_string\n\n", n);
  buf_printf(b, "  ! \"CNP_EINVAL\": the name of a status code.\n");
  buf_printf(b, "  function %s_status_name(st) result(s)\n", n);
  buf_puts(b, "    integer(c_int), intent(in) :: st\n    character(len=:), allocatable :: s\n");
  buf_printf(b, "    s = %s_cnp_string(%s_cnp_status_name_c(st))\n", n, n);
  buf_printf(b, "  end function %s_status_name\n\n", n);
  buf_printf(b, "  ! The detail of the last failing libcnp call on this thread (cnp_last_error).\n");
  buf_printf(b, "  function %s_last_error() result(s)\n", n);
  buf_puts(b, "    character(len=:), allocatable :: s\n");
  buf_printf(b, "    s = %s_cnp_string(%s_cnp_last_error_c())\n", n, n);
  buf_printf(b, "  end function %s_last_error\n\n", n);
  buf_printf(b, "  ! Where the last failing step failed (%s_error): \"%s:20: compact alive: ...\".\n", n,
             base_name(u->src_path));
  buf_printf(b, "  function %s_error_message(p) result(s)\n", n);
  buf_puts(b, "    type(c_ptr), intent(in) :: p\n    character(len=:), allocatable :: s\n");
  buf_printf(b, "    s = %s_cnp_string(%s_error_c(p))\n", n, n);
  buf_printf(b, "  end function %s_error_message\n\n", n);

  /* layout check */
  buf_printf(b, "  ! Compares this module's %s_config, %s_stats and cnp_array with the C compiler's\n"
                "  ! (%s_cnp_layout.c): CNP_OK, or CNP_EABI with the first difference in msg.\n", n, n, u->stem);
  buf_printf(b, "  function %s_check_layout(msg) result(st)\n", n);
  buf_puts(b, "    character(len=:), allocatable, intent(out) :: msg\n    integer(c_int) :: st\n");
  buf_printf(b, "    type(%s_config), target :: probe\n", n);
  buf_printf(b, "    integer(c_size_t) :: coff(%d), foff(%d), csizes(2), csize\n", m->n_comp, m->n_comp);
  buf_puts(b, "    integer(c_intptr_t) :: base\n    integer :: k\n    character(len=24) :: a, c\n");
  buf_puts(b, "    base = transfer(c_loc(probe), base)\n");
  for (int i = 0; i < m->n_comp; i++)
    buf_printf(b, "    foff(%d) = int(transfer(c_loc(probe%%%s), base) - base, c_size_t)\n", i + 1, m->comp[i].f);
  buf_printf(b, "    csize = %s_cnp_layout(coff, %d_c_size_t, csizes)\n", n, m->n_comp);
  buf_puts(b, "    st = CNP_EABI\n");
  buf_printf(b, "    if (csize /= c_sizeof(probe)) then\n");
  buf_puts(b, "      write (a, '(i0)') c_sizeof(probe)\n      write (c, '(i0)') csize\n");
  buf_printf(b, "      msg = '%s_setup: the Fortran %s_config (%s_cnp.f90) has ' // trim(a) // &\n"
                "            ' bytes, the C one (%s.h) ' // trim(c) // ': regenerate both with one cnpc'\n",
             n, n, u->stem, u->stem);
  buf_puts(b, "      return\n    end if\n");
  buf_printf(b, "    do k = 1, %d\n", m->n_comp);
  buf_puts(b, "      if (foff(k) /= coff(k)) then\n");
  buf_puts(b, "        write (a, '(i0)') foff(k)\n        write (c, '(i0)') coff(k)\n");
  buf_printf(b, "        msg = '%s_setup: component ' // %s_cnp_comp_name(k) // ' of %s_config is at byte ' // &\n"
                "              trim(a) // ' in Fortran, ' // trim(c) // ' in C: regenerate both with one cnpc'\n",
             n, n, n);
  buf_puts(b, "        return\n      end if\n    end do\n");
  buf_printf(b, "    if (csizes(1) /= c_sizeof(%s_cnp_stats_probe) .or. csizes(2) /= c_sizeof(%s_cnp_array_probe)) then\n",
             n, n);
  buf_printf(b, "      msg = '%s_setup: %s_stats or cnp_array differ in size between Fortran and C'\n", n, n);
  buf_puts(b, "      return\n    end if\n");
  buf_puts(b, "    msg = ''\n    st = CNP_OK\n");
  buf_printf(b, "  end function %s_check_layout\n\n", n);
  buf_printf(b, "  function %s_cnp_comp_name(k) result(s)\n", n);
  buf_puts(b, "    integer, intent(in) :: k\n    character(len=:), allocatable :: s\n");
  buf_puts(b, "    select case (k)\n");
  for (int i = 0; i < m->n_comp; i++) buf_printf(b, "    case (%d)\n      s = '%s'\n", i + 1, m->comp[i].c);
  buf_puts(b, "    case default\n      s = '?'\n    end select\n");
  buf_printf(b, "  end function %s_cnp_comp_name\n\n", n);

  /* setup */
  buf_printf(b, "  ! %s_setup(p, cfg[, errmsg]): checks the layout of %s_config, then creates the\n"
                "  ! pipeline; CNP_OK, or a CNP_E* status with the reason in errmsg (p is then null).\n", n, n);
  buf_printf(b, "  function %s_setup(p, cfg, errmsg) result(st)\n", n);
  buf_printf(b, "    type(c_ptr), intent(out) :: p\n    type(%s_config), intent(in) :: cfg\n", n);
  buf_puts(b, "    character(len=:), allocatable, intent(out), optional :: errmsg\n    integer(c_int) :: st\n");
  buf_puts(b, "    character(kind=c_char) :: err(1024)\n    character(len=:), allocatable :: msg\n");
  buf_puts(b, "    integer :: k, len\n");
  buf_puts(b, "    p = c_null_ptr\n");
  buf_printf(b, "    st = %s_check_layout(msg)\n", n);
  buf_puts(b, "    if (st /= CNP_OK) then\n      if (present(errmsg)) errmsg = msg\n      return\n    end if\n");
  buf_puts(b, "    err(1) = c_null_char\n");
  buf_printf(b, "    st = %s_setup_c(p, cfg, err, int(size(err), c_size_t))\n", n);
  buf_puts(b, "    if (present(errmsg)) then\n");
  buf_puts(b, "      len = 0\n      do while (len < size(err))\n        if (err(len + 1) == c_null_char) exit\n"
              "        len = len + 1\n      end do\n");
  buf_puts(b, "      allocate(character(len=len) :: errmsg)\n");
  buf_puts(b, "      do k = 1, len\n        errmsg(k:k) = err(k)\n      end do\n    end if\n");
  buf_printf(b, "  end function %s_setup\n\n", n);

  /* lookups by name */
  buf_printf(b, "  ! View of a field by name (its live extent); data is null for an unknown name.\n");
  buf_printf(b, "  function %s_field(p, name) result(view)\n", n);
  buf_puts(b, "    type(c_ptr), intent(in) :: p\n    character(len=*), intent(in) :: name\n    type(cnp_array) :: view\n");
  buf_printf(b, "    view = %s_field_c(p, name // c_null_char)\n", n);
  buf_printf(b, "  end function %s_field\n\n", n);
  buf_printf(b, "  ! Current extent of a dim (-1 for an unknown dim).\n");
  buf_printf(b, "  function %s_extent(p, dim) result(ext)\n", n);
  buf_puts(b, "    type(c_ptr), intent(in) :: p\n    character(len=*), intent(in) :: dim\n    integer(c_int64_t) :: ext\n");
  buf_printf(b, "    ext = %s_extent_c(p, dim // c_null_char)\n", n);
  buf_printf(b, "  end function %s_extent\n\n", n);
  buf_printf(b, "  ! Sets the live extent of a dim (initial data): CNP_ERANGE unless 0 <= ext <= capacity.\n");
  buf_printf(b, "  function %s_set_extent(p, dim, ext) result(st)\n", n);
  buf_puts(b, "    type(c_ptr), intent(in) :: p\n    character(len=*), intent(in) :: dim\n");
  buf_puts(b, "    integer(c_int64_t), intent(in) :: ext\n    integer(c_int) :: st\n");
  buf_printf(b, "    st = %s_set_extent_c(p, dim // c_null_char, ext)\n", n);
  buf_printf(b, "  end function %s_set_extent\n\n", n);
  buf_printf(b, "  ! Host view of the latest copy into a snapshot (waits for it); CNP_ESTATE before the first.\n");
  buf_printf(b, "  function %s_snapshot(p, name, view) result(st)\n", n);
  buf_puts(b, "    type(c_ptr), intent(in) :: p\n    character(len=*), intent(in) :: name\n");
  buf_puts(b, "    type(cnp_array), intent(out) :: view\n    integer(c_int) :: st\n");
  buf_printf(b, "    st = %s_snapshot_c(p, name // c_null_char, view)\n", n);
  buf_printf(b, "  end function %s_snapshot\n\n", n);

  /* shape helper (for the accessors) */
  if (!m->accessors) return;
  buf_printf(b, "  ! The extents of the Fortran array over a whole host view (dims reversed; the pitch of\n"
                "  ! each row from the strides): CNP_OK, or why the view cannot be one.\n");
  buf_printf(b, "  function %s_cnp_extents(view, dtype, esize, rank, ext) result(st)\n", n);
  buf_puts(b, "    type(cnp_array), intent(in) :: view\n    integer(c_int), intent(in) :: dtype\n");
  buf_puts(b, "    integer(c_int64_t), intent(in) :: esize\n    integer, intent(in) :: rank\n");
  buf_puts(b, "    integer(c_int64_t), intent(out) :: ext(rank)\n    integer(c_int) :: st\n    integer :: k\n");
  buf_puts(b, "    ext = 0\n");
  buf_puts(b, "    st = CNP_EINVAL\n    if (.not. c_associated(view%data)) return\n");
  buf_puts(b, "    st = CNP_EDEVICE\n    if (view%backend /= CNP_BACKEND_HOST) return\n");
  buf_puts(b, "    st = CNP_EDTYPE\n    if (view%dtype /= dtype) return\n");
  buf_puts(b, "    st = CNP_ESHAPE\n    if (view%ndim /= rank) return\n");
  buf_puts(b, "    st = CNP_ELAYOUT\n    if (view%strides(rank) /= esize) return\n");
  buf_puts(b, "    do k = 1, rank - 1\n");
  buf_puts(b, "      if (view%strides(rank - k) <= 0) return\n");
  buf_puts(b, "      if (mod(view%strides(rank - k), view%strides(rank - k + 1)) /= 0) return\n");
  buf_puts(b, "      ext(k) = view%strides(rank - k) / view%strides(rank - k + 1)\n");
  buf_puts(b, "      if (ext(k) < view%shape(rank - k + 1)) return\n");
  buf_puts(b, "    end do\n    ext(rank) = view%shape(1)\n    st = CNP_OK\n");
  buf_printf(b, "  end function %s_cnp_extents\n\n", n);
}

/* An extent as written: "N", "3", "n_cells + 1" (arena text). */
static const char *ext_text(GenUnit *u, const Expr *e) {
  if (e->kind == EX_INT) return arena_printf(&u->cc->arena, "%lld", (long long)e->ival);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (f) {
    dump_expr(f, e);
    fclose(f);
  }
  const char *r = arena_printf(&u->cc->arena, "%s", text ? text : "?");
  free(text);
  return r;
}

/* A typed accessor: NAME_field_F(p[, stat]) or NAME_snapshot_S(p[, stat]). */
static void accessor(FMod *m, Buf *b, Decl *d, Decl *f, bool snap) {
  GenUnit *u = m->u;
  const char *n = u->name;
  int r = f->shape.rank;
  const char *fn = fn_unique(u, &m->mod, arena_printf(&u->cc->arena, "%s_%s_%s", n, snap ? "snapshot" : "field",
                                                      d->name));
  Buf dims = {0}, sect = {0};
  for (int k = 0; k < r; k++) buf_printf(&dims, "%s:", k ? ", " : "");
  for (int k = 1; k <= r; k++) buf_printf(&sect, "%s1:view%%shape(%d)", k > 1 ? ", " : "", r - k + 1);
  /* the C shape as written, and its Fortran reading */
  Buf cs = {0}, fs = {0};
  for (int k = 0; k < r; k++) buf_printf(&cs, "%s%s", k ? ", " : "", ext_text(u, f->shape.ext[k]));
  for (int k = r - 1; k >= 0; k--) buf_printf(&fs, "%s%s", k < r - 1 ? ", " : "", ext_text(u, f->shape.ext[k]));
  if (snap)
    buf_printf(b, "  ! Snapshot %s of field %s : %s[%s] as the Fortran array %s(%s) (host memory, the latest\n"
                  "  ! copy; waits for it). Null with stat /= CNP_OK before the first copy.\n",
               d->name, f->name, dtype_name(f->dtype), buf_str(&cs), f->name, buf_str(&fs));
  else
    buf_printf(b, "  ! Field %s : %s[%s] as the Fortran array %s(%s), live extent, no copy (host backend;\n"
                  "  ! null with stat = CNP_EDEVICE on CUDA). Valid until the next step.\n",
               f->name, dtype_name(f->dtype), buf_str(&cs), f->name, buf_str(&fs));
  buf_printf(b, "  function %s(p, stat) result(a)\n", fn);
  buf_puts(b, "    type(c_ptr), intent(in) :: p\n    integer(c_int), intent(out), optional :: stat\n");
  buf_printf(b, "    %s, pointer :: a(%s)\n", f_type(f->dtype, false), buf_str(&dims));
  buf_printf(b, "    %s, pointer :: whole(%s)\n", f_type(f->dtype, false), buf_str(&dims));
  buf_printf(b, "    type(cnp_array) :: view\n    integer(c_int64_t) :: ext(%d)\n    integer(c_int) :: st\n", r);
  buf_puts(b, "    a => null()\n");
  if (snap) {
    buf_printf(b, "    st = %s_snapshot_c(p, '%s' // c_null_char, view)\n", n, d->name);
    buf_puts(b, "    if (st == CNP_OK) &\n  ");
  } else {
    buf_printf(b, "    view = %s_field_c(p, '%s' // c_null_char)\n", n, d->name);
  }
  buf_printf(b, "    st = %s_cnp_extents(view, %s, %d_c_int64_t, %d, ext)\n", n, gen_cnp_dtype(f->dtype),
             elem_size(f->dtype), r);
  buf_puts(b, "    if (st == CNP_OK) then\n      call c_f_pointer(view%data, whole, ext)\n");
  buf_printf(b, "      a => whole(%s)\n    end if\n", buf_str(&sect));
  buf_puts(b, "    if (present(stat)) stat = st\n");
  buf_printf(b, "  end function %s\n\n", fn);
  buf_free(&dims);
  buf_free(&sect);
  buf_free(&cs);
  buf_free(&fs);
}

void gen_fortran(GenUnit *u, Buf *b) {
  FMod m;
  memset(&m, 0, sizeof m);
  m.u = u;
  const char *n = u->name;
  if (!isalpha((unsigned char)n[0])) {
    diag_plain(u->cc, "cannot generate the Fortran module: the pipeline name '%s' does not start with a letter", n);
    return;
  }
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_STREAM) m.n_streams++;
    if (d->kind == DECL_FIELD || (d->kind == DECL_SNAPSHOT && d->target.decl)) m.accessors++;
  }
  /* module-scope names the emitter writes itself */
  static const char *const fixed[] = {"cnp_array", "CNP_BACKEND_HOST", "CNP_BACKEND_CUDA"};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) fn_reserve(&m.mod, fixed[i]);
  static const char *const procs[] = {
      "config", "stats", "step", "sync", "teardown", "stats_get", "backend", "setup_c", "field_c",
      "extent_c", "set_extent_c", "snapshot_c", "error_c", "cnp_layout", "cnp_status_name_c",
      "cnp_last_error_c", "cnp_strlen", "cnp_string", "status_name", "last_error", "error_message",
      "check_layout", "cnp_comp_name", "setup", "field", "extent", "set_extent", "snapshot",
      "cnp_extents", "cnp_stats_probe", "cnp_array_probe"};
  for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
    fn_reserve(&m.mod, arena_printf(&u->cc->arena, "%s_%s", n, procs[i]));
  fn_reserve(&m.mod, arena_printf(&u->cc->arena, "%s_NUM_STREAMS", u->upper));
  fn_reserve(&m.mod, arena_printf(&u->cc->arena, "%s_cnp", n));

  buf_printf(b, "! Generated by cnpc from %s. DO NOT EDIT.\n", u->src_path);
  buf_printf(b, "!\n! %s_cnp.f90 -- Fortran 2008 interface to pipeline '%s' (the C API of %s.h).\n", u->stem, n,
             u->stem);
  buf_printf(b, "! Build: compile %s_cnp.f90 and %s_cnp_layout.c (the C side of the layout check) with the\n"
                "! generated %s.c (or %s.cu), link libcnp. docs/interfaces.md has the details.\n",
             u->stem, u->stem, u->stem, u->stem);
  buf_printf(b, "!\n!   use %s_cnp\n!   type(%s_config) :: cfg      ! defaults as %s_CONFIG_INIT\n", n, n, u->upper);
  buf_printf(b, "!   type(c_ptr) :: p\n!   cfg%%... = ...              ! the dims and setup params\n");
  buf_printf(b, "!   if (%s_setup(p, cfg, errmsg) /= CNP_OK) ...   ! errmsg: why\n", n);
  buf_printf(b, "!   st = %s_step(p, ...);  st = %s_sync(p)\n", n, n);
  buf_printf(b, "!   x => %s_field_x(p)       ! a Fortran pointer into the field, no copy (host)\n", n);
  buf_printf(b, "!   call %s_teardown(p)\n", n);
  buf_puts(b, "!\n! Index mapping: a field F : T[e0, ..., ek] (C order) is the Fortran array F(ek, ..., e0);\n"
              "! C F[i0, ..., ik] is Fortran F(ik + 1, ..., i0 + 1). So v : f64[3, N] is v(N, 3) and\n"
              "! C v[c, i] is v(i + 1, c + 1). bool elements are logical(c_bool), f16 their binary16 bits\n"
              "! (integer(c_int16_t)), u64 the bits of an integer(c_int64_t).\n");
  buf_printf(b, "module %s_cnp\n", n);
  buf_puts(b, "  use, intrinsic :: iso_c_binding\n  implicit none\n\n");
  /* constants */
  buf_puts(b, "  ! Status codes (cnp_status, cnp/cnp.h): 0 is success, errors are negative.\n");
#define F_STATUS(name, code, text) buf_printf(b, "  integer(c_int), parameter :: CNP_%-12s = %4d  ! %s\n", #name, code, text);
  CNP_STATUS_MAP(F_STATUS)
#undef F_STATUS
  buf_puts(b, "\n  ! Backends (cnp_backend) and element types (cnp_dtype).\n");
  buf_puts(b, "  integer(c_int), parameter :: CNP_BACKEND_HOST = 0, CNP_BACKEND_CUDA = 1\n");
  static const char *const dts[] = {"CNP_BOOL", "CNP_INT32", "CNP_INT64", "CNP_UINT64", "CNP_FLOAT16",
                                    "CNP_FLOAT32", "CNP_FLOAT64", "CNP_COMPLEX64", "CNP_COMPLEX128"};
  for (int i = 0; i < 9; i++) buf_printf(b, "  integer(c_int), parameter :: %s = %d\n", dts[i], i);
  buf_printf(b, "  ! Number of streams the pipeline declares.\n  integer, parameter :: %s_NUM_STREAMS = %d\n\n",
             u->upper, m.n_streams);
  /* types */
  buf_puts(b, "  ! A view of an array (cnp_array): data is a host or device address, shape and strides\n"
              "  ! (bytes) in C order.\n");
  buf_puts(b, "  type, bind(C) :: cnp_array\n    type(c_ptr) :: data = c_null_ptr\n    integer(c_int) :: dtype = 0\n"
              "    integer(c_int) :: ndim = 0\n    integer(c_int64_t) :: shape(4) = 0\n"
              "    integer(c_int64_t) :: strides(4) = 0\n    integer(c_int) :: backend = 0\n"
              "    integer(c_int) :: device = 0\n    integer(c_int32_t) :: flags = 0\n"
              "    integer(c_int64_t) :: alloc_id = 0\n  end type cnp_array\n\n");
  config_type(&m, b);
  buf_printf(b, "  ! Counters of the last step and totals since setup (%s_stats; unsigned in C).\n", n);
  buf_printf(b, "  type, bind(C) :: %s_stats\n", n);
  buf_puts(b, "    integer(c_int64_t) :: steps = 0             ! completed step calls\n"
              "    integer(c_int64_t) :: launches = 0          ! kernels (host: fused loops) of the last step\n"
              "    integer(c_int64_t) :: host_syncs = 0        ! host synchronizations in the last step\n"
              "    integer(c_int64_t) :: graph_replays = 0     ! CUDA graph launches in total\n"
              "    integer(c_int64_t) :: total_launches = 0    ! kernels since setup\n"
              "    integer(c_int64_t) :: total_host_syncs = 0  ! host synchronizations since setup\n");
  buf_printf(b, "  end type %s_stats\n\n", n);
  buf_printf(b, "  type(%s_stats), private, save :: %s_cnp_stats_probe\n", n, n);
  buf_printf(b, "  type(cnp_array), private, save :: %s_cnp_array_probe\n\n", n);
  interfaces(&m, b);
  static const char *const priv[] = {"setup_c", "field_c", "extent_c", "set_extent_c", "snapshot_c",
                                     "error_c", "cnp_status_name_c", "cnp_last_error_c", "cnp_strlen",
                                     "cnp_string", "cnp_comp_name"};
  for (size_t i = 0; i < sizeof priv / sizeof priv[0]; i++) buf_printf(b, "  private :: %s_%s\n", n, priv[i]);
  if (m.accessors) buf_printf(b, "  private :: %s_cnp_extents\n", n);
  buf_puts(b, "\n");
  buf_puts(b, "contains\n\n");
  procedures(&m, b);
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_FIELD) accessor(&m, b, d, d, false);
    if (d->kind == DECL_SNAPSHOT && d->target.decl) accessor(&m, b, d, d->target.decl, true);
  }
  buf_printf(b, "end module %s_cnp\n", n);
  fold_lines(b);
}

/* STEM_cnp_layout.c: the C side of the layout check. */
void gen_fortran_c(GenUnit *u, Buf *b) {
  const char *n = u->name;
  buf_printf(b, "/* Generated by cnpc from %s. DO NOT EDIT. */\n", u->src_path);
  buf_printf(b, "/*\n** %s_cnp_layout.c -- the C side of the layout check of %s_cnp.f90: %s_setup (Fortran)\n"
                "** compares the offsets and sizes the C compiler gives %s_config, %s_stats and cnp_array\n"
                "** with the Fortran module's before it calls the C %s_setup.\n*/\n",
             u->stem, u->stem, n, n, n, n);
  buf_printf(b, "#include \"%s.h\"\n\n#include <stddef.h>\n\n", u->stem);
  buf_printf(b, "size_t %s_cnp_layout(size_t *offsets, size_t n, size_t sizes[2]);\n\n", n);
  buf_printf(b, "size_t %s_cnp_layout(size_t *offsets, size_t n, size_t sizes[2])\n{\n", n);
  buf_puts(b, "  static const size_t off[] = {\n");
  buf_printf(b, "    offsetof(%s_config, backend),\n    offsetof(%s_config, strict),\n", n, n);
  buf_printf(b, "    offsetof(%s_config, mpi_fcomm),\n    offsetof(%s_config, cuda_streams),\n", n, n);
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_DIM || (d->kind == DECL_PARAM && d->setup))
      buf_printf(b, "    offsetof(%s_config, %s),\n", n, d->name);
    else if (d->kind == DECL_MIRROR)
      buf_printf(b, "    offsetof(%s_config, %s_host),\n", n, d->name);
  }
  buf_puts(b, "  };\n");
  buf_puts(b, "  for (size_t i = 0; i < n && i < sizeof off / sizeof off[0]; i++) offsets[i] = off[i];\n");
  buf_printf(b, "  sizes[0] = sizeof(%s_stats);\n  sizes[1] = sizeof(cnp_array);\n", n);
  buf_printf(b, "  return sizeof(%s_config);\n}\n", n);
}
