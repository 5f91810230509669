// C++ consumers with dlpack_helpers.hpp: an RAII owner releases a received tensor exactly once,
// on every path out of the scope, exceptions included; check() turns a status into an exception.
//
// A std::vector-backed producer exports a 1-d int32 tensor; the consumer adopts it with
// adopt_checked (which refuses, and releases, a tensor of an unknown major), moves it between
// owners, and lets the last owner release it. Exits 0 when the deleter ran once per tensor.
//
// Build: c++ -std=c++11 cpp_raii.cpp $(pkg-config --cflags --libs dlpack_helpers)
#include <dlpack_helpers.hpp>

#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace {

int released = 0;

// The producer's context: the storage of the tensor, freed by the deleter.
struct Exported {
  DLManagedTensorVersioned managed;
  std::vector<int32_t> values;
  int64_t shape[1];
  int64_t strides[1];
};

extern "C" void exported_deleter(DLManagedTensorVersioned* self) {
  ++released;
  delete static_cast<Exported*>(self->manager_ctx);
}

DLManagedTensorVersioned* export_iota(int32_t n) {
  Exported* e = new Exported();
  e->values.resize(static_cast<size_t>(n));
  std::iota(e->values.begin(), e->values.end(), 1);
  e->shape[0] = n;
  e->strides[0] = 1;
  DLManagedTensorVersioned& m = e->managed;
  m.version.major = DLPACK_HELPERS_DLPACK_MAJOR_VERSION;
  m.version.minor = DLPACK_HELPERS_DLPACK_MINOR_VERSION;
  m.manager_ctx = e;
  m.deleter = exported_deleter;
  m.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  m.dl_tensor.data = e->values.data();
  m.dl_tensor.device.device_type = kDLCPU;
  m.dl_tensor.device.device_id = 0;
  m.dl_tensor.ndim = 1;
  m.dl_tensor.dtype.code = kDLInt;
  m.dl_tensor.dtype.bits = 32;
  m.dl_tensor.dtype.lanes = 1;
  m.dl_tensor.shape = e->shape;
  m.dl_tensor.strides = e->strides;
  m.dl_tensor.byte_offset = 0;
  return &m;
}

int64_t sum(const dlpack_helpers::managed_tensor& t) {
  if (!dlpack_is_cpu_accessible(dlpack_helpers::device_of(t)))
    throw std::runtime_error("not host memory");
  const DLTensor& dl = t->dl_tensor;
  const int32_t* p = reinterpret_cast<const int32_t*>(static_cast<const char*>(dl.data) + dl.byte_offset);
  int64_t s = 0;
  for (int64_t i = 0; i < dl.shape[0]; ++i) s += p[i * dl.strides[0]];
  return s;
}

}  // namespace

int main() {
  bool ok = true;

  {
    dlpack_helpers::managed_tensor owner = dlpack_helpers::adopt_checked(export_iota(100));
    dlpack_helpers::managed_tensor moved = std::move(owner);  // ownership moves, nothing is freed
    ok = ok && !owner && sum(moved) == 5050 && released == 0;
    std::printf("sum of 1..100 = %lld\n", static_cast<long long>(sum(moved)));
  }  // released here, once
  ok = ok && released == 1;

  try {
    dlpack_helpers::managed_tensor owner = dlpack_helpers::adopt_checked(export_iota(3));
    dlpack_helpers::check(dlpack_get_device(owner.get(), nullptr));  // NULL out-parameter: throws
    ok = false;
  } catch (const dlpack_helpers::error& e) {  // the owner was released during unwinding
    std::printf("caught: %s\n", e.what());
    ok = ok && e.status() == DLPACK_HELPERS_STATUS_NULL_POINTER;
  }
  ok = ok && released == 2;

  DLManagedTensorVersioned* future = export_iota(1);
  future->version.major = 2;  // a future major: only its deleter may be called
  try {
    dlpack_helpers::adopt_checked(future);
    ok = false;
  } catch (const dlpack_helpers::error& e) {
    std::printf("refused: %s\n", e.what());
    ok = ok && e.status() == DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION;
  }
  ok = ok && released == 3;

  std::printf("cpp_raii: %s (deleter calls: %d)\n", ok ? "ok" : "FAILED", released);
  return ok ? 0 : 1;
}
