/*
** dump.c -- the stable text form of the checked AST (--dump-ast, tests/parse).
** Declarations one per line in program order; statements indented by nesting;
** expressions as typed s-expressions: (+:f64 x[i] (*:f64 dt v[0, i])).
*/
#include "cnpc.h"

#include <string.h>

static void shape(FILE *o, const Shape *sh) {
  fputc('[', o);
  for (int i = 0; i < sh->rank; i++) {
    if (i) fputs(", ", o);
    dump_expr(o, sh->ext[i]);
  }
  fputc(']', o);
}

static void refs(FILE *o, const RefList *l) {
  fputc('(', o);
  for (int i = 0; i < l->n; i++) fprintf(o, "%s%s", i ? ", " : "", l->v[i].name);
  fputc(')', o);
}

void dump_expr(FILE *o, const Expr *e) {
  switch (e->kind) {
  case EX_INT:
    if (e->type == DT_U64) fprintf(o, "%llu", (unsigned long long)e->uval);
    else fprintf(o, "%lld", (long long)e->ival);
    return;
  case EX_FLOAT: {
    /* "%.17g", with ".0" when that reads as an integer ("3" -> "3.0"; not "1e+300", "inf"):
    ** decided on the text, since a cast of 1e300 to an integer is undefined. */
    char t[40];
    snprintf(t, sizeof t, "%.17g", e->fval);
    fputs(t, o);
    if (!strpbrk(t, ".eEn")) fputs(".0", o);
    return;
  }
  case EX_BOOL: fputs(e->ival ? "true" : "false", o); return;
  case EX_NAME: fputs(e->ref.name, o); return;
  case EX_INDEX:
    fprintf(o, "%s[", e->ref.name);
    for (int i = 0; i < e->nargs; i++) {
      if (i) fputs(", ", o);
      dump_expr(o, e->args[i]);
    }
    fputc(']', o);
    if (e->flags & EXF_GATHER) fputs("@gather", o);
    return;
  case EX_UNARY: case EX_BINARY:
    fprintf(o, "(%s:%s", op_text(e->op), dtype_name(e->type));
    break;
  case EX_CALL:
    fprintf(o, "(%s:%s", e->builtin ? builtin_name(e->builtin) : e->ref.name, dtype_name(e->type));
    break;
  case EX_CAST:
    fprintf(o, "(cast:%s", dtype_name(e->cast_to));
    break;
  }
  for (int i = 0; i < e->nargs; i++) {
    fputc(' ', o);
    dump_expr(o, e->args[i]);
  }
  fputc(')', o);
}

static void indent(FILE *o, int n) {
  for (int i = 0; i < n; i++) fputs("  ", o);
}

static void stmts(FILE *o, const Stmt *s, int lvl);

/* A statement with a body (map, append, every, repeat, if), its head and its body; false for
** any other statement. */
static bool block_stmt(FILE *o, const Stmt *s, int lvl) {
  switch (s->kind) {
  case ST_MAP:
    if (s->gndim) {   /* map (j, i) in G */
      fputs("map (", o);
      for (int a = 0; a < s->gndim; a++) fprintf(o, "%s%s", a ? ", " : "", s->gidx[a]->name);
      fprintf(o, ") in %s\n", s->over.name);
    } else
      fprintf(o, "map %s in %s\n", s->index->name, s->over.name);
    stmts(o, s->body, lvl + 1);
    return true;
  case ST_APPEND:
    fprintf(o, "append %s (", s->over.name);
    dump_expr(o, s->value);
    fprintf(o, ") map %s%s%s\n", s->index->name, s->let ? ", " : "", s->let ? s->let->name : "");
    stmts(o, s->body, lvl + 1);
    return true;
  case ST_EVERY:
    fputs("every ", o);
    dump_expr(o, s->value);
    if (s->value2) {
      fputs(" offset ", o);
      dump_expr(o, s->value2);
    }
    fputc('\n', o);
    stmts(o, s->body, lvl + 1);
    return true;
  case ST_REPEAT:
    fputs("repeat ", o);
    dump_expr(o, s->value);
    fputc('\n', o);
    stmts(o, s->body, lvl + 1);
    return true;
  case ST_IF:
    fputs("if ", o);
    dump_expr(o, s->value);
    fputc('\n', o);
    stmts(o, s->body, lvl + 1);
    if (s->else_body) {
      indent(o, lvl);
      fputs("else\n", o);
      stmts(o, s->else_body, lvl + 1);
    }
    return true;
  default: return false;
  }
}

