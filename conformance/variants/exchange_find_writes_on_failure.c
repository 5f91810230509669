/* breaks: EXCH-EXCHANGE-API-FIND-12
 * profile: exchange
 * what: dlpack_exchange_api_find writes NULL to *out_api when it finds no table */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_exchange_api_find(void *obj, const DLPackExchangeAPI **out) {
  __typeof__(dlpack_exchange_api_find) *real = (__typeof__(dlpack_exchange_api_find) *)dlsym(RTLD_NEXT, "dlpack_exchange_api_find");
  dlpack_helpers_status st = real(obj, out);
  if (st != DLPACK_HELPERS_STATUS_OK && out) *out = 0;
  return st;
}
