/*
** print.c -- `cnpc --print`: the checked AST printed back as .cnp source, for the
** differential tests' round trip (scripts/difftest: `--dump-ast` of the printed program must
** equal `--dump-ast` of the original, and printing the printed program changes nothing).
** One declaration or statement per line; every operator application parenthesized; every
** let and const with its (checked) type; imported declarations stay behind their `import`.
*/
#include "cnpc.h"

#include <string.h>

static void pexpr(FILE *o, const Expr *e);

static void pargs(FILE *o, Expr **a, int n) {
  for (int i = 0; i < n; i++) {
    if (i) fputs(", ", o);
    pexpr(o, a[i]);
  }
}

static void pfloat(FILE *o, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", v);
  if (!strpbrk(buf, ".en")) strcat(buf, ".0");
  fputs(buf, o);
}

static void pexpr(FILE *o, const Expr *e) {
  switch (e->kind) {
  case EX_INT:
    if (e->uval > (uint64_t)INT64_MAX) fprintf(o, "%llu", (unsigned long long)e->uval);
    else fprintf(o, "%lld", (long long)e->ival);
    return;
  case EX_FLOAT: pfloat(o, e->fval); return;
  case EX_BOOL: fputs(e->ival ? "true" : "false", o); return;
  case EX_NAME: fputs(e->ref.name, o); return;
  case EX_INDEX:
    fprintf(o, "%s[", e->ref.name);
    pargs(o, e->args, e->nargs);
    fputc(']', o);
    return;
  case EX_UNARY:
    fprintf(o, "(%s", op_text(e->op));
    pexpr(o, e->args[0]);
    fputc(')', o);
    return;
  case EX_BINARY:
    fputc('(', o);
    pexpr(o, e->args[0]);
    fprintf(o, " %s ", op_text(e->op));
    pexpr(o, e->args[1]);
    fputc(')', o);
    return;
  case EX_CALL:
    fprintf(o, "%s(", e->ref.name);
    pargs(o, e->args, e->nargs);
    fputc(')', o);
    return;
  case EX_CAST:
    fprintf(o, "%s(", dtype_name(e->cast_to));
    pexpr(o, e->args[0]);
    fputc(')', o);
    return;
  }
}

static void prefs(FILE *o, const RefList *l) {
  fputc('(', o);
  for (int i = 0; i < l->n; i++) fprintf(o, "%s%s", i ? ", " : "", l->v[i].name);
  fputc(')', o);
}

static void pindent(FILE *o, int n) {
  for (int i = 0; i < n; i++) fputs("  ", o);
}

static void pstmts(FILE *o, const Stmt *s, int lvl);

static void pif(FILE *o, const Stmt *s, int lvl) {
  fputs("if ", o);
  pexpr(o, s->value);
  fputs(" {\n", o);
  pstmts(o, s->body, lvl + 1);
  pindent(o, lvl);
  fputc('}', o);
  if (s->else_body) {
    if (s->else_body->kind == ST_IF && !s->else_body->next) {
      fputs(" else ", o);
      pif(o, s->else_body, lvl);
      return;
    }
    fputs(" else {\n", o);
    pstmts(o, s->else_body, lvl + 1);
    pindent(o, lvl);
    fputc('}', o);
  }
}