static void stmt(FILE *o, const Stmt *s, int lvl) {
  indent(o, lvl);
  if (block_stmt(o, s, lvl)) return;
  switch (s->kind) {
  case ST_COMPACT: fprintf(o, "compact %s ", s->a.name); refs(o, &s->list); break;
  case ST_SORT: fprintf(o, "sort %s ", s->a.name); refs(o, &s->list); break;
  case ST_OFFSETS: fprintf(o, "offsets %s -> %s", s->a.name, s->b.name); break;
  case ST_SEGMENTS:
    fprintf(o, "%s = segments(%s, ", s->a.name, s->b.name);
    dump_expr(o, s->value);
    fputc(')', o);
    break;
  case ST_SUM: fprintf(o, "sum %s ", s->a.name); refs(o, &s->list); fprintf(o, " -> %s", s->b.name); break;
  case ST_RECORD: fprintf(o, "record %s", s->a.name); break;
  case ST_WAIT: fprintf(o, "wait %s", s->a.name); break;
  case ST_COPY: fprintf(o, "copy %s <- %s", s->a.name, s->b.name); break;
  case ST_REFRESH: fprintf(o, "refresh %s %s", s->a.name, s->to_device ? "to_device" : "to_host"); break;
  case ST_EXCHANGE:
    fprintf(o, "exchange %s (%s) with ", s->a.name, s->b.name);
    dump_expr(o, s->value);
    if (s->value2) {
      fputs(" from ", o);
      dump_expr(o, s->value2);
    }
    break;
  case ST_MIGRATE: fputs("migrate ", o); refs(o, &s->list); fprintf(o, " by %s", s->a.name); break;
  case ST_MIGRATE_TO:
    fputs("migrate ", o);
    refs(o, &s->list);
    fprintf(o, " to %s at ", s->b.name);
    refs(o, &s->pos);
    break;
  case ST_ALLREDUCE: fputs("allreduce ", o); refs(o, &s->list); break;
  case ST_CALL:
    fprintf(o, "call %s(", s->a.name);
    for (int i = 0; i < s->nargs; i++) {
      if (i) fputs(", ", o);
      dump_expr(o, s->args[i]);
    }
    fputc(')', o);
    if (s->value2) {
      fputs(" over ", o);
      dump_expr(o, s->value2);
    }
    break;
  case ST_LET:
    fprintf(o, "let %s : %s = ", s->let->name, dtype_name(s->let->type));
    dump_expr(o, s->value);
    break;
  case ST_ASSIGN: case ST_ADD:
    fputs(s->scatter ? "scatter-add " : s->kind == ST_ADD ? "add " : "store ", o);
    dump_expr(o, s->target);
    fprintf(o, " : %s %s ", dtype_name(s->target->type), s->kind == ST_ADD ? "+=" : "=");
    dump_expr(o, s->value);
    break;
  case ST_REDUCE:
    fprintf(o, "reduce %s : %s %s ", s->target->ref.name, dtype_name(s->target->type),
            s->red == RED_SUM ? "+=" : s->red == RED_MIN ? "min=" : "max=");
    dump_expr(o, s->value);
    break;
  case ST_HISTORY: fprintf(o, "record history %s", s->a.name); break;
  case ST_SWAP: fprintf(o, "swap %s, %s", s->a.name, s->b.name); break;
  case ST_HALO: fprintf(o, "halo %s", s->a.name); break;
  case ST_SCAN:
    fprintf(o, "scan %s %s -> %s", s->inclusive ? "inclusive" : "exclusive", s->a.name, s->b.name);
    break;
  case ST_FFT: case ST_IFFT:
    fprintf(o, "%s %s -> %s", stmt_of(s->kind)->name, s->a.name, s->b.name);
    break;
  case ST_DEPOSIT: case ST_GATHER:
    fprintf(o, "%s ", stmt_of(s->kind)->name);
    if (s->a.name) fputs(s->a.name, o);
    else dump_expr(o, s->value);
    fputs(" at ", o);
    refs(o, &s->list);
    fprintf(o, " -> %s with %s%s", s->b.name, pshape_names[s->pshape], s->atomic ? " atomic" : "");
    break;
  default:   /* a statement of the table's generic form: NAME (ARRAYS) */
    fprintf(o, "%s ", stmt_of(s->kind)->name);
    refs(o, &s->list);
    break;
  }
  fputc('\n', o);
}

