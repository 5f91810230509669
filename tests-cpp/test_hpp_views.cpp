// Tests of the C++ additions of include/dlpack_helpers.hpp (issue 14): adopt_legacy_checked,
// create_tensor and the typed view<T>. Built with -std=c++11 and -std=c++17, -Wall -Wextra
// -Wpedantic -Werror, against the shared and the static library (CTest through
// scripts/test.d/60-packaging.sh, and scripts/test.d/64-docs.sh's C++ pass). Exits 0 when every
// check passes.
#include "dlpack_helpers.hpp"

#include <cstdio>
#include <cstring>
#include <type_traits>

static int failures = 0;
static int checks = 0;
#define CHECK(cond)                                                               \
  do {                                                                            \
    ++checks;                                                                     \
    if (!(cond)) {                                                                \
      ++failures;                                                                 \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                             \
  } while (0)

// The status of the dlpack_helpers::error that `expr` throws, or -1 when it throws nothing.
#define STATUS_OF(expr)                                    \
  [&]() -> int {                                           \
    try {                                                  \
      (void)(expr);                                        \
    } catch (const dlpack_helpers::error& e) {             \
      return e.status();                                   \
    }                                                      \
    return -1;                                             \
  }()

using dlpack_helpers::legacy_managed_tensor;
using dlpack_helpers::managed_tensor;
using dlpack_helpers::view;

static DLDevice cpu() {
  DLDevice d;
  d.device_type = kDLCPU;
  d.device_id = 0;
  return d;
}
template <class T>
static DLDataType dt() {
  return dlpack_helpers::dtype_of<T>::value();
}

// ---- adopt_legacy_checked -----------------------------------------------------------------------
static int64_t legacy_shape[2] = {2, 3};
static float legacy_data[6] = {0, 1, 2, 3, 4, 5};
static void count_legacy(DLManagedTensor* self) {
  ++*static_cast<int*>(self->manager_ctx);
  delete self;  // heap: a second call would be a double free, not just a wrong count
}
static DLManagedTensor* make_legacy(int* counter, int32_t ndim, int64_t* shape) {
  DLManagedTensor* t = new DLManagedTensor();
  t->manager_ctx = counter;
  t->deleter = count_legacy;
  t->dl_tensor.data = legacy_data;
  t->dl_tensor.device = cpu();
  t->dl_tensor.ndim = ndim;
  t->dl_tensor.shape = shape;
  t->dl_tensor.dtype = dt<float>();
  return t;
}

static void adopt_legacy() {
  int n = 0;
  {
    legacy_managed_tensor owner = dlpack_helpers::adopt_legacy_checked(make_legacy(&n, 2, legacy_shape));
    CHECK(n == 0);
    CHECK(view<const float>(owner)(1, 2) == 5.0f);  // NULL strides: compact row-major
    // Peer case 50: a legacy struct cannot say read-only, so a mutable view needs the caller's
    // explicit assertion; without it the view is refused (READ_ONLY), never invented.
    CHECK(STATUS_OF(view<float>(owner)) == DLPACK_HELPERS_STATUS_READ_ONLY);
    CHECK(view<float>(owner, dlpack_helpers::assume_legacy_writable)(1, 2) == 5.0f);
  }
  CHECK(n == 1);
  // Refused: the tensor is released exactly once, then the library's status is thrown.
  int m = 0;
  CHECK(STATUS_OF(dlpack_helpers::adopt_legacy_checked(make_legacy(&m, 2, nullptr))) ==
        DLPACK_HELPERS_STATUS_NULL_SHAPE);
  CHECK(m == 1);
  int k = 0;
  CHECK(STATUS_OF(dlpack_helpers::adopt_legacy_checked(make_legacy(&k, -1, legacy_shape))) ==
        DLPACK_HELPERS_STATUS_INVALID_NDIM);
  CHECK(k == 1);
  CHECK(std::strstr(dlpack_last_error_message(), "ndim") != nullptr);
  CHECK(STATUS_OF(dlpack_helpers::adopt_legacy_checked(nullptr)) == DLPACK_HELPERS_STATUS_NULL_POINTER);
  // Options reach the check: a float tensor is refused when int32 is required.
  dlpack_helpers_validate_options opts = dlpack_helpers_validate_options();
  opts.struct_size = sizeof opts;
  opts.flags = DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE;
  opts.dtype = dt<int32_t>();
  int j = 0;
  CHECK(STATUS_OF(dlpack_helpers::adopt_legacy_checked(make_legacy(&j, 2, legacy_shape), &opts)) ==
        DLPACK_HELPERS_STATUS_DTYPE_MISMATCH);
  CHECK(j == 1);
}

// ---- create_tensor ------------------------------------------------------------------------------
static void count_release(void* ctx) { ++*static_cast<int*>(ctx); }

static void create_and_release() {
  float buf[6] = {0, 1, 2, 3, 4, 5};
  const int64_t shape[2] = {2, 3};
  int released = 0;
  {
    managed_tensor t = dlpack_helpers::create_tensor(buf, cpu(), 2, shape, nullptr, dt<float>(), 0, 0,
                                                     count_release, &released);
    CHECK(bool(t));
    CHECK(t->version.major == 1 && t->dl_tensor.ndim == 2);
    CHECK(t->dl_tensor.strides != nullptr && t->dl_tensor.strides[0] == 3 && t->dl_tensor.strides[1] == 1);
    CHECK(released == 0);
    managed_tensor moved = std::move(t);
    CHECK(!t && bool(moved));
  }
  CHECK(released == 1);
  // Refused: nothing allocated, release not called, the status thrown.
  DLDataType bad = dt<float>();
  bad.bits = 0;
  CHECK(STATUS_OF(dlpack_helpers::create_tensor(buf, cpu(), 2, shape, nullptr, bad, 0, 0, count_release,
                                                &released)) == DLPACK_HELPERS_STATUS_INVALID_DTYPE);
  CHECK(STATUS_OF(dlpack_helpers::create_tensor(buf, cpu(), 2, nullptr, nullptr, dt<float>())) ==
        DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK(released == 1);
}

// ---- view<T> ------------------------------------------------------------------------------------
static void views_follow_strides() {
  float buf[6] = {0, 1, 2, 3, 4, 5};
  const int64_t shape[2] = {2, 3};
  {  // row-major
    managed_tensor t = dlpack_helpers::create_tensor(buf, cpu(), 2, shape, nullptr, dt<float>());
    dlpack_helpers::tensor_view<float> v = view<float>(t);
    CHECK(v.ndim() == 2 && v.shape(0) == 2 && v.shape(1) == 3 && v.size() == 6);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) CHECK(v(i, j) == buf[i * 3 + j]);
    v(1, 1) = 40.0f;  // writes reach the buffer
    CHECK(buf[4] == 40.0f);
    CHECK(v.at(1, 2) == 5.0f);
    CHECK(STATUS_OF(v.at(2, 0)) == DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
    CHECK(STATUS_OF(v.at(0, -1)) == DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
    CHECK(STATUS_OF(v.at(1)) == DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
  }
  {  // column-major (Fortran) strides
    const int64_t fstrides[2] = {1, 2};
    managed_tensor t = dlpack_helpers::create_tensor(buf, cpu(), 2, shape, fstrides, dt<float>());
    dlpack_helpers::tensor_view<const float> v = view<const float>(t);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) CHECK(v(i, j) == buf[i + 2 * j]);
  }
  {  // reversed 1-d view: negative stride, byte_offset to the last element
    const int64_t n[1] = {6};
    const int64_t rev[1] = {-1};
    managed_tensor t = dlpack_helpers::create_tensor(buf, cpu(), 1, n, rev, dt<float>(), 5 * sizeof(float));
    dlpack_helpers::tensor_view<const float> v = view<const float>(t);
    for (int i = 0; i < 6; ++i) CHECK(v(i) == buf[5 - i]);
    CHECK(v.data() == buf + 5);
  }
  {  // 0-d tensor: no index
    double x = 2.5;
    managed_tensor t = dlpack_helpers::create_tensor(&x, cpu(), 0, nullptr, nullptr, dt<double>());
    CHECK(view<double>(t)() == 2.5);
    CHECK(view<double>(t).size() == 1);
  }
  {  // integer and bool element types map to their DLPack codes
    int32_t i32[3] = {7, 8, 9};
    uint8_t u8[3] = {1, 2, 3};
    bool b[2] = {true, false};
    const int64_t three[1] = {3};
    const int64_t two[1] = {2};
    managed_tensor ti = dlpack_helpers::create_tensor(i32, cpu(), 1, three, nullptr, dt<int32_t>());
    managed_tensor tu = dlpack_helpers::create_tensor(u8, cpu(), 1, three, nullptr, dt<uint8_t>());
    managed_tensor tb = dlpack_helpers::create_tensor(b, cpu(), 1, two, nullptr, dt<bool>());
    CHECK(view<int32_t>(ti)(2) == 9 && view<uint8_t>(tu)(1) == 2 && view<bool>(tb)(0));
    CHECK(dt<int64_t>().code == kDLInt && dt<int64_t>().bits == 64 && dt<uint16_t>().code == kDLUInt);
    CHECK(STATUS_OF(view<uint32_t>(ti)) == DLPACK_HELPERS_STATUS_DTYPE_MISMATCH);  // signedness
  }
}

static void views_refuse() {
  float buf[6] = {0, 1, 2, 3, 4, 5};
  const int64_t shape[2] = {2, 3};
  managed_tensor t = dlpack_helpers::create_tensor(buf, cpu(), 2, shape, nullptr, dt<float>());
  CHECK(STATUS_OF(view<double>(t)) == DLPACK_HELPERS_STATUS_DTYPE_MISMATCH);
  CHECK(STATUS_OF(view<int32_t>(t)) == DLPACK_HELPERS_STATUS_DTYPE_MISMATCH);
  CHECK(std::strstr(dlpack_last_error_message(), "dtype") != nullptr);
  // Device memory is not readable by host code.
  DLDevice gpu;
  gpu.device_type = kDLCUDA;
  gpu.device_id = 0;
  managed_tensor g = dlpack_helpers::create_tensor(buf, gpu, 2, shape, nullptr, dt<float>());
  CHECK(STATUS_OF(view<float>(g)) == DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE);
  CHECK(STATUS_OF(view<const float>(g)) == DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE);
  // Read-only: a mutable view is refused, a const one is allowed.
  managed_tensor ro = dlpack_helpers::create_tensor(buf, cpu(), 2, shape, nullptr, dt<float>(), 0,
                                                    DLPACK_FLAG_BITMASK_READ_ONLY);
  CHECK(STATUS_OF(view<float>(ro)) == DLPACK_HELPERS_STATUS_READ_ONLY);
  CHECK(view<const float>(ro)(1, 0) == 3.0f);
  // A first element not aligned for float (byte_offset 2): refused before any access.
  managed_tensor odd = dlpack_helpers::create_tensor(buf, cpu(), 2, shape, nullptr, dt<float>(), 2);
  CHECK(STATUS_OF(view<const float>(odd)) == DLPACK_HELPERS_STATUS_MISALIGNED);
  // NULL tensors.
  CHECK(STATUS_OF(view<float>(static_cast<const DLManagedTensorVersioned*>(nullptr))) ==
        DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK(STATUS_OF(view<float>(managed_tensor())) == DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK(STATUS_OF(view<float>(legacy_managed_tensor())) == DLPACK_HELPERS_STATUS_NULL_POINTER);
}

static_assert(std::is_copy_constructible<dlpack_helpers::tensor_view<float> >::value, "views are values");

int main() {
  adopt_legacy();
  create_and_release();
  views_follow_strides();
  views_refuse();
  std::printf("test_hpp_views (C++%ld): %d checks, %d failures\n", static_cast<long>(__cplusplus / 100 % 100),
              checks, failures);
  return failures == 0 ? 0 : 1;
}
