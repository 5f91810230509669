/*
 * A DLPack producer in C, and a consumer that receives its tensor and releases it through
 * dlpack-helpers.
 *
 * The producer exports a 2x3 float32 matrix on the CPU as a DLManagedTensorVersioned: one
 * allocation holds the struct, the shape, the strides (in elements) and the data, so the deleter
 * frees it with one free(). It asks dlpack_version_negotiate which struct to export for the
 * consumer's max_version, as a Python __dlpack__ would.
 *
 * The consumer checks the version (refusing and releasing a tensor of an unknown major in one
 * step), asks for the device and whether host code may read it, reads the elements through
 * shape, strides and byte_offset, and hands the tensor back with dlpack_tensor_delete: the
 * deleter runs exactly once. Exits 0 when every step did what it should.
 *
 * Build: cc -std=c11 c_producer.c $(pkg-config --cflags --libs dlpack_helpers)   (docs/linking.md)
 */
#include <dlpack_helpers.h>

#include <stdio.h>
#include <stdlib.h>

/* ---- producer ------------------------------------------------------------------------------ */

typedef struct {
  DLManagedTensorVersioned managed; /* first member: the deleter gets back this struct's address */
  int64_t shape[2];
  int64_t strides[2];
  float data[6];
} producer_block;

static int deleter_calls = 0; /* only to show, at the end, that the deleter ran once */

static void producer_deleter(DLManagedTensorVersioned *self) {
  ++deleter_calls;
  free(self); /* self is the first member of the producer_block */
}

/* Export a new 2x3 matrix {0, 1, 2; 3, 4, 5} for a consumer that reads up to `max_version`
 * (NULL: the consumer only knows the legacy struct). NULL when there is no common version. */
static DLManagedTensorVersioned *producer_export(const DLPackVersion *max_version) {
  DLPackVersion mine = {DLPACK_HELPERS_DLPACK_MAJOR_VERSION, DLPACK_HELPERS_DLPACK_MINOR_VERSION};
  dlpack_helpers_version_choice choice;
  /* This producer exports only the versioned struct (no DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY). */
  dlpack_helpers_status s = dlpack_version_negotiate(mine, 0, max_version, &choice);
  if (s != DLPACK_HELPERS_STATUS_OK) {
    fprintf(stderr, "producer: %s (%s): %s\n", dlpack_status_string(s),
            dlpack_status_python_exception(s), dlpack_last_error_message());
    return NULL;
  }
  producer_block *b = calloc(1, sizeof *b);
  if (b == NULL) return NULL;
  for (int i = 0; i < 6; ++i) b->data[i] = (float)i;
  b->shape[0] = 2;
  b->shape[1] = 3;
  b->strides[0] = 3; /* strides are in elements, and never NULL from DLPack 1.2 on */
  b->strides[1] = 1;
  b->managed.version = choice.version;
  b->managed.manager_ctx = NULL;
  b->managed.deleter = producer_deleter;
  b->managed.flags = 0; /* writable, not a copy */
  DLTensor *t = &b->managed.dl_tensor;
  t->data = b->data;
  t->device.device_type = kDLCPU;
  t->device.device_id = 0;
  t->ndim = 2;
  t->dtype.code = kDLFloat;
  t->dtype.bits = 32;
  t->dtype.lanes = 1;
  t->shape = b->shape;
  t->strides = b->strides;
  t->byte_offset = 0;
  return &b->managed;
}

/* ---- consumer ------------------------------------------------------------------------------ */

/* Takes ownership of `tensor`; returns the sum of its elements, or -1 when it is refused. */
static double consumer_sum(DLManagedTensorVersioned *tensor) {
  dlpack_helpers_version_compat compat;
  dlpack_helpers_status s = dlpack_tensor_check_version_or_delete(tensor, &compat);
  if (s != DLPACK_HELPERS_STATUS_OK) {
    /* On UNSUPPORTED_VERSION the tensor was already released: do not touch it again. */
    fprintf(stderr, "consumer: refused: %s\n", dlpack_last_error_message());
    return -1;
  }
  DLDevice device;
  s = dlpack_get_device(tensor, &device);
  if (s != DLPACK_HELPERS_STATUS_OK || !dlpack_is_cpu_accessible(device)) {
    fprintf(stderr, "consumer: tensor not readable from the host\n");
    dlpack_tensor_delete(tensor);
    return -1;
  }
  const DLTensor *t = &tensor->dl_tensor;
  if (t->ndim != 2 || t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) {
    fprintf(stderr, "consumer: expected a 2-d float32 tensor\n");
    dlpack_tensor_delete(tensor);
    return -1;
  }
  const char *base = (const char *)t->data + t->byte_offset; /* byte_offset is in bytes */
  double sum = 0;
  for (int64_t i = 0; i < t->shape[0]; ++i)
    for (int64_t j = 0; j < t->shape[1]; ++j)
      sum += ((const float *)base)[i * t->strides[0] + j * t->strides[1]];
  printf("consumer: DLPack %u.%u tensor (%s), device type %d, sum %.1f\n",
         (unsigned)tensor->version.major, (unsigned)tensor->version.minor,
         compat == DLPACK_HELPERS_VERSION_EXACT ? "same version as the library" : "other minor",
         (int)device.device_type, sum);
  dlpack_tensor_delete(tensor); /* the deleter runs once; the struct is gone afterwards */
  return sum;
}

int main(void) {
  int ok = 1;

  DLPackVersion consumer_max = {1, 3};
  DLManagedTensorVersioned *tensor = producer_export(&consumer_max);
  ok &= tensor != NULL;
  if (tensor != NULL) ok &= consumer_sum(tensor) == 15.0;
  ok &= deleter_calls == 1;

  /* A legacy-only consumer (max_version None): this producer no longer exports the legacy
   * struct, so negotiation says BufferError and nothing is allocated. */
  ok &= producer_export(NULL) == NULL;

  /* A tensor from a future major: the consumer may only call its deleter (DLPack 1.0). */
  tensor = producer_export(&consumer_max);
  ok &= tensor != NULL;
  if (tensor != NULL) {
    tensor->version.major = 2;
    ok &= consumer_sum(tensor) == -1;
  }
  ok &= deleter_calls == 2;

  printf("c_producer: %s (deleter calls: %d)\n", ok ? "ok" : "FAILED", deleter_calls);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
