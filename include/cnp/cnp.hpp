/*
** cnp.hpp -- C++17 support for the wrappers cnpc writes (cnpc --emit=cxx: NAME.hpp; see
** docs/interfaces.md): the exception cnp::error and cnp::view, a non-owning mdspan-like view
** of a field. Header-only; includes cnp/cnp.h (plain C) and the standard library only, and
** compiles with g++/clang++ -Wall -Wextra -Werror and with nvcc (-Werror all-warnings).
**
** Errors: the wrappers throw cnp::error (a std::runtime_error) carrying the cnp_status and
** the message (NAME_error(), the setup's error text or cnp_last_error()). Exceptions, not an
** expected-style result: std::expected is C++23, a failing setup or step is exceptional in a
** simulation loop, and RAII teardown on unwind is what a C++ caller expects.
**
** Views: cnp::view<T, R> indexes a field in the .cnp order, v(c, i) is v[c, i] of the .cnp
** program (the last index varies fastest), with strides in elements (a field compacted below
** its capacity is strided); it is a pointer and extents, valid until the next step. Its
** element access is __host__ __device__ under nvcc, so a view of a CUDA-backend field can be
** passed by value to a kernel; on the host, touch only views whose backend() is host.
*/
#ifndef CNP_CNP_HPP
#define CNP_CNP_HPP

#include "cnp/cnp.h"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#if defined(__CUDACC__)
#define CNP_HD __host__ __device__
#else
#define CNP_HD
#endif

namespace cnp {

/* A failed cnp call: status() is the cnp_status, what() the message. */
class error : public std::runtime_error {
 public:
  error(cnp_status st, const std::string &msg)
      : std::runtime_error(msg.empty() ? std::string(cnp_status_name(st)) : msg), status_(st) {}
  cnp_status status() const noexcept { return status_; }
  const char *name() const noexcept { return cnp_status_name(status_); }

 private:
  cnp_status status_;
};

/* Throws cnp::error unless st is CNP_OK. */
inline void check(int st, const char *msg) {
  if (st != CNP_OK) throw error(static_cast<cnp_status>(st), msg ? msg : "");
}

/* The cnp_dtype of an element type: the storage types of the generated code (bool fields
** are uint8_t 0/1, f16 fields the binary16 bits in a uint16_t). */
template <class T> struct dtype_of;
template <> struct dtype_of<std::uint8_t> { static constexpr cnp_dtype value = CNP_BOOL; };
template <> struct dtype_of<std::int32_t> { static constexpr cnp_dtype value = CNP_INT32; };
template <> struct dtype_of<std::int64_t> { static constexpr cnp_dtype value = CNP_INT64; };
template <> struct dtype_of<std::uint64_t> { static constexpr cnp_dtype value = CNP_UINT64; };
template <> struct dtype_of<std::uint16_t> { static constexpr cnp_dtype value = CNP_FLOAT16; };
template <> struct dtype_of<float> { static constexpr cnp_dtype value = CNP_FLOAT32; };
template <> struct dtype_of<double> { static constexpr cnp_dtype value = CNP_FLOAT64; };
template <> struct dtype_of<std::complex<float>> { static constexpr cnp_dtype value = CNP_COMPLEX64; };
template <> struct dtype_of<std::complex<double>> { static constexpr cnp_dtype value = CNP_COMPLEX128; };
template <class T> struct dtype_of<const T> : dtype_of<T> {};

/* A view of a rank-R array of T: extents and strides (elements) in C order. */
template <class T, int R>
class view {
  static_assert(R >= 1 && R <= CNP_MAX_DIMS, "cnp::view: rank 1 to CNP_MAX_DIMS");

 public:
  using element_type = T;
  static constexpr int rank = R;

  view() = default;
  /* From a cnp_array (NAME_field, NAME_snapshot): throws cnp::error on a null view
  ** (CNP_EINVAL), another dtype (CNP_EDTYPE), rank (CNP_ESHAPE) or strides that are not
  ** whole elements (CNP_ELAYOUT). */
  explicit view(const cnp_array &a, const char *what = "cnp::view") {
    std::string w(what);
    if (!a.data) throw error(CNP_EINVAL, w + ": no such array");
    if (a.dtype != dtype_of<T>::value)
      throw error(CNP_EDTYPE, w + ": the array is " + cnp_dtype_name(a.dtype));
    if (a.ndim != R) throw error(CNP_ESHAPE, w + ": the array has rank " + std::to_string(a.ndim));
    for (int k = 0; k < R; k++) {
      if (a.strides[k] % static_cast<std::int64_t>(sizeof(T)) != 0)
        throw error(CNP_ELAYOUT, w + ": strides are not whole elements");
      ext_[k] = a.shape[k];
      str_[k] = a.strides[k] / static_cast<std::int64_t>(sizeof(T));
    }
    data_ = static_cast<T *>(a.data);
    backend_ = a.backend;
  }

  CNP_HD T *data() const noexcept { return data_; }
  CNP_HD std::int64_t extent(int k) const noexcept { return ext_[k]; }
  CNP_HD std::int64_t stride(int k) const noexcept { return str_[k]; }   /* elements */
  CNP_HD std::int64_t size() const noexcept {
    std::int64_t n = 1;
    for (int k = 0; k < R; k++) n *= ext_[k];
    return n;
  }
  CNP_HD bool empty() const noexcept { return size() == 0; }
  cnp_backend backend() const noexcept { return backend_; }

  /* v(i0, ..., i(R-1)): the element [i0, ..., i(R-1)] of the .cnp program. */
  template <class... I>
  CNP_HD T &operator()(I... idx) const noexcept {
    static_assert(sizeof...(I) == R, "cnp::view: one index per dimension");
    const std::int64_t ix[R] = {static_cast<std::int64_t>(idx)...};
    std::int64_t off = 0;
    for (int k = 0; k < R; k++) off += ix[k] * str_[k];
    return data_[off];
  }
  /* Rank 1: v[i], and begin()/end() over the elements (contiguous). */
  template <int Q = R, class = typename std::enable_if<Q == 1>::type>
  CNP_HD T &operator[](std::int64_t i) const noexcept { return data_[i * str_[0]]; }
  template <int Q = R, class = typename std::enable_if<Q == 1>::type>
  CNP_HD T *begin() const noexcept { return data_; }
  template <int Q = R, class = typename std::enable_if<Q == 1>::type>
  CNP_HD T *end() const noexcept { return data_ + ext_[0]; }
  /* The rank R-1 view at first index c: v.slice(c)(i) is v(c, i); for v : f64[3, N],
  ** v.slice(0) is the first component of every particle (contiguous). */
  template <int Q = R, class = typename std::enable_if<(Q > 1)>::type>
  CNP_HD view<T, R - 1> slice(std::int64_t c) const noexcept {
    view<T, R - 1> s;
    s.data_ = data_ + c * str_[0];
    for (int k = 1; k < R; k++) {
      s.ext_[k - 1] = ext_[k];
      s.str_[k - 1] = str_[k];
    }
    s.backend_ = backend_;
    return s;
  }

 private:
  template <class, int> friend class view;
  T *data_ = nullptr;
  std::int64_t ext_[R] = {};
  std::int64_t str_[R] = {};
  cnp_backend backend_ = CNP_BACKEND_HOST;
};

}  // namespace cnp

#endif /* CNP_CNP_HPP */
