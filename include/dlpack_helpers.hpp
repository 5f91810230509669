/*
 * dlpack_helpers.hpp: C++ conveniences over the C API of dlpack-helpers (header-only; written
 * by hand, not generated). Needs C++11 or newer; link the same library as for dlpack_helpers.h.
 *
 * - dlpack_helpers::managed_tensor owns a DLManagedTensorVersioned*, and
 *   dlpack_helpers::legacy_managed_tensor a legacy DLManagedTensor*: move-only owners that call
 *   the producer's deleter exactly once (through dlpack_tensor_delete /
 *   dlpack_legacy_tensor_delete) when they are destroyed, reset or assigned over, unless
 *   release() handed the pointer back first. A NULL deleter means "nothing to free" (DLPack).
 * - dlpack_helpers::error and dlpack_helpers::check(status): turn a failing
 *   dlpack_helpers_status into an exception carrying the code and dlpack_last_error_message().
 *   Only declared when exceptions are enabled; the owners themselves never throw.
 *
 * Thread-safety: an owner is a plain value (like std::unique_ptr): use one from one thread at a
 * time. The deleter runs on the thread that destroys the owner (DLPack allows any thread).
 */
#ifndef DLPACK_HELPERS_HPP
#define DLPACK_HELPERS_HPP

#include "dlpack_helpers.h"

#include <cstddef>
#include <string>
#include <utility>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define DLPACK_HELPERS_HPP_EXCEPTIONS 1
#include <stdexcept>
#endif

namespace dlpack_helpers {

namespace detail {

inline void release_tensor(DLManagedTensorVersioned* t) noexcept { dlpack_tensor_delete(t); }
inline void release_tensor(DLManagedTensor* t) noexcept { dlpack_legacy_tensor_delete(t); }

/* The shared body of both owners: one pointer, released exactly once. */
template <class T>
class basic_owner {
 public:
  typedef T element_type;

  basic_owner() noexcept : ptr_(nullptr) {}
  /* Takes ownership of `tensor` (may be NULL). */
  explicit basic_owner(T* tensor) noexcept : ptr_(tensor) {}
  basic_owner(const basic_owner&) = delete;
  basic_owner& operator=(const basic_owner&) = delete;
  basic_owner(basic_owner&& other) noexcept : ptr_(other.ptr_) { other.ptr_ = nullptr; }
  basic_owner& operator=(basic_owner&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ~basic_owner() { reset(); }

  /* The tensor, still owned by this object (NULL when empty). */
  T* get() const noexcept { return ptr_; }
  T* operator->() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }

  /* Give up ownership without calling the deleter: the caller now owns the tensor. */
  T* release() noexcept {
    T* t = ptr_;
    ptr_ = nullptr;
    return t;
  }
  /* Release the current tensor (its deleter runs once), then own `tensor`. */
  void reset(T* tensor = nullptr) noexcept {
    T* old = ptr_;
    ptr_ = tensor;
    if (old != nullptr && old != tensor) release_tensor(old);
  }
  void swap(basic_owner& other) noexcept { std::swap(ptr_, other.ptr_); }

 private:
  T* ptr_;
};

}  // namespace detail

/* Owner of a versioned managed tensor (DLPack 1.0+, capsule "dltensor_versioned"). Releasing it
 * reads only the deleter, so it is safe for a tensor of any major version. */
class managed_tensor : public detail::basic_owner<DLManagedTensorVersioned> {
 public:
  using detail::basic_owner<DLManagedTensorVersioned>::basic_owner;
  managed_tensor() noexcept {}
  managed_tensor(managed_tensor&&) noexcept = default;
  managed_tensor& operator=(managed_tensor&&) noexcept = default;

  /* dlpack_tensor_check_version_or_delete on the owned tensor: on UNSUPPORTED_VERSION the
   * tensor has been released and this owner is empty; otherwise nothing changes. Returns the
   * status; `out_compat` may be NULL. Empty owner: DLPACK_HELPERS_STATUS_NULL_POINTER. */
  dlpack_helpers_status check_version_or_delete(dlpack_helpers_version_compat* out_compat = nullptr) noexcept {
    DLManagedTensorVersioned* t = release();
    dlpack_helpers_status s = dlpack_tensor_check_version_or_delete(t, out_compat);
    if (s != DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION) reset(t);
    return s;
  }
};

/* Owner of a legacy managed tensor (capsule "dltensor"). */
class legacy_managed_tensor : public detail::basic_owner<DLManagedTensor> {
 public:
  using detail::basic_owner<DLManagedTensor>::basic_owner;
  legacy_managed_tensor() noexcept {}
  legacy_managed_tensor(legacy_managed_tensor&&) noexcept = default;
  legacy_managed_tensor& operator=(legacy_managed_tensor&&) noexcept = default;
};

inline void swap(managed_tensor& a, managed_tensor& b) noexcept { a.swap(b); }
inline void swap(legacy_managed_tensor& a, legacy_managed_tensor& b) noexcept { a.swap(b); }

#ifdef DLPACK_HELPERS_HPP_EXCEPTIONS

/* A failing dlpack_helpers_status as an exception: what() is "<NAME>: <message>". */
class error : public std::runtime_error {
 public:
  error(dlpack_helpers_status status, const std::string& message)
      : std::runtime_error(std::string(dlpack_status_string(status)) + ": " + message), status_(status) {}
  /* The DLPACK_HELPERS_STATUS_* code. */
  dlpack_helpers_status status() const noexcept { return status_; }

 private:
  dlpack_helpers_status status_;
};

/* Throw dlpack_helpers::error for any status but OK, with this thread's
 * dlpack_last_error_message() (copied at once: the next failing call replaces it). */
inline void check(dlpack_helpers_status status) {
  if (status != DLPACK_HELPERS_STATUS_OK) throw error(status, dlpack_last_error_message());
}

/* The device of an owned versioned tensor (dlpack_get_device); throws on failure. */
inline DLDevice device_of(const managed_tensor& tensor) {
  DLDevice device;
  check(dlpack_get_device(tensor.get(), &device));
  return device;
}

/* The device of an owned legacy tensor (dlpack_legacy_get_device); throws on failure. */
inline DLDevice device_of(const legacy_managed_tensor& tensor) {
  DLDevice device;
  check(dlpack_legacy_get_device(tensor.get(), &device));
  return device;
}

/* Take ownership of a received versioned tensor after checking its version: returns the owner,
 * or releases the tensor and throws error(UNSUPPORTED_VERSION) when its major is not 1
 * (DLPack 1.0: only the deleter may be called). NULL throws error(NULL_POINTER). */
inline managed_tensor adopt_checked(DLManagedTensorVersioned* tensor,
                                    dlpack_helpers_version_compat* out_compat = nullptr) {
  check(dlpack_tensor_check_version_or_delete(tensor, out_compat));
  return managed_tensor(tensor);
}

#endif /* DLPACK_HELPERS_HPP_EXCEPTIONS */

}  // namespace dlpack_helpers

#endif /* DLPACK_HELPERS_HPP */
