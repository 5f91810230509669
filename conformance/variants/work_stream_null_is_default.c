/* breaks: EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-10
 * profile: exchange
 * what: dlpack_exchange_api_current_work_stream reads a NULL answer as the legacy default stream without being asked */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_exchange_api_current_work_stream(const DLPackExchangeAPI *api, DLDevice device, uint32_t flags,
                                                              dlpack_helpers_stream *out) {
  __typeof__(dlpack_exchange_api_current_work_stream) *real =
      (__typeof__(dlpack_exchange_api_current_work_stream) *)dlsym(RTLD_NEXT, "dlpack_exchange_api_current_work_stream");
  dlpack_helpers_status st = real(api, device, flags, out);
  if (st == DLPACK_HELPERS_STATUS_NULL_WORK_STREAM) {
    out->kind = DLPACK_HELPERS_STREAM_LEGACY_DEFAULT;
    out->handle = (void *)1;
    return DLPACK_HELPERS_STATUS_OK;
  }
  return st;
}
