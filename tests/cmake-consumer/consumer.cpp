// The C++ consumer of the packaging tests: the installed dlpack_helpers.hpp, C++11.
#include <dlpack_helpers.hpp>

#include <cstdio>

static int released = 0;
extern "C" void count(DLManagedTensorVersioned*) { ++released; }

int main() {
  DLManagedTensorVersioned t = DLManagedTensorVersioned();
  t.version.major = 1;
  t.deleter = count;
  {
    dlpack_helpers::managed_tensor owner = dlpack_helpers::adopt_checked(&t);
    dlpack_helpers::managed_tensor other = std::move(owner);
  }
  std::printf("consumer_cxx: %s\n", released == 1 ? "ok" : "FAILED");
  return released == 1 ? 0 : 1;
}