static void pstmt(FILE *o, const Stmt *s, int lvl) {
  pindent(o, lvl);
  switch (s->kind) {
  case ST_MAP:
    if (s->gndim) {   /* map (j, i) in G */
      fputs("map (", o);
      for (int a = 0; a < s->gndim; a++) fprintf(o, "%s%s", a ? ", " : "", s->gidx[a]->name);
      fprintf(o, ") in %s {\n", s->over.name);
    } else
      fprintf(o, "map %s in %s {\n", s->index->name, s->over.name);
    pstmts(o, s->body, lvl + 1);
    pindent(o, lvl);
    fputs("}\n", o);
    return;
  case ST_COMPACT: fprintf(o, "compact %s ", s->a.name); prefs(o, &s->list); break;
  case ST_SORT: fprintf(o, "sort %s ", s->a.name); prefs(o, &s->list); break;
  case ST_OFFSETS: fprintf(o, "offsets %s -> %s", s->a.name, s->b.name); break;
  case ST_SEGMENTS:
    fprintf(o, "%s = segments(%s, ", s->a.name, s->b.name);
    pexpr(o, s->value);
    fputc(')', o);
    break;
  case ST_SUM: fprintf(o, "sum %s ", s->a.name); prefs(o, &s->list); fprintf(o, " -> %s", s->b.name); break;
  case ST_RECORD: fprintf(o, "record %s", s->a.name); break;
  case ST_WAIT: fprintf(o, "wait %s", s->a.name); break;
  case ST_COPY: fprintf(o, "copy %s <- %s", s->a.name, s->b.name); break;
  case ST_REFRESH: fprintf(o, "refresh %s %s", s->a.name, s->to_device ? "to_device" : "to_host"); break;
  case ST_EXCHANGE:
    fprintf(o, "exchange %s ", s->a.name);
    if (s->b.name) fprintf(o, "(%s) ", s->b.name);
    fputs("with ", o);
    pexpr(o, s->value);
    if (s->value2) {
      fputs(" from ", o);
      pexpr(o, s->value2);
    }
    break;
  case ST_MIGRATE: fputs("migrate ", o); prefs(o, &s->list); fprintf(o, " by %s", s->a.name); break;
  case ST_MIGRATE_TO:
    fputs("migrate ", o);
    prefs(o, &s->list);
    fprintf(o, " to %s at ", s->b.name);
    prefs(o, &s->pos);
    break;
  case ST_ALLREDUCE:
    fputs("allreduce ", o);
    for (int i = 0; i < s->list.n; i++) fprintf(o, "%s%s", i ? ", " : "", s->list.v[i].name);
    break;
  case ST_CALL:
    fprintf(o, "%s(", s->a.name);
    pargs(o, s->args, s->nargs);
    fputc(')', o);
    if (s->value2) {
      fputs(" over ", o);
      pexpr(o, s->value2);
    }
    break;
  case ST_LET:
    fprintf(o, "let %s : %s = ", s->let->name, dtype_name(s->let->type));
    pexpr(o, s->value);
    break;
  case ST_ASSIGN: case ST_ADD:
    pexpr(o, s->target);
    fputs(s->kind == ST_ADD ? " += " : " = ", o);
    pexpr(o, s->value);
    break;
  case ST_IF:
    pif(o, s, lvl);
    fputc('\n', o);
    return;
  case ST_REDUCE:
    pexpr(o, s->target);
    fputs(s->red == RED_SUM ? " += " : s->red == RED_MIN ? " min= " : " max= ", o);
    pexpr(o, s->value);
    break;
  case ST_ZERO: fputs("zero", o); prefs(o, &s->list); break;
  case ST_HISTORY: fprintf(o, "record %s", s->a.name); break;
  case ST_SCAN:
    fprintf(o, "scan %s %s -> %s", s->inclusive ? "inclusive" : "exclusive", s->a.name, s->b.name);
    break;
  case ST_FFT: case ST_IFFT:
    fprintf(o, "%s %s -> %s", stmt_of(s->kind)->name, s->a.name, s->b.name);
    break;
  case ST_DEPOSIT: case ST_GATHER:
    fprintf(o, "%s ", s->kind == ST_DEPOSIT ? "deposit" : "gather");
    if (s->a.name) fputs(s->a.name, o);
    else pexpr(o, s->value);
    fputs(" at ", o);
    prefs(o, &s->list);
    fprintf(o, " -> %s with %s%s", s->b.name, pshape_names[s->pshape], s->atomic ? " atomic" : "");
    break;
  case ST_SWAP: fprintf(o, "swap %s, %s", s->a.name, s->b.name); break;
  case ST_HALO: fprintf(o, "halo %s", s->a.name); break;
  case ST_APPEND:
    fprintf(o, "append %s (", s->over.name);
    pexpr(o, s->value);
    fprintf(o, ") map %s%s%s {\n", s->index->name, s->let ? ", " : "", s->let ? s->let->name : "");
    pstmts(o, s->body, lvl + 1);
    pindent(o, lvl);
    fputs("}\n", o);
    return;
  case ST_EVERY: case ST_REPEAT:
    fputs(s->kind == ST_EVERY ? "every " : "repeat ", o);
    pexpr(o, s->value);
    if (s->value2) {
      fputs(" offset ", o);
      pexpr(o, s->value2);
    }
    fputs(" {\n", o);
    pstmts(o, s->body, lvl + 1);
    pindent(o, lvl);
    fputs("}\n", o);
    return;
  case ST_REPEAT_END: case ST_EVERY_END:   /* lower.c's step IR only, never in the AST */
  case ST__COUNT:
    fputs("# (internal)\n", o);
    return;
  }
  fputs(";\n", o);
}

static void pstmts(FILE *o, const Stmt *s, int lvl) {
  for (; s; s = s->next) pstmt(o, s, lvl);
}

static const char *aware(CudaAware a) {
  return a == CUDA_AWARE_ON ? "on" : a == CUDA_AWARE_OFF ? "off" : "auto";
}

