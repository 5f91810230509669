/* breaks: ABI-SYM-2
 * profile: core
 * what: the library exports a dlpack_ function the manifest does not list (a private helper
 *   left visible) */
#include "dlpc_abi.h"

int dlpack_internal_debug_dump(void) { return 0; }
