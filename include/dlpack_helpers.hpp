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
 * - adopt_checked / adopt_legacy_checked: take ownership of a received tensor after checking it
 *   (the tensor is released when the check fails, then the error is thrown).
 * - create_tensor: dlpack_tensor_create returning an owner (throws on failure).
 * - view<T>(tensor)(i, j, ...): a typed, stride-aware element view of a CPU-accessible tensor;
 *   refuses a dtype other than T's, a device the host cannot read, a misaligned first element
 *   and (for non-const T) a read-only versioned tensor, with the library's status and message.
 *
 * Thread-safety: an owner is a plain value (like std::unique_ptr): use one from one thread at a
 * time. The deleter runs on the thread that destroys the owner (DLPack allows any thread).
 */
#ifndef DLPACK_HELPERS_HPP
#define DLPACK_HELPERS_HPP

#include "dlpack_helpers.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
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

/* Take ownership of a received legacy tensor after checking it, as adopt_checked does for a
 * versioned one. A legacy tensor carries no version, so the check is its structure: every rule
 * of dlpack_legacy_tensor_validate with `options` (NULL: the defaults: ndim, shape, strides,
 * dtype, data and the byte range). On a refusal the tensor is released (its deleter runs once)
 * and error(status) is thrown with the library's message; NULL throws error(NULL_POINTER)
 * (nothing to release). */
inline legacy_managed_tensor adopt_legacy_checked(DLManagedTensor* tensor,
                                                  const dlpack_helpers_validate_options* options = nullptr) {
  if (tensor == nullptr) {
    check(dlpack_legacy_tensor_validate(tensor, options, nullptr));  // NULL_POINTER, with message
  }
  legacy_managed_tensor owner(tensor);
  check(dlpack_legacy_tensor_validate(tensor, options, nullptr));  // throws: owner releases it
  return owner;
}

/* dlpack_tensor_create as an owner: a DLPack 1.3 versioned tensor describing the caller's own
 * buffer (`shape` and `strides` hold `ndim` elements and are copied; strides in elements, NULL
 * for compact row-major; `byte_offset` in bytes; `flags` DLPACK_FLAG_BITMASK_*). The owner's
 * destruction runs the tensor's deleter, which calls `release(release_ctx)` once; hand the
 * tensor out with release(). Throws error(status) when the description is refused, and then
 * `release` is not called and nothing is allocated (the buffer is still the caller's). */
inline managed_tensor create_tensor(void* data, DLDevice device, int32_t ndim, const int64_t* shape,
                                    const int64_t* strides, DLDataType dtype, uint64_t byte_offset = 0,
                                    uint64_t flags = 0, void (*release)(void*) = nullptr,
                                    void* release_ctx = nullptr) {
  DLManagedTensorVersioned* out = nullptr;
  check(dlpack_tensor_create(data, device, ndim, shape, strides, dtype, byte_offset, flags, release,
                             release_ctx, &out));
  return managed_tensor(out);
}

/* The DLPack dtype of a C++ element type: bool (kDLBool, 8 bits), every integer type
 * (kDLInt/kDLUInt of its size) and float/double (kDLFloat 32/64), one lane. Specialize it for
 * other element types (for example a half-precision struct: kDLFloat, 16). */
template <class T, class Enable = void>
struct dtype_of;

template <class T>
struct dtype_of<T, typename std::enable_if<std::is_same<T, bool>::value>::type> {
  static DLDataType value() noexcept {
    DLDataType d;
    d.code = kDLBool;
    d.bits = 8;
    d.lanes = 1;
    return d;
  }
};

template <class T>
struct dtype_of<T, typename std::enable_if<std::is_integral<T>::value && !std::is_same<T, bool>::value>::type> {
  static DLDataType value() noexcept {
    DLDataType d;
    d.code = static_cast<uint8_t>(std::is_signed<T>::value ? kDLInt : kDLUInt);
    d.bits = static_cast<uint8_t>(sizeof(T) * 8);
    d.lanes = 1;
    return d;
  }
};

template <class T>
struct dtype_of<T, typename std::enable_if<std::is_floating_point<T>::value && sizeof(T) <= 8>::type> {
  static DLDataType value() noexcept {
    DLDataType d;
    d.code = kDLFloat;
    d.bits = static_cast<uint8_t>(sizeof(T) * 8);
    d.lanes = 1;
    return d;
  }
};

/* A typed, stride-aware view of a tensor's elements, for host code. Made by view<T>(tensor),
 * which checks with the library (dlpack_dltensor_validate) that the dtype is exactly
 * dtype_of<T> (DTYPE_MISMATCH), the device is CPU-accessible (NOT_CPU_ACCESSIBLE), the first
 * element is aligned for T (MISALIGNED; strides are whole elements, so then every element is),
 * the description is valid, and, for a non-const T, that the tensor may be written: a versioned
 * tensor without READ_ONLY, or a legacy tensor only when the caller asserts it with the tag
 * `assume_legacy_writable` (a legacy struct cannot say read-only, so writability is never
 * invented: READ_ONLY otherwise; peer case 50). The view borrows: the tensor
 * must outlive it, and the owner keeps the deleter. operator()(i, j, ...) takes one index per
 * dimension (row-major order of the shape, strides in elements, byte_offset applied, NULL
 * strides of DLPack < 1.2 read as compact row-major) and does no bounds check; at() checks the
 * count and every index and throws error(INVALID_ARGUMENT). Copyable; no allocation. */
template <class T>
class tensor_view {
 public:
  typedef T element_type;

