/*
** test_mpi_nompi.c — a build without MPI: the MPI API exists and answers
** CNP_EUNSUPPORTED ("built without MPI") everywhere, and NULL destroys are no-ops.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnp/cnp.h"

static int checks;

#define EXPECT_UNSUPPORTED(call)                                                     \
  do {                                                                               \
    checks++;                                                                        \
    cnp_status st_ = (call);                                                         \
    if (st_ != CNP_EUNSUPPORTED || !strstr(cnp_last_error(), "built without MPI")) { \
      fprintf(stderr, "%s:%d: %s returned %s (%s)\n", __FILE__, __LINE__, #call,    \
              cnp_status_name(st_), cnp_last_error());                               \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

#define CHECK(cond)                                                                  \
  do {                                                                               \
    checks++;                                                                        \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);       \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

int main(void)
{
  cnp_comm *c = (cnp_comm *)&c;
  EXPECT_UNSUPPORTED(cnp_comm_create(&c, 0));
  CHECK(c == NULL);
  CHECK(cnp_comm_destroy(NULL) == CNP_OK);
  CHECK(cnp_comm_rank(NULL) == -1 && cnp_comm_size(NULL) == -1);
  int src = 0;
  EXPECT_UNSUPPORTED(cnp_comm_partner_source(NULL, 0, &src));
  char one = 0, all[1];
  EXPECT_UNSUPPORTED(cnp_comm_allgather(NULL, &one, 1, all));
  cnp_pairing pr;
  EXPECT_UNSUPPORTED(cnp_comm_check_pairing(NULL, NULL, NULL, NULL, &pr));
  CHECK(pr.bad_rank == -1);
  char v[16] = "x";
  EXPECT_UNSUPPORTED(cnp_mpi_library_version(v, sizeof v));
  CHECK(v[0] == '\0');
  int64_t n = 4;
  cnp_mpi_stage *s = (cnp_mpi_stage *)&s;
  EXPECT_UNSUPPORTED(cnp_mpi_stage_create(&s, NULL, CNP_FLOAT64, 1, &n, CNP_CUDA_AWARE_AUTO));
  CHECK(s == NULL);
  CHECK(cnp_mpi_stage_destroy(NULL) == CNP_OK);
  cnp_array a;
  memset(&a, 0, sizeof a);
  cnp_mpi_ctx *ctx = NULL;
  EXPECT_UNSUPPORTED(cnp_mpi_send_begin(NULL, &a, NULL, NULL, &ctx));
  EXPECT_UNSUPPORTED(cnp_mpi_recv_begin(NULL, &a, NULL, NULL, &ctx));
  EXPECT_UNSUPPORTED(cnp_mpi_end(NULL));
  EXPECT_UNSUPPORTED(cnp_mpi_exchange(NULL, &a, 0, 0, 0, NULL, NULL));
  EXPECT_UNSUPPORTED(cnp_synchronize_for_mpi(&a, NULL, NULL));
  cnp_migrate_plan *p = (cnp_migrate_plan *)&p;
  EXPECT_UNSUPPORTED(cnp_migrate_plan_create(&p, NULL, &a, 1, CNP_CUDA_AWARE_OFF));
  CHECK(p == NULL);
  CHECK(cnp_migrate_plan_destroy(NULL) == CNP_OK);
  int64_t out = 0;
  EXPECT_UNSUPPORTED(cnp_migrate(NULL, &a, 1, 0, &a, NULL, NULL, &out));
  cnp_domain d = {.ndim = 1, .dims = {1}, .hi = {1.0}};
  int r = 0;
  EXPECT_UNSUPPORTED(cnp_domain_rank(&d, (double[]){0.5}, &r));
  cnp_halo *halo = (cnp_halo *)&halo;
  EXPECT_UNSUPPORTED(cnp_halo_create(&halo, NULL, NULL, 1, 1));
  CHECK(halo == NULL);
  CHECK(cnp_halo_destroy(NULL) == CNP_OK);
  EXPECT_UNSUPPORTED(cnp_halo_exchange(NULL, NULL, NULL));
  EXPECT_UNSUPPORTED(cnp_halo_accumulate(NULL, NULL, NULL));
  int64_t off = -1, cnt = -1;
  EXPECT_UNSUPPORTED(cnp_slab_range(4, 2, 0, &off, &cnt));
  CHECK(off == -1 && cnt == -1);
  EXPECT_UNSUPPORTED(cnp_slab_owner(4, 2, 0, &r));
  EXPECT_UNSUPPORTED(cnp_slab_dest(4, 2, &a, 0, &a));
  cnp_fft_dist_plan *fp = (cnp_fft_dist_plan *)&fp;
  int64_t dims[2] = {4, 4};
  EXPECT_UNSUPPORTED(cnp_fft_dist_plan_create(&fp, NULL, 2, dims, CNP_FLOAT64, 0));
  CHECK(fp == NULL);
  CHECK(cnp_fft_dist_plan_destroy(NULL) == CNP_OK);
  EXPECT_UNSUPPORTED(cnp_fft_dist_forward(NULL, &a, &a, NULL));
  EXPECT_UNSUPPORTED(cnp_fft_dist_inverse(NULL, &a, &a, NULL));
  cnp_fft_dist_layout lay;
  EXPECT_UNSUPPORTED(cnp_fft_dist_local(NULL, &lay));
  EXPECT_UNSUPPORTED(cnp_fft_dist_wavenumbers(NULL, 0, 1.0, &a));
  CHECK(cnp_fft_dist_norm(NULL) == 0.0);
  printf("test_mpi_nompi: %d checks passed\n", checks);
  return 0;
}
