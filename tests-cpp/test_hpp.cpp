// Tests of include/dlpack_helpers.hpp: the RAII owners release each tensor exactly once
// (counting deleters), are move-only, and check() turns statuses into exceptions.
// Built with -std=c++11 and -std=c++17, -Wall -Wextra -Wpedantic -Werror, against the shared and
// the static library (scripts/test.d/60-packaging.sh and CTest). Exits 0 when every check passes.
#include "dlpack_helpers.hpp"

#include <cstdio>
#include <cstdlib>
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

using dlpack_helpers::legacy_managed_tensor;
using dlpack_helpers::managed_tensor;

static_assert(!std::is_copy_constructible<managed_tensor>::value, "move-only");
static_assert(!std::is_copy_assignable<managed_tensor>::value, "move-only");
static_assert(std::is_nothrow_move_constructible<managed_tensor>::value, "noexcept move");
static_assert(std::is_nothrow_move_assignable<managed_tensor>::value, "noexcept move");
static_assert(!std::is_copy_constructible<legacy_managed_tensor>::value, "move-only");
static_assert(std::is_nothrow_move_constructible<legacy_managed_tensor>::value, "noexcept move");
static_assert(!std::is_convertible<DLManagedTensorVersioned*, managed_tensor>::value,
              "adopting a raw pointer must be explicit");
static_assert(sizeof(managed_tensor) == sizeof(void*), "an owner is one pointer");

// Counting deleters: the tensor lives on the heap and the deleter frees it, so a second call
// would be a double free (caught by the allocator or a sanitizer), not just a wrong count.
static void count_versioned(DLManagedTensorVersioned* self) {
  ++*static_cast<int*>(self->manager_ctx);
  delete self;
}
static void count_legacy(DLManagedTensor* self) {
  ++*static_cast<int*>(self->manager_ctx);
  delete self;
}

static DLManagedTensorVersioned* make_versioned(int* counter, uint32_t major = 1, uint32_t minor = 3) {
  DLManagedTensorVersioned* t = new DLManagedTensorVersioned();
  t->version.major = major;
  t->version.minor = minor;
  t->manager_ctx = counter;
  t->deleter = count_versioned;
  t->dl_tensor.device.device_type = kDLCPU;
  t->dl_tensor.device.device_id = 0;
  return t;
}

static DLManagedTensor* make_legacy(int* counter) {
  DLManagedTensor* t = new DLManagedTensor();
  t->manager_ctx = counter;
  t->deleter = count_legacy;
  t->dl_tensor.device.device_type = kDLCUDA;
  t->dl_tensor.device.device_id = 3;
  return t;
}

static void destructor_releases_once() {
  int n = 0;
  { managed_tensor owner(make_versioned(&n)); CHECK(n == 0); CHECK(bool(owner)); }
  CHECK(n == 1);
  int m = 0;
  { legacy_managed_tensor owner(make_legacy(&m)); CHECK(m == 0); }
  CHECK(m == 1);
  { managed_tensor empty; CHECK(!empty); CHECK(empty.get() == nullptr); }
}

static void move_transfers_ownership() {
  int n = 0;
  {
    managed_tensor a(make_versioned(&n));
    DLManagedTensorVersioned* raw = a.get();
    managed_tensor b(std::move(a));
    CHECK(a.get() == nullptr);  // NOLINT: moved-from state is specified (empty)
    CHECK(b.get() == raw);
    managed_tensor c;
    c = std::move(b);
    CHECK(b.get() == nullptr);
    CHECK(c.get() == raw);
    CHECK(n == 0);
  }
  CHECK(n == 1);

  int m = 0;
  {
    legacy_managed_tensor a(make_legacy(&m));
    legacy_managed_tensor b(std::move(a));
    CHECK(!a);
    CHECK(m == 0);
  }
  CHECK(m == 1);
}

static void move_assign_releases_the_old_tensor_at_once() {
  int old_count = 0, new_count = 0;
  {
    managed_tensor a(make_versioned(&old_count));
    managed_tensor b(make_versioned(&new_count));
    a = std::move(b);
    CHECK(old_count == 1);
    CHECK(new_count == 0);
  }
  CHECK(old_count == 1);
  CHECK(new_count == 1);
}

