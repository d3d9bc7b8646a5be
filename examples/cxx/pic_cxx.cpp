// pic_cxx.cpp -- examples/pic driven from C++17 through the wrapper cnpc writes
// (cnpc --emit=cxx: pic.hpp). The same run as examples/pic/pic_dump.c, which it matches
// bit for bit on the host backend (ctest examples.cxx.pic):
//   pic_cxx OUT.bin [particles [steps]]
// writes the final state as pic_dump does: live, x, v[0], v[1], v[2], w, rho, E (raw bytes).
#include "pic.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

static double frac(double t) { return t - std::trunc(t); }

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pic_cxx OUT.bin [particles [steps]]\n");
    return 2;
  }
  const std::int64_t n = argc > 2 ? std::atoll(argv[2]) : 20000, nc = 64;
  const int steps = argc > 3 ? std::atoi(argv[3]) : 40;
  const double dt = 0.01, v0 = 0.1, g = 0.6180339887498949, h = 0.7548776662466927;
  try {
    pic_config cfg = pic_cnp::default_config();
    cfg.N = n;
    cfg.n_cells = nc;
    cfg.qm = -1.0;
    pic_cnp::pipeline p(cfg);                      // setup; teardown at the end of the scope
    if (p.backend() != CNP_BACKEND_HOST) throw cnp::error(CNP_EDEVICE, "pic_cxx: needs the host backend");
    auto x = p.field_x();                          // cnp::view<double, 1>
    auto v = p.field_v();                          // cnp::view<double, 2>: v(c, i) is v[c, i]
    auto w = p.field_w();
    for (std::int64_t i = 0; i < n; i++) {
      double t = static_cast<double>(i + 1);
      double u1 = frac(t * g);
      x[i] = u1 + 0.01 * u1 * (1.0 - u1);
      v(0, i) = ((i & 1) ? v0 : -v0) + 0.01 * (frac(t * h) - 0.5);
      v(1, i) = 0.02 * (frac(t * g * h) - 0.5);
      v(2, i) = 0.02 * (frac(t * 0.5 * g) - 0.5);
      w[i] = 1.0 / static_cast<double>(n);
    }
    std::vector<double> E(static_cast<std::size_t>(nc), 0.0);
    cnp::view<double, 1> rho;
    for (int s = 0; s < steps; s++) {
      auto fE = p.field_E();
      for (std::int64_t k = 0; k < nc; k++) fE[k] = E[static_cast<std::size_t>(k)];
      p.step(dt);
      p.sync();
      rho = p.snapshot_out();
      double total = 0.0, acc = 0.0, emean = 0.0;
      for (double r : rho) total += r;
      double mean = total / static_cast<double>(nc);
      for (std::int64_t k = 0; k < nc; k++) {
        acc += rho[k] - mean;
        E[static_cast<std::size_t>(k)] = -4.0 * acc;
        emean += E[static_cast<std::size_t>(k)] / static_cast<double>(nc);
      }
      for (double &e : E) e -= emean;
    }
    std::int64_t live = p.extent("N");
    x = p.field_x();
    v = p.field_v();
    w = p.field_w();
    std::FILE *f = std::fopen(argv[1], "wb");
    if (!f) throw cnp::error(CNP_EIO, "pic_cxx: cannot write the output");
    std::fwrite(&live, sizeof live, 1, f);
    std::fwrite(x.data(), 8, static_cast<std::size_t>(live), f);
    for (int c = 0; c < 3; c++) std::fwrite(v.slice(c).data(), 8, static_cast<std::size_t>(live), f);
    std::fwrite(w.data(), 8, static_cast<std::size_t>(live), f);
    std::fwrite(rho.data(), 8, static_cast<std::size_t>(nc), f);
    std::fwrite(E.data(), 8, static_cast<std::size_t>(nc), f);
    if (std::fclose(f) != 0) throw cnp::error(CNP_EIO, "pic_cxx: cannot write the output");
    std::printf("pic_cxx: %lld of %lld particles live after %llu steps\n", static_cast<long long>(live),
                static_cast<long long>(n), static_cast<unsigned long long>(p.stats().steps));
  } catch (const cnp::error &e) {
    std::fprintf(stderr, "pic_cxx: %s: %s\n", e.name(), e.what());
    return 1;
  }
  return 0;
}
