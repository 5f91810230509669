/* Without Python in the process, the Python entry points report PYTHON_UNAVAILABLE (the library
 * never links libpython) and dlpack_get_info() does not claim DLPACK_HELPERS_CAP_PYTHON. */
#include "dlpack_helpers.h"
#include "check.h"

TEST(python_entry_points_report_unavailable) {
  int fake_object = 0;
  DLManagedTensorVersioned *t = NULL;
  DLDevice d = {kDLCPU, 0};
  void *capsule = NULL;
  const struct DLPackExchangeAPI *api = NULL;
  CHECK_STATUS(dlpack_capsule_consume(&fake_object, &t), DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE);
  CHECK_STATUS(dlpack_object_import(&fake_object, NULL, &t, NULL), DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE);
  CHECK_STATUS(dlpack_object_get_device(&fake_object, &d), DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE);
  CHECK_STATUS(dlpack_exchange_api_find(&fake_object, &api), DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE);
  uint32_t how = 99;
  CHECK_STATUS(dlpack_capsule_import(&fake_object, DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE, &t, &how),
               DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE);
  CHECK_STATUS(dlpack_object_query_device(&fake_object, DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR, &d),
               DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE);
  CHECK(how == 99);
  CHECK(t == NULL && api == NULL && d.device_type == kDLCPU);
  CHECK(strcmp(dlpack_status_python_exception(DLPACK_HELPERS_STATUS_PRODUCER_BUFFER_ERROR), "BufferError") == 0);
  (void)capsule;
  dlpack_capsule_destructor(&fake_object); /* no Python: does nothing */
}

TEST(info_has_no_python_capability) {
  dlpack_helpers_info info;
  info.struct_size = sizeof info;
  CHECK_STATUS(dlpack_get_info(&info), DLPACK_HELPERS_STATUS_OK);
  CHECK((info.capabilities & DLPACK_HELPERS_CAP_PYTHON) == 0);
}

TEST(case_8_capsule_name_macros) {
  CHECK(strcmp(DLPACK_HELPERS_CAPSULE_LEGACY, "dltensor") == 0);
  CHECK(strcmp(DLPACK_HELPERS_CAPSULE_LEGACY_USED, "used_dltensor") == 0);
  CHECK(strcmp(DLPACK_HELPERS_CAPSULE_VERSIONED, "dltensor_versioned") == 0);
  CHECK(strcmp(DLPACK_HELPERS_CAPSULE_VERSIONED_USED, "used_dltensor_versioned") == 0);
  CHECK(strcmp(DLPACK_HELPERS_CAPSULE_EXCHANGE_API, "dlpack_exchange_api") == 0);
}

int main(void) {
  RUN(python_entry_points_report_unavailable);
  RUN(info_has_no_python_capability);
  RUN(case_8_capsule_name_macros);
  return CHECK_REPORT();
}