static void stmts(FILE *o, const Stmt *s, int lvl) {
  for (; s; s = s->next) stmt(o, s, lvl);
}

static const char *aware_name(CudaAware a) {
  return a == CUDA_AWARE_ON ? "on" : a == CUDA_AWARE_OFF ? "off" : "auto";
}

void dump_ast(Cnp *cc, FILE *o) {
  for (const Decl *d = cc->decls; d; d = d->next) {
    switch (d->kind) {
    case DECL_PIPELINE: fprintf(o, "pipeline %s\n", d->name); break;
    case DECL_IMPORT: fprintf(o, "import \"%s\"\n", d->path); break;
    case DECL_PARAM: fprintf(o, "param %s : %s%s\n", d->name, dtype_name(d->dtype), d->setup ? " setup" : ""); break;
    case DECL_CONST:
      fprintf(o, "const %s : %s = ", d->name, dtype_name(d->dtype));
      if (d->dtype == DT_BOOL) fprintf(o, "%s\n", d->ival ? "true" : "false");
      else if (dtype_is_float(d->dtype)) fprintf(o, "%.17g\n", d->fval);
      else if (d->dtype == DT_U64) fprintf(o, "%llu\n", (unsigned long long)d->ival);
      else fprintf(o, "%lld\n", (long long)d->ival);
      break;
    case DECL_DIM: fprintf(o, "dim %s\n", d->name); break;
    case DECL_FIELD:
      if (d->scalar) {
        fprintf(o, "scalar %s : %s\n", d->name, dtype_name(d->dtype));
        break;
      }
      if (d->history_of.name) {
        fprintf(o, "history %s = %s[", d->name, d->history_of.name);
        dump_expr(o, d->shape.ext[0]);
        fputs("]\n", o);
        break;
      }
      fprintf(o, "field %s : %s", d->name, dtype_name(d->dtype));
      shape(o, d->grid_of ? &d->written : &d->shape);
      fputc('\n', o);
      break;
    case DECL_GRID: {
      const GridInfo *g = d->grid;
      if (d->target.name) {   /* grid K = rfft(G); */
        fprintf(o, "grid %s = rfft(%s%s)%s", d->name, d->target.name, d->fft_measure ? ", measure" : "", "\n");
        break;
      }
      fprintf(o, "grid %s = ", d->name);
      shape(o, &d->shape);
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
          dump_expr(o, g->axis[a].length ? g->axis[a].length : g->axis[a].ext);
        }
        fputc(')', o);
      }
      if (g->split) fputs(" split", o);
      fputc('\n', o);
      break;
    }
    case DECL_STREAM: fprintf(o, "stream %s\n", d->name); break;
    case DECL_EVENT: fprintf(o, "event %s\n", d->name); break;
    case DECL_SNAPSHOT: fprintf(o, "snapshot %s = host_staging(%s, slots = %d)\n", d->name, d->target.name, d->slots); break;
    case DECL_MPI:
      fprintf(o, "mpi %s = mpi_staging(%s", d->name, dtype_name(d->dtype));
      shape(o, &d->shape);
      fprintf(o, ", cuda_aware = %s)\n", aware_name(d->cuda_aware));
      break;
    case DECL_MIRROR: fprintf(o, "mirror %s = device_mirror(%s)\n", d->name, d->target.name); break;
    case DECL_PLAN:
      fprintf(o, "plan %s = segments(%s, ", d->name, d->target.name);
      dump_expr(o, d->value);
      fputs(")\n", o);
      break;
    case DECL_KERNEL:
      fprintf(o, "kernel %s from \"%s\"", d->name, d->path);
      if (d->host_path) fprintf(o, " host \"%s\"", d->host_path);
      fputc('\n', o);
      break;
    case DECL_STEP:
      if (!d->stream.name) {
        fputs("host step\n", o);
      } else {
        fputs("step", o);
        if (d->name) fprintf(o, " %s", d->name);
        fprintf(o, " on %s", d->stream.name);
        for (int i = 0; i < d->after.n; i++) fprintf(o, "%s%s", i ? ", " : " after ", d->after.v[i].name);
        if (d->every) {
          fputs(" every ", o);
          dump_expr(o, d->every);
        }
        if (d->every_offset) {
          fputs(" offset ", o);
          dump_expr(o, d->every_offset);
        }
        fputc('\n', o);
      }
      stmts(o, d->body, 1);
      break;
    case DECL__COUNT: break;
    }
  }
}