static void self_move_assign_keeps_the_tensor() {
  int n = 0;
  {
    managed_tensor a(make_versioned(&n));
    managed_tensor& alias = a;
    a = std::move(alias);
    CHECK(bool(a));
    CHECK(n == 0);
  }
  CHECK(n == 1);
}

static void release_hands_back_without_deleting() {
  int n = 0;
  DLManagedTensorVersioned* raw = nullptr;
  {
    managed_tensor a(make_versioned(&n));
    raw = a.release();
    CHECK(!a);
  }
  CHECK(n == 0);
  dlpack_tensor_delete(raw);
  CHECK(n == 1);
}

static void reset_and_swap() {
  int first = 0, second = 0;
  {
    managed_tensor a(make_versioned(&first));
    a.reset(make_versioned(&second));
    CHECK(first == 1);
    CHECK(second == 0);
    a.reset(a.get());  // resetting to the pointer already owned does not release it
    CHECK(second == 0);
    managed_tensor b;
    swap(a, b);
    CHECK(!a);
    CHECK(bool(b));
    b.reset();
    CHECK(second == 1);
  }
  CHECK(first == 1);
  CHECK(second == 1);
}

static void null_deleter_means_nothing_to_free() {
  DLManagedTensorVersioned stack_tensor;
  std::memset(&stack_tensor, 0, sizeof stack_tensor);
  stack_tensor.version.major = 1;
  { managed_tensor a(&stack_tensor); }  // would crash if it freed or called a NULL deleter
  CHECK(stack_tensor.version.major == 1);
}

static void check_version_or_delete_on_a_future_major() {
  int n = 0;
  managed_tensor a(make_versioned(&n, 2, 0));
  CHECK(a.check_version_or_delete() == DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK(n == 1);
  CHECK(!a);

  int m = 0;
  {
    managed_tensor b(make_versioned(&m, 1, 0));
    dlpack_helpers_version_compat compat = -1;
    CHECK(b.check_version_or_delete(&compat) == DLPACK_HELPERS_STATUS_OK);
    CHECK(compat == DLPACK_HELPERS_VERSION_OLDER_MINOR);
    CHECK(bool(b));
    CHECK(m == 0);
  }
  CHECK(m == 1);
}

static void exceptions() {
  bool threw = false;
  try {
    DLDevice unused;
    dlpack_helpers::check(dlpack_get_device(nullptr, &unused));
  } catch (const dlpack_helpers::error& e) {
    threw = true;
    CHECK(e.status() == DLPACK_HELPERS_STATUS_NULL_POINTER);
    CHECK(std::strstr(e.what(), "NULL_POINTER") != nullptr);
    CHECK(std::strstr(e.what(), "tensor") != nullptr);  // the message names the argument
  }
  CHECK(threw);

  dlpack_helpers::check(DLPACK_HELPERS_STATUS_OK);  // must not throw

  int n = 0;
  threw = false;
  try {
    managed_tensor never = dlpack_helpers::adopt_checked(make_versioned(&n, 2, 1));
    CHECK(false);
  } catch (const dlpack_helpers::error& e) {
    threw = true;
    CHECK(e.status() == DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  }
  CHECK(threw);
  CHECK(n == 1);  // released by adopt_checked, exactly once

  int m = 0;
  {
    managed_tensor a = dlpack_helpers::adopt_checked(make_versioned(&m));
    DLDevice d = dlpack_helpers::device_of(a);
    CHECK(d.device_type == kDLCPU);
    legacy_managed_tensor l(make_legacy(&m));
    DLDevice ld = dlpack_helpers::device_of(l);
    CHECK(ld.device_type == kDLCUDA);
    CHECK(ld.device_id == 3);
  }
  CHECK(m == 2);
}

int main() {
  destructor_releases_once();
  move_transfers_ownership();
  move_assign_releases_the_old_tensor_at_once();
  self_move_assign_keeps_the_tensor();
  release_hands_back_without_deleting();
  reset_and_swap();
  null_deleter_means_nothing_to_free();
  check_version_or_delete_on_a_future_major();
  exceptions();
  std::printf("test_hpp (C++%ld): %d checks, %d failed\n", static_cast<long>(__cplusplus / 100 % 100),
              checks, failures);
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