static void pshape(FILE *o, const Shape *sh) {
  fputc('[', o);
  pargs(o, sh->ext, sh->rank);
  fputc(']', o);
}

void print_program(Cnp *cc, FILE *o) {
  for (const Decl *d = cc->decls; d; d = d->next) {
    if (d->file && d->file->imported) continue;    /* printed as its import */
    switch (d->kind) {
    case DECL_PIPELINE: fprintf(o, "pipeline %s;\n", d->name); break;
    case DECL_IMPORT: fprintf(o, "import \"%s\";\n", d->path); break;
    case DECL_PARAM: fprintf(o, "param %s : %s%s;\n", d->name, dtype_name(d->dtype), d->setup ? " setup" : ""); break;
    case DECL_CONST:
      fprintf(o, "const %s : %s = ", d->name, dtype_name(d->dtype));
      pexpr(o, d->value);
      fputs(";\n", o);
      break;
    case DECL_DIM: fprintf(o, "dim %s;\n", d->name); break;
    case DECL_FIELD:
      if (d->scalar) {
        fprintf(o, "scalar %s : %s;\n", d->name, dtype_name(d->dtype));
        break;
      }
      if (d->history_of.name) {
        fprintf(o, "history %s = %s[", d->name, d->history_of.name);
        pexpr(o, d->shape.ext[0]);
        fputs("];\n", o);
        break;
      }
      fprintf(o, "field %s : %s", d->name, dtype_name(d->dtype));
      pshape(o, d->grid_of ? &d->written : &d->shape);
      fputs(";\n", o);
      break;
    case DECL_GRID: {
      const GridInfo *g = d->grid;
      if (d->target.name) {   /* grid K = rfft(G); */
        fprintf(o, "grid %s = rfft(%s%s)%s", d->name, d->target.name, d->fft_measure ? ", measure" : "", ";\n");
        break;
      }
      fprintf(o, "grid %s = ", d->name);
      pshape(o, &d->shape);
      fputs(" boundary(", o);
      for (int a = 0; a < g->ndim; a++) {
        fprintf(o, "%s%s", a ? ", " : "", grid_bound_name(g->axis[a].bound));
        if (g->axis[a].bound == GB_GHOST) fprintf(o, "(%d)", g->axis[a].ghost);
      }
      fputc(')', o);
      bool any = false;
      for (int a = 0; a < g->ndim; a++) any = any || g->axis[a].length;
      if (any) {
        fputs(" length(", o);
        for (int a = 0; a < g->ndim; a++) {
          if (a) fputs(", ", o);
          pexpr(o, g->axis[a].length ? g->axis[a].length : g->axis[a].ext);
        }
        fputc(')', o);
      }
      if (g->split) fputs(" split", o);
      fputs(";\n", o);
      break;
    }
    case DECL_STREAM: fprintf(o, "stream %s;\n", d->name); break;
    case DECL_EVENT: fprintf(o, "event %s;\n", d->name); break;
    case DECL_SNAPSHOT: fprintf(o, "snapshot %s = host_staging(%s, slots = %d);\n", d->name, d->target.name, d->slots); break;
    case DECL_MPI:
      fprintf(o, "mpi %s = mpi_staging(%s", d->name, dtype_name(d->dtype));
      pshape(o, &d->shape);
      fprintf(o, ", cuda_aware = %s);\n", aware(d->cuda_aware));
      break;
    case DECL_MIRROR: fprintf(o, "mirror %s = device_mirror(%s);\n", d->name, d->target.name); break;
    case DECL_PLAN:
      fprintf(o, "plan %s = segments(%s, ", d->name, d->target.name);
      pexpr(o, d->value);
      fputs(");\n", o);
      break;
    case DECL_KERNEL:
      fprintf(o, "kernel %s from \"%s\"", d->name, d->path);
      if (d->host_path) fprintf(o, " host \"%s\"", d->host_path);
      fputs(";\n", o);
      break;
    case DECL_STEP:
      if (!d->stream.name) {                        /* a top-level exchange / migrate */
        pstmts(o, d->body, 0);
        break;
      }
      fputs("step", o);
      if (d->name) fprintf(o, " %s", d->name);
      fprintf(o, " on %s", d->stream.name);
      for (int i = 0; i < d->after.n; i++) fprintf(o, "%s%s", i ? ", " : " after ", d->after.v[i].name);
      if (d->every) {
        fputs(" every ", o);
        pexpr(o, d->every);
      }
      if (d->every_offset) {
        fputs(" offset ", o);
        pexpr(o, d->every_offset);
      }
      fputs(" {\n", o);
      pstmts(o, d->body, 1);
      fputs("}\n", o);
      break;
    case DECL__COUNT: break;
    }
  }
}
