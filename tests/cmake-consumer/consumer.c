/* The consumer of the packaging tests: checks that the library it runs against is the one its
 * header describes, and releases a tensor through it. Exits 0 on success. */
#include <dlpack_helpers.h>

#include <stdio.h>
#include <string.h>

static int released = 0;
static void count(DLManagedTensorVersioned *self) { ++released; (void)self; }

int main(void) {
  int ok = 1;
  dlpack_helpers_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  ok &= dlpack_get_info(&info) == DLPACK_HELPERS_STATUS_OK;
  ok &= strcmp(info.version, DLPACK_HELPERS_VERSION_STRING) == 0;
  ok &= info.major == DLPACK_HELPERS_VERSION_MAJOR && info.minor == DLPACK_HELPERS_VERSION_MINOR;

  DLManagedTensorVersioned t;
  memset(&t, 0, sizeof t);
  t.version.major = 1;
  t.version.minor = 3;
  t.deleter = count;
  t.dl_tensor.device.device_type = kDLCUDAHost;
  DLDevice d;
  ok &= dlpack_get_device(&t, &d) == DLPACK_HELPERS_STATUS_OK && dlpack_is_cpu_accessible(d);
  dlpack_tensor_delete(&t);
  ok &= released == 1;

  printf("consumer: dlpack-helpers %s: %s\n", info.version, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