  int32_t ndim() const noexcept { return tensor_->ndim; }
  int64_t shape(int32_t axis) const noexcept { return tensor_->shape[axis]; }
  /* The stride of `axis` in elements (computed when the tensor's strides are NULL). */
  int64_t stride(int32_t axis) const noexcept {
    if (tensor_->strides != nullptr) return tensor_->strides[axis];
    int64_t s = 1;
    for (int32_t k = tensor_->ndim - 1; k > axis; --k) s *= tensor_->shape[k];
    return s;
  }
  /* The number of elements (product of the shape). */
  int64_t size() const noexcept { return numel_; }
  /* The first element's address (data + byte_offset). */
  T* data() const noexcept { return base_; }

  template <class... Index>
  T& operator()(Index... index) const noexcept {
    const int64_t idx[] = {0, static_cast<int64_t>(index)...};
    int64_t offset = 0;
    for (std::size_t k = 0; k < sizeof...(Index); ++k) offset += idx[k + 1] * stride(static_cast<int32_t>(k));
    return base_[offset];
  }

  template <class... Index>
  T& at(Index... index) const {
    const int64_t idx[] = {0, static_cast<int64_t>(index)...};
    if (static_cast<int32_t>(sizeof...(Index)) != tensor_->ndim) {
      throw error(DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
                  "view.at: " + std::to_string(sizeof...(Index)) + " indices for a tensor of ndim " +
                      std::to_string(tensor_->ndim));
    }
    for (std::size_t k = 0; k < sizeof...(Index); ++k) {
      if (idx[k + 1] < 0 || idx[k + 1] >= tensor_->shape[k]) {
        throw error(DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
                    "view.at: index " + std::to_string(idx[k + 1]) + " of axis " + std::to_string(k) +
                        " is outside [0, " + std::to_string(tensor_->shape[k]) + ")");
      }
    }
    return (*this)(index...);
  }

 private:
  template <class U>
  friend tensor_view<U> make_view(const DLTensor*, DLPackVersion, uint64_t, bool);
  tensor_view(const DLTensor* tensor, T* base, int64_t numel) noexcept : tensor_(tensor), base_(base), numel_(numel) {}
  const DLTensor* tensor_;
  T* base_;
  int64_t numel_;
};

/* Tag for view<T>(legacy, assume_legacy_writable): "I know this legacy tensor's memory is
 * writable" (the legacy struct cannot say; the same assertion as
 * DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE in C). */
struct assume_legacy_writable_t {};
static const assume_legacy_writable_t assume_legacy_writable = assume_legacy_writable_t();

/* The shared body of the view<T> overloads; `version.major == 0` means legacy. */
template <class T>
tensor_view<T> make_view(const DLTensor* tensor, DLPackVersion version, uint64_t flags,
                         bool legacy_writable = false) {
  typedef typename std::remove_const<T>::type element;
  dlpack_helpers_validate_options options = dlpack_helpers_validate_options();
  options.struct_size = sizeof options;
  options.flags = DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE | DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE |
                  DLPACK_HELPERS_VALIDATE_REQUIRE_ELEMENT_ALIGNED;
  if (!std::is_const<T>::value) {
    options.flags |= DLPACK_HELPERS_VALIDATE_REQUIRE_WRITABLE;
    if (legacy_writable) options.flags |= DLPACK_HELPERS_VALIDATE_LEGACY_WRITABLE;
  }
  options.dtype = dtype_of<element>::value();
  dlpack_helpers_layout layout;
  check(dlpack_dltensor_validate(tensor, version, flags, &options, &layout));
  void* address = nullptr;
  check(dlpack_dltensor_data_address(tensor, &address));
  return tensor_view<T>(tensor, static_cast<T*>(address), layout.numel);
}

/* view<T>(tensor): see tensor_view. Overloads for owners and raw pointers, versioned and legacy;
 * a NULL tensor throws error(NULL_POINTER). */
template <class T>
tensor_view<T> view(const DLManagedTensorVersioned* tensor) {
  if (tensor == nullptr) check(dlpack_tensor_validate(tensor, nullptr, nullptr));
  return make_view<T>(&tensor->dl_tensor, tensor->version, tensor->flags);
}
template <class T>
tensor_view<T> view(const DLManagedTensor* tensor) {
  if (tensor == nullptr) check(dlpack_legacy_tensor_validate(tensor, nullptr, nullptr));
  DLPackVersion legacy;
  legacy.major = 0;
  legacy.minor = 0;
  return make_view<T>(&tensor->dl_tensor, legacy, 0);
}
template <class T>
tensor_view<T> view(const DLManagedTensor* tensor, assume_legacy_writable_t) {
  if (tensor == nullptr) check(dlpack_legacy_tensor_validate(tensor, nullptr, nullptr));
  DLPackVersion legacy;
  legacy.major = 0;
  legacy.minor = 0;
  return make_view<T>(&tensor->dl_tensor, legacy, 0, true);
}
template <class T>
tensor_view<T> view(const managed_tensor& tensor) {
  return view<T>(static_cast<const DLManagedTensorVersioned*>(tensor.get()));
}
template <class T>
tensor_view<T> view(const legacy_managed_tensor& tensor) {
  return view<T>(static_cast<const DLManagedTensor*>(tensor.get()));
}
template <class T>
tensor_view<T> view(const legacy_managed_tensor& tensor, assume_legacy_writable_t tag) {
  return view<T>(static_cast<const DLManagedTensor*>(tensor.get()), tag);
}

#endif /* DLPACK_HELPERS_HPP_EXCEPTIONS */

}  // namespace dlpack_helpers

#endif /* DLPACK_HELPERS_HPP */
