/* What a variant that wraps a function needs: the manifest's declarations (dlpc_abi.h, written
 * by `check` into the build folder) and REAL(name), the base implementation's `name` (which the
 * variant's own definition hides), typed from that declaration, so a variant restates no
 * prototype. Not a variant itself (`check` builds only *.c). */
#ifndef DLPC_VARIANT_REAL_H
#define DLPC_VARIANT_REAL_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdint.h>
#include "dlpc_abi.h"
#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))
#endif
