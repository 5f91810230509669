/* The FFI examples' reference: the steps every examples/ffi/<language>/ program does, in C.
 * Its output is what scripts/test.d/68-ffi.sh compares each language's output with.
 * Build: cc -I sdk/include steps.c -L sdk/lib -ldlpack_helpers -Wl,-rpath,sdk/lib */
#include <dlpack_helpers.h>
#include <stdio.h>
#include <stdlib.h>

/* What the producer hands the tensor as release context: its own buffer and a counter. */
struct producer { float *buf; int count; int released; };

static void on_release(void *ctx) {
  struct producer *p = ctx;
  printf("    release callback: buffer of %d floats\n", p->count);
  free(p->buf);
  p->released++;
}

static const char *yes(bool b) { return b ? "true" : "false"; }

int main(void) {
  /* (a) what the library is */
  dlpack_helpers_info info = {.struct_size = sizeof info};
  if (dlpack_get_info(&info) != DLPACK_HELPERS_STATUS_OK) return 1;
  printf("(a) library %s, DLPack ABI major %u, DLPack %u.%u, caps 0x%llx, legacy %s, spec %u, "
         "profiles 0x%x, filled %zu bytes\n",
         info.version, info.dlpack_abi_major, info.dlpack_version.major, info.dlpack_version.minor,
         (unsigned long long)info.capabilities, yes(info.accepts_legacy), info.spec_version,
         info.profiles, info.struct_size);

  /* (b) a producer: a 2x3 float32 tensor over our own buffer, released through a callback */
  struct producer prod = {.buf = malloc(6 * sizeof(float)), .count = 6};
  for (int i = 0; i < 6; i++) prod.buf[i] = (float)i;
  int64_t shape[2] = {2, 3};
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLManagedTensorVersioned *t = NULL;
  if (dlpack_tensor_create(prod.buf, cpu, 2, shape, NULL, f32, 0, 0, on_release, &prod, &t)) {
    printf("create failed: %s\n", dlpack_last_error_message());
    return 1;
  }
  printf("(b) created a 2x3 float32 tensor\n");

  /* (c) a consumer: version, validation, element [1][2] through the strides, queries, names */
  dlpack_helpers_version_compat compat = -1;
  if (dlpack_tensor_check_version_or_delete(t, &compat)) return 1;
  dlpack_helpers_validate_options opt = {.struct_size = sizeof opt,
      .flags = DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE | DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE,
      .dtype = f32};
  dlpack_helpers_layout layout;
  if (dlpack_tensor_validate(t, &opt, &layout)) return 1;
  const DLTensor *dl = &t->dl_tensor;
  const float *el = (const float *)((const char *)dl->data + dl->byte_offset) +
                    1 * dl->strides[0] + 2 * dl->strides[1];
  dlpack_helpers_host_access access = -1;
  if (dlpack_tensor_host_access(t, NULL, &access)) return 1;
  DLDevice dev;
  if (dlpack_get_device(t, &dev)) return 1;
  char dev_name[DLPACK_HELPERS_NAME_MAX], dtype_name[DLPACK_HELPERS_NAME_MAX];
  if (dlpack_device_format(dev, dev_name, sizeof dev_name, NULL)) return 1;
  if (dlpack_dtype_format(dl->dtype, dtype_name, sizeof dtype_name, NULL)) return 1;
  printf("(c) version compat %d, valid (numel %lld, %lld bytes), t[1][2] = %g, host access %d, "
         "cpu accessible %s, device %s (type %d id %d), dtype %s\n",
         compat, (long long)layout.numel, (long long)layout.nbytes, (double)*el, access,
         yes(dlpack_is_cpu_accessible(dev)), dev_name, (int)dev.device_type, dev.device_id,
         dtype_name);

  /* (e) a refused validation: the status, its name and the message */
  opt.dtype = (DLDataType){kDLInt, 64, 1};
  dlpack_helpers_status st = dlpack_tensor_validate(t, &opt, NULL);
  printf("(e) validate as int64: status %d %s: %s\n", st, dlpack_status_string(st),
         dlpack_last_error_message());

  /* (d) one delete: the deleter frees the struct and calls our release once */
  dlpack_tensor_delete(t);
  printf("(d) deleted; release callback ran %d time(s)\n", prod.released);
  return prod.released == 1 ? 0 : 1;
}
