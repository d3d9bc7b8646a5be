// test_shapes.cpp -- the C++17 wrapper cnpc writes for shapes.cnp (docs/interfaces.md):
// views index as the .cnp program (a(c, j, i) is a[c, j, i], the address the C view gives),
// before and after a compaction (strided), slices, element types, RAII and moves, and the
// cnp::error exceptions (status and message).
#include "shapes.hpp"

#include <cstdio>
#include <type_traits>
#include <utility>

static int fails = 0;
#define CHECK(c)                                                      \
  do {                                                                \
    if (!(c)) {                                                       \
      std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);        \
      fails++;                                                        \
    }                                                                 \
  } while (0)

static const void *c_address(const cnp_array &a, std::int64_t c, std::int64_t j, std::int64_t i) {
  return static_cast<const char *>(a.data) + c * a.strides[0] + j * a.strides[1] + i * a.strides[2];
}

int main() {
  static_assert(!std::is_copy_constructible<shapes_cnp::pipeline>::value, "not copyable");
  static_assert(std::is_nothrow_move_constructible<shapes_cnp::pipeline>::value, "movable");
  const std::int64_t cap = 10, cap2 = 5;
  shapes_config cfg = shapes_cnp::default_config();
  cfg.N = cap;
  cfg.n = cap2;
  cfg.z0 = cnp_complex128{0.0, 1.0};
  cfg.h0 = 1.5f;
  shapes_cnp::pipeline q(cfg);
  shapes_cnp::pipeline p(std::move(q));             // ownership moves; q is empty
  CHECK(!q && p);

  auto a = p.field_a();                             // cnp::view<double, 3>
  CHECK(a.extent(0) == 2 && a.extent(1) == 3 && a.extent(2) == cap);
  cnp_array ra = p.field("a");
  for (int c = 0; c < 2; c++)
    for (int j = 0; j < 3; j++)
      for (std::int64_t i = 0; i < cap; i++) {
        a(c, j, i) = 100.0 * c + 10.0 * j + static_cast<double>(i) - 2.0;
        CHECK(static_cast<const void *>(&a(c, j, i)) == c_address(ra, c, j, i));
        CHECK(&a.slice(c).slice(j)[i] == &a(c, j, i));
      }
  auto b = p.field_b();                             // cnp::view<std::int32_t, 2>
  for (int j = 0; j < 4; j++)
    for (std::int64_t i = 0; i < cap2; i++) b(j, i) = static_cast<std::int32_t>(10 * (j + 1) + i + 1);
  auto E = p.field_E();
  auto e = p.field_e();                             // cnp::view<std::complex<double>, 1>
  for (std::int64_t i = 0; i < cap; i++) {
    E[i] = 1.0;
    e[i] = std::complex<double>(static_cast<double>(i + 1), 0.0);
  }
  try {
    (void)p.snapshot_sa();
    CHECK(!"a snapshot before the first copy");
  } catch (const cnp::error &err) {
    CHECK(err.status() == CNP_ESTATE);
  }

  p.step(2.0, 0.5f);
  p.sync();
  const std::int64_t live = p.extent("N");
  CHECK(live == cap - 3);
  a = p.field_a();
  ra = p.field("a");
  CHECK(a.extent(2) == live && a.stride(2) == 1 && a.stride(1) >= live);
  for (int c = 0; c < 2; c++)
    for (int j = 0; j < 3; j++)
      for (std::int64_t i = 0; i < live; i++) {
        CHECK(static_cast<const void *>(&a(c, j, i)) == c_address(ra, c, j, i));
        double want = (c == 1 && j == 2) ? (10.0 + static_cast<double>(i + 3) - 2.0) * 2.0 + 0.5
                                         : 100.0 * c + 10.0 * j + static_cast<double>(i + 3) - 2.0;
        CHECK(a(c, j, i) == want);
      }
  e = p.field_e();
  for (std::int64_t i = 0; i < live; i++) CHECK(e[i] == std::complex<double>(0.0, static_cast<double>(i + 4)));
  for (double x : p.field_E()) CHECK(x == 2.0);
  auto keep = p.field_keep();                       // cnp::view<std::uint8_t, 1>
  for (std::int64_t i = 0; i < live; i++) CHECK(keep[i] == (i >= 3 ? 1 : 0));
  for (std::uint16_t hf : p.field_hf()) CHECK(hf == 0x3E00);   // binary16 1.5
  b = p.field_b();
  for (std::int64_t i = 0; i < cap2; i++) CHECK(b(3, i) == b(0, i) + 1);
  auto sa = p.snapshot_sa();
  CHECK(sa.extent(2) == live);
  for (std::int64_t i = 0; i < live; i++) CHECK(sa(1, 2, i) == a(1, 2, i));
  CHECK(p.stats().steps == 1);

  try {
    p.set_extent("N", cap + 1);
    CHECK(!"set_extent past the capacity");
  } catch (const cnp::error &err) {
    CHECK(err.status() == CNP_ERANGE);
  }
  try {
    (void)p.extent("nope");
    CHECK(!"an unknown dim");
  } catch (const cnp::error &err) {
    CHECK(err.status() == CNP_EINVAL);
  }
  try {
    cnp::view<float, 1> wrong(p.field("E"), "E");
    CHECK(!"a view of the wrong type");
  } catch (const cnp::error &err) {
    CHECK(err.status() == CNP_EDTYPE);
  }
  p.reset();
  CHECK(!p);

  cfg.N = 0;                                        // setup fails: the exception has its text
  try {
    shapes_cnp::pipeline bad(cfg);
    CHECK(!"setup with N = 0");
  } catch (const cnp::error &err) {
    CHECK(err.status() != CNP_OK && std::string(err.what()).find("N") != std::string::npos);
    std::printf("expected: %s: %s\n", err.name(), err.what());
  }
  if (fails) return 1;
  std::printf("test_shapes (C++): ok\n");
  return 0;
}
