/* A second implementation of the DLPack helper API, core profile, written from the
 * specification alone (spec/ and the manifest spec/abi.toml), in C99 with libc only.
 *
 * Every function cites the requirement IDs it implements. Where the specification was
 * ambiguous or silent, NOTES.md records the question and the choice made here. Functions of the
 * streams, python and exchange profiles are not exported (the library claims core only).
 */
#include "dlpack_abi.h"

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

#define CIMPL_VERSION "0.1.0+cimpl" /* CORE-GET-INFO-6: a "+" suffix names this implementation */
#define CIMPL_MAJOR 0u
#define CIMPL_MINOR 1u
#define CIMPL_PATCH 0u

typedef dlpack_helpers_status status_t;

#define ST(name) DLPACK_HELPERS_STATUS_##name

/* ------------------------------------------------------------------------------------------ */
/* The last-error message (CORE-LAST-ERROR-MESSAGE-1..7, ABI-ERROR-1)                          */
/* ------------------------------------------------------------------------------------------ */

/* One buffer per thread, all zero (the empty string) before the first failing call. It is
 * written only by a failing call, so a successful call leaves text and pointer unchanged. */
static __thread char g_msg[512];
/* The status that went with g_msg (dlpack_last_error_status), 0 before the first failing call. */
static __thread status_t g_status;

static status_t fail(status_t st, const char *fmt, ...)
{
    va_list ap;
    g_status = st;
    va_start(ap, fmt);
    vsnprintf(g_msg, sizeof g_msg, fmt, ap); /* never a NUL inside: vsnprintf ends at one */
    va_end(ap);
    if (g_msg[0] == '\0') {
        strcpy(g_msg, "failure");
    }
    return st;
}

API const char *dlpack_last_error_message(void)
{
    return g_msg;
}

API int32_t dlpack_last_error_status(void)
{
    return g_status;
}

/* Quotes up to 40 bytes of a caller's string, ASCII printable kept, everything else escaped
 * (\xNN), so that the message stays UTF-8 and holds no NUL (CORE-LAST-ERROR-MESSAGE-7). */
static const char *quote(const char *s, char *buf, size_t size)
{
    size_t o = 0, i;
    for (i = 0; s[i] != '\0' && i < 40 && o + 5 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
            buf[o++] = (char)c;
        } else {
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
        }
    }
    if (s[i] != '\0' && o + 4 < size) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

/* ------------------------------------------------------------------------------------------ */
/* Status names (CORE-STATUS-STRING-1..4)                                                      */
/* ------------------------------------------------------------------------------------------ */

API const char *dlpack_status_string(dlpack_helpers_status status)
{
    switch (status) {
    case 0: return "OK";
    case 1: return "NULL_POINTER";
    case 2: return "INVALID_ARGUMENT";
    case 3: return "PANIC";
    case 10: return "UNSUPPORTED_VERSION";
    case 11: return "NO_COMMON_VERSION";
    case 12: return "KEYWORD_NOT_UNDERSTOOD";
    case 20: return "INVALID_NDIM";
    case 21: return "NULL_SHAPE";
    case 22: return "NULL_STRIDES";
    case 23: return "INVALID_SHAPE";
    case 24: return "OVERFLOW";
    case 25: return "NULL_DATA";
    case 26: return "INVALID_DTYPE";
    case 27: return "DTYPE_MISMATCH";
    case 28: return "INVALID_FLAGS";
    case 29: return "NOT_CONTIGUOUS";
    case 30: return "NOT_CPU_ACCESSIBLE";
    case 31: return "MISALIGNED";
    case 32: return "READ_ONLY";
    case 33: return "OPAQUE_HANDLE";
    case 34: return "BUFFER_TOO_SMALL";
    case 35: return "UNKNOWN_NAME";
    case 36: return "UNSUPPORTED_STRIDES";
    case 37: return "OUT_OF_MEMORY";
    case 38: return "COPIED_REJECTED";
    case 40: return "INVALID_STREAM";
    case 41: return "COPY_FORBIDDEN";
    case 42: return "UNSUPPORTED_DEVICE";
    case 43: return "BACKEND_UNAVAILABLE";
    case 44: return "DEVICE_ERROR";
    case 45: return "DEVICE_UNKNOWN";
    case 46: return "INVALID_STREAM_TYPE";
    case 47: return "NULL_WORK_STREAM";
    case 48: return "INVALID_DEVICE";
    case 49: return "DEVICE_ID_UNKNOWN";
    case 60: return "PYTHON_UNAVAILABLE";
    case 61: return "NOT_A_CAPSULE";
    case 62: return "CAPSULE_NAME";
    case 63: return "CAPSULE_CONSUMED";
    case 64: return "NO_DLPACK_METHOD";
    case 65: return "PRODUCER_BUFFER_ERROR";
    case 66: return "PRODUCER_TYPE_ERROR";
    case 67: return "PRODUCER_ERROR";
    case 68: return "BAD_PRODUCER_RESULT";
    case 69: return "EXCHANGE_API_INVALID";
    case 70: return "NO_EXCHANGE_API";
    case 71: return "PYTHON_ERROR_SET";
    default: return "UNKNOWN_STATUS";
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Checked 64-bit arithmetic (exact, never wrapped: CORE-DLTENSOR-LAYOUT-8)                    */
/* ------------------------------------------------------------------------------------------ */

static int mul_ok(int64_t a, int64_t b, int64_t *r)
{
    if (a > 0) {
        if (b > 0) {
            if (a > INT64_MAX / b) return 0;
        } else {
            if (b < INT64_MIN / a) return 0;
        }
    } else {
        if (b > 0) {
            if (a < INT64_MIN / b) return 0;
        } else {
            if (a != 0 && b < INT64_MAX / a) return 0;
        }
    }
    *r = a * b;
    return 1;
}

static int add_ok(int64_t a, int64_t b, int64_t *r)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return 0;
    *r = a + b;
    return 1;
}

/* ceil(x * b / 8) for x >= 0, b > 0, exact; 0 when it does not fit in uint64_t. */
static int ceil_mul_div8(uint64_t x, uint64_t b, uint64_t *r)
{
    uint64_t q = x / 8u, rem = x % 8u, hi, lo;
    if (q != 0 && q > UINT64_MAX / b) return 0;
    hi = q * b;
    lo = (rem * b + 7u) / 8u;
    if (hi > UINT64_MAX - lo) return 0;
    *r = hi + lo;
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Device types                                                                                */
/* ------------------------------------------------------------------------------------------ */

static int device_assigned(DLDeviceType t) /* CORE-DEVICE-CHECK: 1..4, 7..18 */
{
    return (t >= 1u && t <= 4u) || (t >= 7u && t <= 18u);
}

static int pointer_addressed(DLDeviceType t) /* CORE-DLTENSOR-LAYOUT definitions */
{
    return t == 1u || t == 2u || t == 3u || t == 10u || t == 11u || t == 13u || t == 14u;
}

static dlpack_helpers_host_access host_access_of(DLDeviceType t) /* CORE-DEVICE-HOST-ACCESS-1 */
{
    switch (t) {
    case 1u: case 3u: case 11u: case 13u:
        return DLPACK_HELPERS_HOST_ACCESS_ALWAYS;
    case 2u: case 4u: case 7u: case 8u: case 9u: case 10u: case 15u: case 16u: case 17u: case 18u:
        return DLPACK_HELPERS_HOST_ACCESS_NEVER;
    default:
        return DLPACK_HELPERS_HOST_ACCESS_DEPENDS;
    }
}

API bool dlpack_is_cpu_accessible(DLDevice device) /* CORE-IS-CPU-ACCESSIBLE-1..4 */
{
    return host_access_of(device.device_type) == DLPACK_HELPERS_HOST_ACCESS_ALWAYS;
}

API dlpack_helpers_host_access dlpack_device_host_access(DLDevice device)
{
    return host_access_of(device.device_type);
}

API bool dlpack_device_is_pointer_addressed(DLDevice device)
{
    return pointer_addressed(device.device_type) ? true : false;
}

API dlpack_helpers_status dlpack_device_check(DLDevice device, uint32_t flags)
{
    if (flags & ~DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE) /* CORE-DEVICE-CHECK-1 */
        return fail(ST(INVALID_ARGUMENT), "dlpack_device_check: flags has unknown bits 0x%x",
                    (unsigned)(flags & ~DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE));
    if (device.device_id < 0) /* CORE-DEVICE-CHECK-2 */
        return fail(ST(INVALID_DEVICE), "dlpack_device_check: device_id %d is negative",
                    (int)device.device_id);
    if (flags == 0 && !device_assigned(device.device_type)) /* CORE-DEVICE-CHECK-3 */
        return fail(ST(INVALID_DEVICE),
                    "dlpack_device_check: device_type %u is not assigned by DLPack 1.3",
                    (unsigned)device.device_type);
    return ST(OK);
}

API dlpack_helpers_status dlpack_get_device(const DLManagedTensorVersioned *tensor, DLDevice *out_device)
{
    if (tensor == NULL || out_device == NULL) /* CORE-GET-DEVICE-1 */
        return fail(ST(NULL_POINTER), "dlpack_get_device: %s is NULL",
                    tensor == NULL ? "tensor" : "out_device");
    if (tensor->version.major != 1u) /* CORE-GET-DEVICE-2 */
        return fail(ST(UNSUPPORTED_VERSION),
                    "dlpack_get_device: tensor->version is %u.%u, this implementation reads major 1",
                    (unsigned)tensor->version.major, (unsigned)tensor->version.minor);
    if (tensor->dl_tensor.device.device_id < 0) /* CORE-GET-DEVICE-3 */
        return fail(ST(INVALID_DEVICE), "dlpack_get_device: device_id %d is negative",
                    (int)tensor->dl_tensor.device.device_id);
    *out_device = tensor->dl_tensor.device; /* CORE-GET-DEVICE-4 */
    return ST(OK);
}

API dlpack_helpers_status dlpack_legacy_get_device(const DLManagedTensor *tensor, DLDevice *out_device)
{
    if (tensor == NULL || out_device == NULL)
        return fail(ST(NULL_POINTER), "dlpack_legacy_get_device: %s is NULL",
                    tensor == NULL ? "tensor" : "out_device");
    if (tensor->dl_tensor.device.device_id < 0)
        return fail(ST(INVALID_DEVICE), "dlpack_legacy_get_device: device_id %d is negative",
                    (int)tensor->dl_tensor.device.device_id);
    *out_device = tensor->dl_tensor.device;
    return ST(OK);
}

/* ------------------------------------------------------------------------------------------ */
/* Release                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Internal calls use these static functions, never the exported symbols, so that another
 * library's functions of the same names cannot interpose on this library's own releases. */
static void release_versioned(DLManagedTensorVersioned *tensor) /* CORE-TENSOR-DELETE-1..8 */
{
    void (*d)(DLManagedTensorVersioned *);
    if (tensor == NULL) return;
    d = tensor->deleter; /* the only member read */
    if (d != NULL) d(tensor);
}

static void release_legacy(DLManagedTensor *tensor) /* CORE-LEGACY-TENSOR-DELETE-1..8 */
{
    void (*d)(DLManagedTensor *);
    if (tensor == NULL) return;
    d = tensor->deleter;
    if (d != NULL) d(tensor);
}

API void dlpack_tensor_delete(DLManagedTensorVersioned *tensor)
{
    release_versioned(tensor);
}

API void dlpack_legacy_tensor_delete(DLManagedTensor *tensor)
{
    release_legacy(tensor);
}

/* ------------------------------------------------------------------------------------------ */
/* Versions                                                                                    */
/* ------------------------------------------------------------------------------------------ */

static dlpack_helpers_version_compat compat_of(uint32_t minor) /* CORE-VERSION-CHECK-1 */
{
    if (minor == 3u) return DLPACK_HELPERS_VERSION_EXACT;
    if (minor < 3u) return DLPACK_HELPERS_VERSION_OLDER_MINOR;
    return DLPACK_HELPERS_VERSION_NEWER_MINOR;
}

static status_t unsupported(const char *fn, DLPackVersion v)
{
    return fail(ST(UNSUPPORTED_VERSION),
                "%s: DLPack version %u.%u has major %u; this implementation reads major 1",
                fn, (unsigned)v.major, (unsigned)v.minor, (unsigned)v.major);
}

API dlpack_helpers_status dlpack_version_check(DLPackVersion version, dlpack_helpers_version_compat *out_compat)
{
    if (version.major != 1u) return unsupported("dlpack_version_check", version);
    if (out_compat != NULL) *out_compat = compat_of(version.minor);
    return ST(OK);
}

API dlpack_helpers_status dlpack_tensor_check_version(const DLManagedTensorVersioned *tensor,
                                                      dlpack_helpers_version_compat *out_compat)
{
    DLPackVersion v;
    if (tensor == NULL)
        return fail(ST(NULL_POINTER), "dlpack_tensor_check_version: tensor is NULL");
    v = tensor->version; /* CORE-TENSOR-CHECK-VERSION-3: nothing else */
    if (v.major != 1u) return unsupported("dlpack_tensor_check_version", v);
    if (out_compat != NULL) *out_compat = compat_of(v.minor);
    return ST(OK);
}

API dlpack_helpers_status dlpack_tensor_check_version_or_delete(DLManagedTensorVersioned *tensor,
                                                                dlpack_helpers_version_compat *out_compat)
{
    DLPackVersion v;
    void (*d)(DLManagedTensorVersioned *);
    if (tensor == NULL)
        return fail(ST(NULL_POINTER), "dlpack_tensor_check_version_or_delete: tensor is NULL");
    v = tensor->version;
    if (v.major == 1u) {
        if (out_compat != NULL) *out_compat = compat_of(v.minor);
        return ST(OK);
    }
    d = tensor->deleter;
    if (d != NULL) d(tensor); /* CORE-TENSOR-CHECK-VERSION-OR-DELETE-3 */
    /* The message is set after the deleter returned (-7). */
    return fail(ST(UNSUPPORTED_VERSION),
                "dlpack_tensor_check_version_or_delete: DLPack version %u.%u has major %u; "
                "this implementation reads major 1, so the tensor was released",
                (unsigned)v.major, (unsigned)v.minor, (unsigned)v.major);
}

static int version_ge(DLPackVersion a, DLPackVersion b)
{
    return a.major > b.major || (a.major == b.major && a.minor >= b.minor);
}

API dlpack_helpers_status dlpack_version_negotiate(DLPackVersion producer_version, uint32_t producer_flags,
                                                   const DLPackVersion *max_version,
                                                   dlpack_helpers_version_choice *out_choice)
{
    const uint32_t known = DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY | DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD;
    const int legacy_ok = (producer_flags & DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY) != 0;
    DLPackVersion m;
    dlpack_helpers_version_choice c;
    if (out_choice == NULL) /* -1 */
        return fail(ST(NULL_POINTER), "dlpack_version_negotiate: out_choice is NULL");
    if (producer_flags & ~known) /* -2 */
        return fail(ST(INVALID_ARGUMENT), "dlpack_version_negotiate: producer_flags has unknown bits 0x%x",
                    (unsigned)(producer_flags & ~known));
    c.kind = DLPACK_HELPERS_EXPORT_LEGACY;
    c.version.major = 0;
    c.version.minor = 0;
    if (max_version == NULL) { /* -3 */
        if (legacy_ok || producer_version.major == 0u) {
            *out_choice = c;
            return ST(OK);
        }
        return fail(ST(NO_COMMON_VERSION),
                    "dlpack_version_negotiate: no max_version (a consumer that reads only the legacy "
                    "struct) and the producer (DLPack %u.%u) does not export the legacy struct",
                    (unsigned)producer_version.major, (unsigned)producer_version.minor);
    }
    if (producer_flags & DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD) /* -4 */
        return fail(ST(KEYWORD_NOT_UNDERSTOOD),
                    "dlpack_version_negotiate: the producer's __dlpack__ does not understand max_version");
    m = *max_version;
    if (producer_version.major == 0u) { /* -5 */
        *out_choice = c;
        return ST(OK);
    }
    if (version_ge(m, producer_version) || m.major == producer_version.major) { /* -6 */
        c.kind = DLPACK_HELPERS_EXPORT_VERSIONED;
        c.version = producer_version;
        *out_choice = c;
        return ST(OK);
    }
    if (m.major == 0u && legacy_ok) { /* -7 */
        *out_choice = c;
        return ST(OK);
    }
    return fail(ST(NO_COMMON_VERSION),
                "dlpack_version_negotiate: consumer max_version %u.%u has a major below the producer's "
                "DLPack %u.%u and no legacy export applies",
                (unsigned)m.major, (unsigned)m.minor, (unsigned)producer_version.major,
                (unsigned)producer_version.minor);
}

/* ------------------------------------------------------------------------------------------ */
/* Information                                                                                 */
/* ------------------------------------------------------------------------------------------ */

#define FILLS(c, T, f) (offsetof(T, f) + sizeof(((T *)0)->f) <= (c))
#define FILL_END(T, f) (offsetof(T, f) + sizeof(((T *)0)->f))

API dlpack_helpers_status dlpack_get_info(dlpack_helpers_info *out_info)
{
    typedef dlpack_helpers_info I;
    size_t c, end = sizeof(size_t);
    if (out_info == NULL) return fail(ST(NULL_POINTER), "dlpack_get_info: out_info is NULL");
    c = out_info->struct_size; /* CORE-GET-INFO-2: the only byte read */
    if (c < sizeof(size_t)) /* -3 */
        return fail(ST(INVALID_ARGUMENT), "dlpack_get_info: out_info->struct_size is %lu, below sizeof(size_t)",
                    (unsigned long)c);
#define PUT(f, v)                                                   \
    do {                                                            \
        if (FILLS(c, I, f)) {                                       \
            out_info->f = (v);                                      \
            if (FILL_END(I, f) > end) end = FILL_END(I, f);         \
        }                                                           \
    } while (0)
    PUT(version, CIMPL_VERSION);
    PUT(major, CIMPL_MAJOR);
    PUT(minor, CIMPL_MINOR);
    PUT(patch, CIMPL_PATCH);
    PUT(dlpack_abi_major, 1u);
    if (FILLS(c, I, dlpack_version)) {
        out_info->dlpack_version.major = 1u;
        out_info->dlpack_version.minor = 3u;
        if (FILL_END(I, dlpack_version) > end) end = FILL_END(I, dlpack_version);
    }
    PUT(capabilities, 0u); /* core only: CORE-GET-INFO-10 */
    PUT(accepts_legacy, true);
    PUT(spec_version, DLPACK_HELPERS_SPEC_VERSION);
    PUT(profiles, DLPACK_HELPERS_PROFILE_CORE);
#undef PUT
    out_info->struct_size = c >= sizeof(I) ? sizeof(I) : end; /* -4 */
    return ST(OK);
}

/* ------------------------------------------------------------------------------------------ */
/* Dtypes                                                                                      */
/* ------------------------------------------------------------------------------------------ */

static int dtype_bits_allowed(unsigned code, unsigned bits) /* CORE-DLTENSOR-LAYOUT-5 */
{
    switch (code) {
    case 0: case 1:
        return bits == 1 || bits == 2 || bits == 4 || bits == 8 || bits == 16 || bits == 32 ||
               bits == 64 || bits == 128;
    case 2: return bits == 16 || bits == 32 || bits == 64 || bits == 128;
    case 3: return bits != 0 && bits % 8 == 0;
    case 4: return bits == 16;
    case 5: return bits == 32 || bits == 64 || bits == 128;
    case 6: return bits == 8;
    case 7: case 8: case 9: case 10: case 11: case 12: case 13: case 14: return bits == 8;
    case 15: case 16: return bits == 6;
    case 17: return bits == 4;
    default: return 0;
    }
}

static int dtype_valid(DLDataType d)
{
    return d.lanes >= 1 && dtype_bits_allowed(d.code, d.bits);
}

static const char *const k_fixed_names[18] = {
    NULL, NULL, NULL, NULL, "bfloat16", NULL, "bool", "float8_e3m4", "float8_e4m3",
    "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"};
static const char *const k_family_names[6] = {"int", "uint", "float", "handle", NULL, "complex"};

/* The one-lane name of a valid dtype, into buf (>= 32 bytes); returns its length. */
static size_t dtype_base_name(unsigned code, unsigned bits, char *buf)
{
    if (code < 18 && k_fixed_names[code] != NULL) {
        strcpy(buf, k_fixed_names[code]);
        return strlen(buf);
    }
    return (size_t)sprintf(buf, "%s%u", k_family_names[code], bits);
}

API dlpack_helpers_status dlpack_dtype_format(DLDataType dtype, char *buf, size_t buf_size, size_t *out_len)
{
    char name[48];
    size_t len;
    if (buf == NULL) return fail(ST(NULL_POINTER), "dlpack_dtype_format: buf is NULL");
    if (!dtype_valid(dtype))
        return fail(ST(INVALID_DTYPE), "dlpack_dtype_format: dtype {code %u, bits %u, lanes %u} is not valid",
                    (unsigned)dtype.code, (unsigned)dtype.bits, (unsigned)dtype.lanes);
    len = dtype_base_name(dtype.code, dtype.bits, name);
    if (dtype.lanes > 1) len += (size_t)sprintf(name + len, "x%u", (unsigned)dtype.lanes);
    if (buf_size < len + 1) {
        if (out_len != NULL) *out_len = len;
        return fail(ST(BUFFER_TOO_SMALL), "dlpack_dtype_format: the name needs %lu bytes with its NUL, buf_size is %lu",
                    (unsigned long)(len + 1), (unsigned long)buf_size);
    }
    memcpy(buf, name, len + 1);
    if (out_len != NULL) *out_len = len;
    return ST(OK);
}

/* Parses "" (returns 1 with *v = 1 when allow_empty) or a decimal without sign or leading
 * zero ("0" itself allowed), at most max; returns 0 otherwise. */
static int parse_decimal(const char *s, unsigned long max, unsigned long *v)
{
    unsigned long x = 0;
    size_t i;
    if (s[0] == '\0') return 0;
    if (s[0] == '0' && s[1] != '\0') return 0;
    for (i = 0; s[i] != '\0'; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        x = x * 10u + (unsigned long)(s[i] - '0');
        if (x > max) return 0;
    }
    *v = x;
    return 1;
}

API dlpack_helpers_status dlpack_dtype_parse(const char *name, DLDataType *out_dtype)
{
    unsigned code, bits;
    char base[48], q[200];
    if (name == NULL || out_dtype == NULL)
        return fail(ST(NULL_POINTER), "dlpack_dtype_parse: %s is NULL", name == NULL ? "name" : "out_dtype");
    for (code = 0; code < 18; code++) {
        for (bits = 1; bits < 256; bits++) {
            size_t n;
            const char *rest;
            unsigned long lanes = 1;
            if (!dtype_bits_allowed(code, bits)) continue;
            n = dtype_base_name(code, bits, base);
            if (strncmp(name, base, n) != 0) continue;
            rest = name + n;
            if (rest[0] != '\0') {
                if (rest[0] != 'x' || !parse_decimal(rest + 1, 65535ul, &lanes) || lanes < 2) continue;
            }
            out_dtype->code = (uint8_t)code;
            out_dtype->bits = (uint8_t)bits;
            out_dtype->lanes = (uint16_t)lanes;
            return ST(OK);
        }
    }
    return fail(ST(UNKNOWN_NAME), "dlpack_dtype_parse: \"%s\" is not a dtype name", quote(name, q, sizeof q));
}

/* ------------------------------------------------------------------------------------------ */
/* Device names                                                                                */
/* ------------------------------------------------------------------------------------------ */

static const char *const k_device_names[19] = {
    NULL, "cpu", "cuda", "cuda_host", "opencl", NULL, NULL, "vulkan", "metal", "vpi", "rocm",
    "rocm_host", "ext_dev", "cuda_managed", "oneapi", "webgpu", "hexagon", "maia", "trn"};

API dlpack_helpers_status dlpack_device_format(DLDevice device, char *buf, size_t buf_size, size_t *out_len)
{
    char name[48];
    size_t len;
    if (buf == NULL) return fail(ST(NULL_POINTER), "dlpack_device_format: buf is NULL");
    if (device.device_id < 0)
        return fail(ST(INVALID_DEVICE), "dlpack_device_format: device_id %d is negative", (int)device.device_id);
    if (device.device_type >= 19u || k_device_names[device.device_type] == NULL)
        return fail(ST(UNKNOWN_NAME), "dlpack_device_format: device_type %u has no name",
                    (unsigned)device.device_type);
    len = (size_t)sprintf(name, "%s:%d", k_device_names[device.device_type], (int)device.device_id);
    if (buf_size < len + 1) {
        if (out_len != NULL) *out_len = len;
        return fail(ST(BUFFER_TOO_SMALL), "dlpack_device_format: the name needs %lu bytes with its NUL, buf_size is %lu",
                    (unsigned long)(len + 1), (unsigned long)buf_size);
    }
    memcpy(buf, name, len + 1);
    if (out_len != NULL) *out_len = len;
    return ST(OK);
}

API dlpack_helpers_status dlpack_device_parse(const char *name, DLDevice *out_device)
{
    unsigned t;
    char q[200];
    if (name == NULL || out_device == NULL)
        return fail(ST(NULL_POINTER), "dlpack_device_parse: %s is NULL", name == NULL ? "name" : "out_device");
    for (t = 1; t < 19u; t++) {
        size_t n;
        unsigned long id = 0;
        if (k_device_names[t] == NULL) continue;
        n = strlen(k_device_names[t]);
        if (strncmp(name, k_device_names[t], n) != 0) continue;
        if (name[n] == ':') {
            if (!parse_decimal(name + n + 1, 2147483647ul, &id)) continue;
        } else if (name[n] != '\0') {
            continue;
        }
        out_device->device_type = (DLDeviceType)t;
        out_device->device_id = (int32_t)id;
        return ST(OK);
    }
    return fail(ST(UNKNOWN_NAME), "dlpack_device_parse: \"%s\" is not a device name", quote(name, q, sizeof q));
}

/* ------------------------------------------------------------------------------------------ */
/* Layout (CORE-DLTENSOR-LAYOUT-1..21)                                                         */
/* ------------------------------------------------------------------------------------------ */

/* Fills s[0..ndim) with the compact strides of shape (row-major or column-major); extents of 0
 * count as 1. Returns -1 on success, else the index of the shape element whose stride does not
 * fit (CORE-COMPACT-STRIDES-5/6, CORE-DLTENSOR-LAYOUT-9). */
static int compact_strides(int32_t ndim, const int64_t *shape, int column_major, int64_t *s)
{
    int32_t i;
    if (ndim == 0) return -1;
    if (!column_major) {
        s[ndim - 1] = 1;
        for (i = ndim - 2; i >= 0; i--) {
            int64_t e = shape[i + 1] > 1 ? shape[i + 1] : 1;
            if (!mul_ok(s[i + 1], e, &s[i])) return (int)(i + 1);
        }
    } else {
        s[0] = 1;
        for (i = 1; i < ndim; i++) {
            int64_t e = shape[i - 1] > 1 ? shape[i - 1] : 1;
            if (!mul_ok(s[i - 1], e, &s[i])) return (int)(i - 1);
        }
    }
    return -1;
}

/* The computation after the ndim and shape checks (the caller made them): dtype, byte_offset,
 * extents, overflow, then every field. fn names the public function for messages. */
static status_t layout_body(const char *fn, const DLTensor *t, int padded_flag, dlpack_helpers_layout *out)
{
    const int32_t ndim = t->ndim;
    int64_t implied[1024];
    const int64_t *s;
    uint32_t b, element_bits;
    int subbyte, padded, packed, empty = 0;
    int32_t i;
    dlpack_helpers_layout L;

    if (!dtype_valid(t->dtype)) /* -5 */
        return fail(ST(INVALID_DTYPE), "%s: dtype {code %u, bits %u, lanes %u} is not valid", fn,
                    (unsigned)t->dtype.code, (unsigned)t->dtype.bits, (unsigned)t->dtype.lanes);
    if (t->byte_offset > (uint64_t)INT64_MAX) /* -6 */
        return fail(ST(OVERFLOW), "%s: byte_offset %llu is above INT64_MAX", fn, (unsigned long long)t->byte_offset);
    for (i = 0; i < ndim; i++) { /* -7 */
        if (t->shape[i] < 0)
            return fail(ST(INVALID_SHAPE), "%s: shape[%d] is %lld, negative", fn, (int)i, (long long)t->shape[i]);
        if (t->shape[i] == 0) empty = 1;
    }
    if (t->strides != NULL || ndim == 0) {
        s = t->strides;
    } else { /* -9 */
        int bad = compact_strides(ndim, t->shape, 0, implied);
        if (bad >= 0)
            return fail(ST(OVERFLOW), "%s: the compact row-major stride implied by shape[%d] does not fit in int64_t",
                        fn, bad);
        s = implied;
    }

    b = (uint32_t)t->dtype.bits * (uint32_t)t->dtype.lanes;
    subbyte = (b % 8u) != 0;
    padded = subbyte && padded_flag;
    packed = subbyte && !padded_flag;
    element_bits = padded ? ((b + 7u) / 8u) * 8u : b;

    memset(&L, 0, sizeof L);
    L.element_bits = element_bits; /* -15 */
    {
        uint64_t v = (uint64_t)t->byte_offset;
        if (pointer_addressed(t->device.device_type)) v += (uint64_t)(uintptr_t)t->data; /* modulo 2^64 */
        L.first_element_alignment = v & (~v + 1u); /* -16: 0 for 0 */
    }
    if (empty) { /* -10, -14, -18 */
        L.numel = 0;
        L.nbytes = 0;
        L.storage_elements = 0;
        L.lowest_byte = (int64_t)t->byte_offset;
        L.end_byte = (int64_t)t->byte_offset;
        L.properties = DLPACK_HELPERS_LAYOUT_C_CONTIGUOUS | DLPACK_HELPERS_LAYOUT_F_CONTIGUOUS |
                       DLPACK_HELPERS_LAYOUT_COMPACT | DLPACK_HELPERS_LAYOUT_EMPTY;
    } else {
        int64_t numel = 1, lo = 0, hi = 0, storage, prod;
        int c_ok = 1, f_ok = 1, compact = 1, broadcast = 0, negative = 0;
        for (i = 0; i < ndim; i++) /* -11 */
            if (!mul_ok(numel, t->shape[i], &numel))
                return fail(ST(OVERFLOW), "%s: the element count overflows int64_t at shape[%d]", fn, (int)i);
        for (i = 0; i < ndim; i++) {
            int64_t term;
            if (t->shape[i] <= 1) continue;
            if (!mul_ok(t->shape[i] - 1, s[i], &term))
                return fail(ST(OVERFLOW), "%s: (shape[%d] - 1) * strides[%d] overflows int64_t", fn, (int)i, (int)i);
            if (s[i] < 0) {
                if (!add_ok(lo, term, &lo))
                    return fail(ST(OVERFLOW), "%s: the lowest element offset overflows int64_t", fn);
            } else if (s[i] > 0) {
                if (!add_ok(hi, term, &hi))
                    return fail(ST(OVERFLOW), "%s: the highest element offset overflows int64_t", fn);
            }
        }
        /* storage_elements = hi - lo + 1, with hi >= 0 >= lo */
        if (lo == INT64_MIN || !add_ok(hi, -lo, &storage) || !add_ok(storage, 1, &storage))
            return fail(ST(OVERFLOW), "%s: the storage extent overflows int64_t", fn);
        L.numel = numel;
        L.storage_elements = storage;
        if (!packed) { /* -12 */
            int64_t size = (int64_t)(element_bits / 8u), nbytes, los, his, end;
            if (!mul_ok(numel, size, &nbytes))
                return fail(ST(OVERFLOW), "%s: nbytes overflows int64_t", fn);
            if (!mul_ok(lo, size, &los))
                return fail(ST(OVERFLOW), "%s: the lowest byte offset overflows int64_t", fn);
            if (hi == INT64_MAX || !mul_ok(hi + 1, size, &his) || !add_ok((int64_t)t->byte_offset, his, &end))
                return fail(ST(OVERFLOW), "%s: end_byte overflows int64_t", fn);
            L.nbytes = nbytes;
            L.lowest_byte = (int64_t)t->byte_offset + los;
            L.end_byte = end;
        } else { /* -13 */
            uint64_t nb, e, m, off = t->byte_offset, mag;
            if (!ceil_mul_div8((uint64_t)numel, b, &nb) || nb > (uint64_t)INT64_MAX)
                return fail(ST(OVERFLOW), "%s: nbytes overflows int64_t", fn);
            if (!ceil_mul_div8((uint64_t)hi + 1u, b, &e) || e > (uint64_t)INT64_MAX - off)
                return fail(ST(OVERFLOW), "%s: end_byte overflows int64_t", fn);
            mag = lo == INT64_MIN ? (uint64_t)INT64_MAX + 1u : (uint64_t)(-lo);
            if (!ceil_mul_div8(mag, b, &m) || m > off + (uint64_t)INT64_MAX + 1u)
                return fail(ST(OVERFLOW), "%s: lowest_byte overflows int64_t", fn);
            L.nbytes = (int64_t)nb;
            L.end_byte = (int64_t)(off + e);
            if (m <= off) {
                L.lowest_byte = (int64_t)(off - m);
            } else {
                uint64_t d = m - off;
                L.lowest_byte = d == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)d;
            }
        }
        /* -17 */
        prod = 1;
        for (i = ndim - 1; i >= 0; i--) {
            if (t->shape[i] > 1 && s[i] != prod) c_ok = 0;
            prod *= t->shape[i]; /* <= numel: fits */
        }
        prod = 1;
        for (i = 0; i < ndim; i++) {
            if (t->shape[i] > 1 && s[i] != prod) f_ok = 0;
            prod *= t->shape[i];
        }
        {
            /* COMPACT: the dimensions of E, sorted by stride, chain from 1. */
            int32_t order[1024], k = 0, m2, j;
            for (i = 0; i < ndim; i++) {
                if (t->shape[i] <= 1) continue;
                if (s[i] == 0) broadcast = 1;
                if (s[i] < 0) negative = 1;
                /* insertion by stride */
                j = k++;
                while (j > 0 && s[order[j - 1]] > s[i]) {
                    order[j] = order[j - 1];
                    j--;
                }
                order[j] = i;
            }
            if (k > 0) {
                int64_t expect = 1;
                for (m2 = 0; m2 < k; m2++) {
                    if (s[order[m2]] != expect) {
                        compact = 0;
                        break;
                    }
                    if (m2 + 1 < k && !mul_ok(expect, t->shape[order[m2]], &expect)) {
                        compact = 0;
                        break;
                    }
                }
            }
        }
        if (c_ok) L.properties |= DLPACK_HELPERS_LAYOUT_C_CONTIGUOUS;
        if (f_ok) L.properties |= DLPACK_HELPERS_LAYOUT_F_CONTIGUOUS;
        if (compact || c_ok || f_ok) L.properties |= DLPACK_HELPERS_LAYOUT_COMPACT;
        if (broadcast) L.properties |= DLPACK_HELPERS_LAYOUT_BROADCAST;
        if (negative) L.properties |= DLPACK_HELPERS_LAYOUT_NEGATIVE_STRIDES;
    }
    if (t->strides == NULL && ndim != 0) L.properties |= DLPACK_HELPERS_LAYOUT_STRIDES_IMPLIED;
    if (packed) L.properties |= DLPACK_HELPERS_LAYOUT_PACKED_SUB_BYTE;
    *out = L;
    return ST(OK);
}

static status_t ndim_shape_checks(const char *fn, const DLTensor *t) /* -2, -3 */
{
    if (t->ndim < 0 || t->ndim > DLPACK_HELPERS_MAX_NDIM)
        return fail(ST(INVALID_NDIM), "%s: ndim %d is outside 0..1024", fn, (int)t->ndim);
    if (t->ndim != 0 && t->shape == NULL)
        return fail(ST(NULL_SHAPE), "%s: shape is NULL but ndim is %d", fn, (int)t->ndim);
    return ST(OK);
}

API dlpack_helpers_status dlpack_dltensor_layout(const DLTensor *tensor, uint64_t flags, dlpack_helpers_layout *out_layout)
{
    status_t st;
    if (tensor == NULL || out_layout == NULL)
        return fail(ST(NULL_POINTER), "dlpack_dltensor_layout: %s is NULL", tensor == NULL ? "tensor" : "out_layout");
    st = ndim_shape_checks("dlpack_dltensor_layout", tensor);
    if (st != ST(OK)) return st;
    return layout_body("dlpack_dltensor_layout", tensor,
                       (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0, out_layout);
}

static uint64_t defined_flags(uint32_t minor) /* flag bits a declared minor defines */
{
    return minor == 0u ? 0x3u : 0x7u;
}

API dlpack_helpers_status dlpack_tensor_layout(const DLManagedTensorVersioned *tensor, dlpack_helpers_layout *out_layout)
{
    status_t st;
    DLPackVersion v;
    uint64_t fl;
    if (tensor == NULL || out_layout == NULL)
        return fail(ST(NULL_POINTER), "dlpack_tensor_layout: %s is NULL", tensor == NULL ? "tensor" : "out_layout");
    v = tensor->version;
    if (v.major != 1u) return unsupported("dlpack_tensor_layout", v);
    fl = tensor->flags;
    if (v.minor <= 3u && (fl & ~defined_flags(v.minor)))
        return fail(ST(INVALID_FLAGS), "dlpack_tensor_layout: flags 0x%llx has bits DLPack 1.%u does not define",
                    (unsigned long long)fl, (unsigned)v.minor);
    st = ndim_shape_checks("dlpack_tensor_layout", &tensor->dl_tensor);
    if (st != ST(OK)) return st;
    return layout_body("dlpack_tensor_layout", &tensor->dl_tensor,
                       (fl & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0, out_layout);
}

API dlpack_helpers_status dlpack_compact_strides(int32_t ndim, const int64_t *shape, bool column_major, int64_t *out_strides)
{
    int64_t tmp[1024];
    int32_t i;
    int bad;
    if (ndim < 0 || ndim > DLPACK_HELPERS_MAX_NDIM)
        return fail(ST(INVALID_NDIM), "dlpack_compact_strides: ndim %d is outside 0..1024", (int)ndim);
    if (ndim == 0) return ST(OK);
    if (out_strides == NULL || shape == NULL)
        return fail(ST(NULL_POINTER), "dlpack_compact_strides: %s is NULL", shape == NULL ? "shape" : "out_strides");
    for (i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return fail(ST(INVALID_SHAPE), "dlpack_compact_strides: shape[%d] is %lld, negative", (int)i,
                        (long long)shape[i]);
    bad = compact_strides(ndim, shape, column_major ? 1 : 0, tmp);
    if (bad >= 0)
        return fail(ST(OVERFLOW), "dlpack_compact_strides: the stride from shape[%d] does not fit in int64_t", bad);
    memcpy(out_strides, tmp, (size_t)ndim * sizeof(int64_t));
    return ST(OK);
}

/* dlpack_dltensor_dim_order (spec/functions/dlpack_dltensor_dim_order.md): the key of a
 * dimension is (extent is 1, |stride| or 0 for an extent-1 dimension, -index); the order is the
 * keys ascending. NULL strides: every |stride| reads as 0, so the index decides (row-major). */
static int dim_before(const DLTensor *t, int32_t a, int32_t b)
{
    int one_a = t->shape[a] == 1, one_b = t->shape[b] == 1;
    uint64_t ma = 0, mb = 0;
    if (one_a != one_b) return one_a < one_b;
    if (!one_a && t->strides != NULL) {
        ma = t->strides[a] < 0 ? (uint64_t)0 - (uint64_t)t->strides[a] : (uint64_t)t->strides[a];
        mb = t->strides[b] < 0 ? (uint64_t)0 - (uint64_t)t->strides[b] : (uint64_t)t->strides[b];
    }
    if (ma != mb) return ma < mb;
    return a > b;
}

API dlpack_helpers_status dlpack_dltensor_dim_order(const DLTensor *tensor, int32_t *out_order, int32_t capacity)
{
    int32_t tmp[1024];
    int32_t i, j, d;
    if (tensor == NULL) return fail(ST(NULL_POINTER), "dlpack_dltensor_dim_order: tensor is NULL");
    if (tensor->ndim < 0 || tensor->ndim > DLPACK_HELPERS_MAX_NDIM)
        return fail(ST(INVALID_NDIM), "dlpack_dltensor_dim_order: ndim %d is outside 0..1024", (int)tensor->ndim);
    if (tensor->ndim == 0) return ST(OK);
    if (out_order == NULL) return fail(ST(NULL_POINTER), "dlpack_dltensor_dim_order: out_order is NULL");
    if (capacity < tensor->ndim)
        return fail(ST(BUFFER_TOO_SMALL), "dlpack_dltensor_dim_order: capacity %d is below ndim %d", (int)capacity,
                    (int)tensor->ndim);
    if (tensor->shape == NULL)
        return fail(ST(NULL_SHAPE), "dlpack_dltensor_dim_order: shape is NULL but ndim is %d", (int)tensor->ndim);
    for (i = 0; i < tensor->ndim; i++)
        if (tensor->shape[i] < 0)
            return fail(ST(INVALID_SHAPE), "dlpack_dltensor_dim_order: shape[%d] is %lld, negative", (int)i,
                        (long long)tensor->shape[i]);
    /* Insertion sort: at most 1024 dimensions, no allocation. */
    for (i = 0; i < tensor->ndim; i++) {
        d = i;
        for (j = i; j > 0 && dim_before(tensor, d, tmp[j - 1]); j--) tmp[j] = tmp[j - 1];
        tmp[j] = d;
    }
    memcpy(out_order, tmp, (size_t)tensor->ndim * sizeof(int32_t));
    return ST(OK);
}

/* ------------------------------------------------------------------------------------------ */
/* Addresses                                                                                   */
/* ------------------------------------------------------------------------------------------ */

API dlpack_helpers_status dlpack_dltensor_data_address(const DLTensor *tensor, void **out_address)
{
    uintptr_t d;
    uint64_t off;
    if (tensor == NULL || out_address == NULL)
        return fail(ST(NULL_POINTER), "dlpack_dltensor_data_address: %s is NULL", tensor == NULL ? "tensor" : "out_address");
    if (!pointer_addressed(tensor->device.device_type))
        return fail(ST(OPAQUE_HANDLE),
                    "dlpack_dltensor_data_address: data of device_type %u is an opaque handle, not an address; "
                    "use data and byte_offset separately", (unsigned)tensor->device.device_type);
    d = (uintptr_t)tensor->data;
    off = tensor->byte_offset;
    if (off > (uint64_t)(UINTPTR_MAX - d))
        return fail(ST(OVERFLOW), "dlpack_dltensor_data_address: data + byte_offset passes the end of the address space");
    *out_address = (void *)((char *)tensor->data + off);
    return ST(OK);
}

API dlpack_helpers_status dlpack_dltensor_data_location(const DLTensor *tensor, void **out_data, uint64_t *out_byte_offset)
{
    uintptr_t d;
    uint64_t off;
    if (tensor == NULL || out_data == NULL || out_byte_offset == NULL)
        return fail(ST(NULL_POINTER), "dlpack_dltensor_data_location: %s is NULL",
                    tensor == NULL ? "tensor" : out_data == NULL ? "out_data" : "out_byte_offset");
    d = (uintptr_t)tensor->data;
    off = tensor->byte_offset;
    if (!pointer_addressed(tensor->device.device_type)) {
        *out_data = tensor->data;
        *out_byte_offset = off;
        return ST(OK);
    }
    if (off > (uint64_t)(UINTPTR_MAX - d))
        return fail(ST(OVERFLOW), "dlpack_dltensor_data_location: data + byte_offset passes the end of the address space");
    *out_data = (void *)((char *)tensor->data + off);
    *out_byte_offset = 0;
    return ST(OK);
}

API dlpack_helpers_status dlpack_dltensor_fits_allocation(const DLTensor *tensor, uint64_t flags, const void *base,
                                                          uint64_t size_in_bytes, bool *out_fits)
{
    dlpack_helpers_layout L;
    status_t st;
    uint64_t b = (uint64_t)(uintptr_t)base;
    if (tensor == NULL || out_fits == NULL)
        return fail(ST(NULL_POINTER), "dlpack_dltensor_fits_allocation: %s is NULL", tensor == NULL ? "tensor" : "out_fits");
    st = ndim_shape_checks("dlpack_dltensor_fits_allocation", tensor);
    if (st != ST(OK)) return st;
    st = layout_body("dlpack_dltensor_fits_allocation", tensor, (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0, &L);
    if (st != ST(OK)) return st;
    /* -3: base + size <= UINTPTR_MAX + 1 */
    if (size_in_bytes > 0 && size_in_bytes - 1u > (uint64_t)UINTPTR_MAX - b)
        return fail(ST(OVERFLOW), "dlpack_dltensor_fits_allocation: base + size_in_bytes passes the end of the address space");
    if (!pointer_addressed(tensor->device.device_type) && base != tensor->data)
        return fail(ST(OPAQUE_HANDLE),
                    "dlpack_dltensor_fits_allocation: device_type %u has opaque handles; base must be the tensor's data",
                    (unsigned)tensor->device.device_type);
    if (L.properties & DLPACK_HELPERS_LAYOUT_EMPTY) {
        *out_fits = true;
        return ST(OK);
    }
    {
        /* data + lowest >= base and data + end <= base + size, exactly. Both sides are
         * offsets from data: lowest >= base - data and end <= base - data + size. Work in a
         * sign + magnitude form with 64-bit pieces: compare (data - base) + lowest >= 0 and
         * (data - base) + end <= size. */
        uint64_t d = (uint64_t)(uintptr_t)tensor->data;
        int fits = 1;
        if (!pointer_addressed(tensor->device.device_type)) d = b; /* base == data */
        /* delta = d - b, as sign and magnitude */
        {
            int neg = d < b;
            uint64_t mag = neg ? b - d : d - b;
            /* lower: delta + lowest >= 0 */
            if (L.lowest_byte < 0) {
                uint64_t lm = L.lowest_byte == INT64_MIN ? (uint64_t)INT64_MAX + 1u : (uint64_t)(-L.lowest_byte);
                if (neg) fits = 0;          /* negative + negative */
                else if (mag < lm) fits = 0;
            } else {
                uint64_t lp = (uint64_t)L.lowest_byte;
                if (neg && mag > lp) fits = 0;
            }
            /* upper: delta + end <= size (end > 0) */
            if (fits) {
                uint64_t e = (uint64_t)L.end_byte;
                if (neg) {
                    if (e > mag && e - mag > size_in_bytes) fits = 0;
                } else {
                    if (mag > size_in_bytes || e > size_in_bytes - mag) fits = 0;
                }
            }
        }
        *out_fits = fits ? true : false;
    }
    return ST(OK);
}

/* ------------------------------------------------------------------------------------------ */
/* Validation (CORE-DLTENSOR-VALIDATE-1..26)                                                   */
/* ------------------------------------------------------------------------------------------ */

#define VALIDATE_KNOWN 0x11FFFu /* the fourteen DLPACK_HELPERS_VALIDATE_* bits */

typedef struct {
    uint32_t flags;
    int32_t max_ndim;
    uint64_t data_alignment;
    uint64_t first_element_alignment;
    DLDataType dtype;
} opts_t;

static status_t read_options(const char *fn, const dlpack_helpers_validate_options *o, opts_t *r)
{
    typedef dlpack_helpers_validate_options O;
    size_t c;
    memset(r, 0, sizeof *r);
    if (o == NULL) return ST(OK); /* -2 */
    c = o->struct_size; /* -3 */
    if (c < sizeof(size_t))
        return fail(ST(INVALID_ARGUMENT), "%s: options->struct_size %lu is below sizeof(size_t)", fn, (unsigned long)c);
    if (FILLS(c, O, flags)) r->flags = o->flags; /* -4 */
    if (FILLS(c, O, max_ndim)) r->max_ndim = o->max_ndim;
    if (FILLS(c, O, data_alignment)) r->data_alignment = o->data_alignment;
    if (FILLS(c, O, first_element_alignment)) r->first_element_alignment = o->first_element_alignment;
    if (FILLS(c, O, dtype)) r->dtype = o->dtype;
    if (r->flags & ~VALIDATE_KNOWN) /* -6 */
        return fail(ST(INVALID_ARGUMENT), "%s: options->flags has unknown bits 0x%x", fn, (unsigned)(r->flags & ~VALIDATE_KNOWN));
    if (r->data_alignment & (r->data_alignment - 1u))
        return fail(ST(INVALID_ARGUMENT), "%s: options->data_alignment %llu is not a power of two", fn,
                    (unsigned long long)r->data_alignment);
    if (r->first_element_alignment & (r->first_element_alignment - 1u))
        return fail(ST(INVALID_ARGUMENT), "%s: options->first_element_alignment %llu is not a power of two", fn,
                    (unsigned long long)r->first_element_alignment);
    if (r->max_ndim < 0)
        return fail(ST(INVALID_ARGUMENT), "%s: options->max_ndim %d is negative", fn, (int)r->max_ndim);
    return ST(OK);
}

/* The rules from CORE-DLTENSOR-VALIDATE-8 on, options already read. */
static status_t validate_rules(const char *fn, const DLTensor *t, DLPackVersion version, uint64_t flags,
                               const opts_t *o, dlpack_helpers_layout *out_layout)
{
    const int versioned = version.major != 0u;
    dlpack_helpers_layout L;
    status_t st;
    int padded;
    if (versioned && version.major != 1u) return unsupported(fn, version); /* -8 */
    if (!versioned) flags = 0;
    if (versioned && version.minor <= 3u && (flags & ~defined_flags(version.minor))) /* -9 */
        return fail(ST(INVALID_FLAGS), "%s: flags 0x%llx has bits DLPack 1.%u does not define", fn,
                    (unsigned long long)flags, (unsigned)version.minor);
    if (t->ndim < 0 || t->ndim > DLPACK_HELPERS_MAX_NDIM || (o->max_ndim > 0 && t->ndim > o->max_ndim)) /* -10 */
        return fail(ST(INVALID_NDIM), "%s: ndim %d is outside 0..%d", fn, (int)t->ndim,
                    (int)(o->max_ndim > 0 && o->max_ndim < DLPACK_HELPERS_MAX_NDIM ? o->max_ndim : DLPACK_HELPERS_MAX_NDIM));
    if (t->ndim != 0 && t->shape == NULL) /* -11 */
        return fail(ST(NULL_SHAPE), "%s: shape is NULL but ndim is %d", fn, (int)t->ndim);
    if (t->ndim != 0 && t->strides == NULL && versioned && version.minor >= 2u &&
        !(o->flags & DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES)) /* -12 */
        return fail(ST(NULL_STRIDES), "%s: strides is NULL but ndim is %d and the producer declares DLPack 1.%u", fn,
                    (int)t->ndim, (unsigned)version.minor);
    padded = versioned && (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);
    st = layout_body(fn, t, padded, &L); /* -13 */
    if (st != ST(OK)) return st;
    if ((o->flags & DLPACK_HELPERS_VALIDATE_REJECT_VECTOR) && t->dtype.lanes > 1) /* -14 */
        return fail(ST(DTYPE_MISMATCH), "%s: dtype has %u lanes and the caller refuses vectors", fn, (unsigned)t->dtype.lanes);
    if ((o->flags & DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE) &&
        (t->dtype.code != o->dtype.code || t->dtype.bits != o->dtype.bits || t->dtype.lanes != o->dtype.lanes))
        return fail(ST(DTYPE_MISMATCH), "%s: dtype {%u, %u, %u} is not the required {%u, %u, %u}", fn,
                    (unsigned)t->dtype.code, (unsigned)t->dtype.bits, (unsigned)t->dtype.lanes, (unsigned)o->dtype.code,
                    (unsigned)o->dtype.bits, (unsigned)o->dtype.lanes);
    if (t->device.device_id < 0) /* -15 */
        return fail(ST(INVALID_DEVICE), "%s: device_id %d is negative", fn, (int)t->device.device_id);
    {
        const int empty = (L.properties & DLPACK_HELPERS_LAYOUT_EMPTY) != 0;
        const int addr = pointer_addressed(t->device.device_type);
        const uint64_t d = (uint64_t)(uintptr_t)t->data;
        const int resolve = (o->flags & DLPACK_HELPERS_VALIDATE_RESOLVE_HOST_ACCESS) &&
                            (o->flags & DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE) &&
                            host_access_of(t->device.device_type) == DLPACK_HELPERS_HOST_ACCESS_DEPENDS;
        if (!empty && addr && t->data == NULL) /* -16 */
            return fail(ST(NULL_DATA), "%s: data is NULL for a tensor of %lld elements on device_type %u", fn,
                        (long long)L.numel, (unsigned)t->device.device_type);
        if (!empty && addr) { /* -17 */
            if (L.lowest_byte < 0) {
                uint64_t m = L.lowest_byte == INT64_MIN ? (uint64_t)INT64_MAX + 1u : (uint64_t)(-L.lowest_byte);
                if (d < m) return fail(ST(OVERFLOW), "%s: data + lowest_byte is below address 0", fn);
            }
            if ((uint64_t)L.end_byte > (uint64_t)UINTPTR_MAX - d)
                return fail(ST(OVERFLOW), "%s: data + end_byte passes the end of the address space", fn);
        }
        if ((o->flags & DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE) && !resolve &&
            host_access_of(t->device.device_type) != DLPACK_HELPERS_HOST_ACCESS_ALWAYS) /* -18 */
            return fail(ST(NOT_CPU_ACCESSIBLE), "%s: device_type %u is not always host-accessible", fn,
                        (unsigned)t->device.device_type);
        if (!empty) { /* -19 */
            uint64_t a = L.first_element_alignment;
            if (o->data_alignment > 1u && addr && (d % o->data_alignment) != 0)
                return fail(ST(MISALIGNED), "%s: data is not aligned to %llu bytes", fn, (unsigned long long)o->data_alignment);
            if (o->first_element_alignment > 1u && a != 0 && a < o->first_element_alignment)
                return fail(ST(MISALIGNED), "%s: the first element is aligned to %llu bytes, below the required %llu", fn,
                            (unsigned long long)a, (unsigned long long)o->first_element_alignment);
            if (o->flags & DLPACK_HELPERS_VALIDATE_REQUIRE_ELEMENT_ALIGNED) {
                uint64_t natural = 1;
                if (!(L.properties & DLPACK_HELPERS_LAYOUT_PACKED_SUB_BYTE)) {
                    uint64_t size = L.element_bits / 8u;
                    natural = size & (~size + 1u);
                }
                if (a != 0 && a < natural)
                    return fail(ST(MISALIGNED), "%s: the first element is aligned to %llu bytes, below its natural %llu", fn,
                                (unsigned long long)a, (unsigned long long)natural);
            }
        }
        if ((o->flags & DLPACK_HELPERS_VALIDATE_REQUIRE_C_CONTIGUOUS) && !(L.properties & DLPACK_HELPERS_LAYOUT_C_CONTIGUOUS))
            return fail(ST(NOT_CONTIGUOUS), "%s: the tensor is not C-contiguous", fn); /* -20 */
        if ((o->flags & DLPACK_HELPERS_VALIDATE_REQUIRE_F_CONTIGUOUS) && !(L.properties & DLPACK_HELPERS_LAYOUT_F_CONTIGUOUS))
            return fail(ST(NOT_CONTIGUOUS), "%s: the tensor is not F-contiguous", fn);
        if ((o->flags & DLPACK_HELPERS_VALIDATE_REQUIRE_COMPACT) && !(L.properties & DLPACK_HELPERS_LAYOUT_COMPACT))
            return fail(ST(NOT_CONTIGUOUS), "%s: the tensor is not compact", fn);
        if ((o->flags & DLPACK_HELPERS_VALIDATE_REJECT_BROADCAST) && (L.properties & DLPACK_HELPERS_LAYOUT_BROADCAST))
            return fail(ST(UNSUPPORTED_STRIDES), "%s: the tensor has a zero stride on an extent above 1", fn); /* -21 */
        if ((o->flags & DLPACK_HELPERS_VALIDATE_REJECT_NEGATIVE_STRIDES) && (L.properties & DLPACK_HELPERS_LAYOUT_NEGATIVE_STRIDES))
            return fail(ST(UNSUPPORTED_STRIDES), "%s: the tensor has negative strides", fn);
        if (o->flags & DLPACK_HELPERS_VALIDATE_REQUIRE_WRITABLE) { /* -22 */
            if (versioned && (flags & DLPACK_FLAG_BITMASK_READ_ONLY))
                return fail(ST(READ_ONLY), "%s: the tensor's flags have READ_ONLY", fn);
            if (!versioned && !(o->flags & DLPACK_HELPERS_VALIDATE_LEGACY_WRITABLE))
                return fail(ST(READ_ONLY), "%s: a legacy tensor's writability is unknown (pass LEGACY_WRITABLE)", fn);
        }
        if ((o->flags & DLPACK_HELPERS_VALIDATE_REJECT_COPIED) && versioned && (flags & DLPACK_FLAG_BITMASK_IS_COPIED))
            return fail(ST(COPIED_REJECTED), "%s: the tensor's flags have IS_COPIED", fn);
        if (resolve) /* -23: no device runtime in a core-only implementation: access unknown */
            return fail(ST(NOT_CPU_ACCESSIBLE),
                        "%s: device_type %u is host-accessible depending on the allocation, and this core-only "
                        "implementation has no device runtime to ask (host access unknown)", fn,
                        (unsigned)t->device.device_type);
    }
    if (out_layout != NULL) *out_layout = L; /* -24 */
    return ST(OK);
}

API dlpack_helpers_status dlpack_dltensor_validate(const DLTensor *tensor, DLPackVersion version, uint64_t flags,
                                                   const dlpack_helpers_validate_options *options,
                                                   dlpack_helpers_layout *out_layout)
{
    opts_t o;
    status_t st;
    if (tensor == NULL) return fail(ST(NULL_POINTER), "dlpack_dltensor_validate: tensor is NULL");
    st = read_options("dlpack_dltensor_validate", options, &o);
    if (st != ST(OK)) return st;
    return validate_rules("dlpack_dltensor_validate", tensor, version, flags, &o, out_layout);
}

API dlpack_helpers_status dlpack_tensor_validate(const DLManagedTensorVersioned *tensor,
                                                 const dlpack_helpers_validate_options *options,
                                                 dlpack_helpers_layout *out_layout)
{
    opts_t o;
    status_t st;
    DLPackVersion v;
    if (tensor == NULL) return fail(ST(NULL_POINTER), "dlpack_tensor_validate: tensor is NULL");
    st = read_options("dlpack_tensor_validate", options, &o);
    if (st != ST(OK)) return st;
    v = tensor->version;
    if (v.major != 1u) return unsupported("dlpack_tensor_validate", v); /* -3, major 0 included */
    return validate_rules("dlpack_tensor_validate", &tensor->dl_tensor, v, tensor->flags, &o, out_layout);
}

API dlpack_helpers_status dlpack_legacy_tensor_validate(const DLManagedTensor *tensor,
                                                        const dlpack_helpers_validate_options *options,
                                                        dlpack_helpers_layout *out_layout)
{
    opts_t o;
    status_t st;
    DLPackVersion v0;
    if (tensor == NULL) return fail(ST(NULL_POINTER), "dlpack_legacy_tensor_validate: tensor is NULL");
    st = read_options("dlpack_legacy_tensor_validate", options, &o);
    if (st != ST(OK)) return st;
    v0.major = 0;
    v0.minor = 0;
    return validate_rules("dlpack_legacy_tensor_validate", &tensor->dl_tensor, v0, 0, &o, out_layout);
}

/* ------------------------------------------------------------------------------------------ */
/* Flags and writability                                                                       */
/* ------------------------------------------------------------------------------------------ */

API dlpack_helpers_status dlpack_tensor_writability(const DLManagedTensorVersioned *tensor,
                                                    dlpack_helpers_writability *out_writability)
{
    if (tensor == NULL || out_writability == NULL)
        return fail(ST(NULL_POINTER), "dlpack_tensor_writability: %s is NULL", tensor == NULL ? "tensor" : "out_writability");
    if (tensor->version.major != 1u) return unsupported("dlpack_tensor_writability", tensor->version);
    *out_writability = (tensor->flags & DLPACK_FLAG_BITMASK_READ_ONLY) ? DLPACK_HELPERS_WRITABILITY_READ_ONLY
                                                                       : DLPACK_HELPERS_WRITABILITY_WRITABLE;
    return ST(OK);
}

API dlpack_helpers_status dlpack_legacy_tensor_writability(const DLManagedTensor *tensor,
                                                           dlpack_helpers_writability *out_writability)
{
    if (tensor == NULL || out_writability == NULL)
        return fail(ST(NULL_POINTER), "dlpack_legacy_tensor_writability: %s is NULL",
                    tensor == NULL ? "tensor" : "out_writability");
    *out_writability = DLPACK_HELPERS_WRITABILITY_UNKNOWN;
    return ST(OK);
}

API dlpack_helpers_status dlpack_tensor_get_flags(const DLManagedTensorVersioned *tensor, uint64_t *out_flags)
{
    if (tensor == NULL || out_flags == NULL)
        return fail(ST(NULL_POINTER), "dlpack_tensor_get_flags: %s is NULL", tensor == NULL ? "tensor" : "out_flags");
    if (tensor->version.major != 1u) return unsupported("dlpack_tensor_get_flags", tensor->version);
    *out_flags = tensor->flags;
    return ST(OK);
}

API dlpack_helpers_status dlpack_tensor_set_flags(DLManagedTensorVersioned *tensor, uint64_t set, uint64_t clear)
{
    DLPackVersion v;
    if (tensor == NULL) return fail(ST(NULL_POINTER), "dlpack_tensor_set_flags: tensor is NULL");
    if ((set | clear) & ~(uint64_t)0x7u)
        return fail(ST(INVALID_FLAGS), "dlpack_tensor_set_flags: set|clear 0x%llx has bits outside 0x7",
                    (unsigned long long)(set | clear));
    v = tensor->version;
    if (v.major != 1u) return unsupported("dlpack_tensor_set_flags", v);
    if (v.minor <= 3u && (set & ~defined_flags(v.minor)))
        return fail(ST(INVALID_FLAGS), "dlpack_tensor_set_flags: set 0x%llx has bits DLPack 1.%u does not define",
                    (unsigned long long)set, (unsigned)v.minor);
    tensor->flags = (tensor->flags | set) & ~clear;
    return ST(OK);
}

/* ------------------------------------------------------------------------------------------ */
/* Tensors this implementation makes                                                           */
/* ------------------------------------------------------------------------------------------ */

/* Every tensor made here is one malloc block: the managed struct first (so its address is the
 * block's), then the fields only this implementation reads, then shape and strides. */

typedef struct {
    DLManagedTensorVersioned t;
    void (*release)(void *);
    void *release_ctx;
    int64_t arrays[1]; /* 2 * ndim */
} created_t;

typedef struct {
    DLManagedTensorVersioned t;
    int64_t arrays[1];
} vwrap_t; /* a versioned wrapper of a legacy tensor */

typedef struct {
    DLManagedTensor t;
    int64_t arrays[1];
} lwrap_t; /* a legacy wrapper of a versioned tensor */

static size_t block_size(size_t head, int32_t ndim)
{
    /* head already holds one int64_t; ndim <= 1024, no overflow */
    return head + (ndim > 0 ? (size_t)(2 * ndim) * sizeof(int64_t) : 0);
}

/* Copies shape and strides (compact row-major when strides is NULL) into arr; sets the
 * tensor's pointers (NULL for ndim == 0). The strides were checked to fit by validation. */
static void fill_arrays(DLTensor *dst, const DLTensor *src, int64_t *arr)
{
    int32_t n = src->ndim;
    if (n == 0) {
        dst->shape = NULL;
        dst->strides = NULL;
        return;
    }
    memcpy(arr, src->shape, (size_t)n * sizeof(int64_t));
    if (src->strides != NULL)
        memcpy(arr + n, src->strides, (size_t)n * sizeof(int64_t));
    else
        (void)compact_strides(n, src->shape, 0, arr + n);
    dst->shape = arr;
    dst->strides = arr + n;
}

static void created_deleter(DLManagedTensorVersioned *self)
{
    created_t *c = (created_t *)self;
    void (*release)(void *) = c->release;
    void *ctx = c->release_ctx;
    free(c);
    if (release != NULL) release(ctx);
}

API dlpack_helpers_status dlpack_tensor_create(void *data, DLDevice device, int32_t ndim, const int64_t *shape,
                                               const int64_t *strides, DLDataType dtype, uint64_t byte_offset,
                                               uint64_t flags, void (*release)(void *), void *release_ctx,
                                               DLManagedTensorVersioned **out_tensor)
{
    const char *fn = "dlpack_tensor_create";
    const uint64_t allow = DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE;
    DLTensor t;
    opts_t o;
    DLPackVersion v13;
    status_t st;
    created_t *c;
    if (out_tensor == NULL || (shape == NULL && ndim > 0)) /* -1 */
        return fail(ST(NULL_POINTER), "%s: %s is NULL", fn, out_tensor == NULL ? "out_tensor" : "shape");
    if ((flags & ~allow) & ~(uint64_t)0x7u) /* -2 */
        return fail(ST(INVALID_FLAGS), "%s: flags 0x%llx has bits outside 0x7 and bit 63", fn, (unsigned long long)flags);
    if (device.device_id < 0) /* -3 */
        return fail(ST(INVALID_DEVICE), "%s: device_id %d is negative", fn, (int)device.device_id);
    if (!(flags & allow) && !device_assigned(device.device_type))
        return fail(ST(INVALID_DEVICE), "%s: device_type %u is not assigned by DLPack 1.3", fn, (unsigned)device.device_type);
    t.data = data;
    t.device = device;
    t.ndim = ndim;
    t.dtype = dtype;
    t.shape = (int64_t *)shape;
    t.strides = (int64_t *)strides;
    t.byte_offset = byte_offset;
    memset(&o, 0, sizeof o);
    o.flags = DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES;
    v13.major = 1;
    v13.minor = 3;
    st = validate_rules(fn, &t, v13, flags & 0x7u, &o, NULL); /* -4 */
    if (st != ST(OK)) return st;
    c = (created_t *)malloc(block_size(sizeof(created_t), ndim));
    if (c == NULL) return fail(ST(OUT_OF_MEMORY), "%s: the tensor could not be allocated", fn);
    c->release = release;
    c->release_ctx = release_ctx;
    c->t.version.major = 1;
    c->t.version.minor = 3;
    c->t.manager_ctx = release_ctx;
    c->t.deleter = created_deleter;
    c->t.flags = flags & 0x7u;
    c->t.dl_tensor = t;
    fill_arrays(&c->t.dl_tensor, &t, c->arrays);
    *out_tensor = &c->t;
    return ST(OK);
}

/* Two deleters with the same body: the first marks a legacy wrapper whose READ_ONLY this
 * implementation assumed (CORE-TENSOR-READ-ONLY-ORIGIN-4), told apart by its address, a
 * member of the struct (-6). */
static void vwrap_release(DLManagedTensorVersioned *self)
{
    DLManagedTensor *legacy = (DLManagedTensor *)self->manager_ctx;
    free(self);
    release_legacy(legacy);
}

static void vwrap_deleter_assumed(DLManagedTensorVersioned *self)
{
    vwrap_release(self);
}

static void vwrap_deleter_stated(DLManagedTensorVersioned *self)
{
    vwrap_release(self);
}

static status_t wrap_legacy(const char *fn, DLManagedTensor *legacy, uint64_t flags, uint32_t options,
                            DLManagedTensorVersioned **out_tensor, int check_options)
{
    opts_t o;
    DLPackVersion v0;
    status_t st;
    vwrap_t *w;
    int writable;
    if (out_tensor == NULL) return fail(ST(NULL_POINTER), "%s: out_tensor is NULL", fn); /* WRAP-1 */
    if (check_options && (options & ~DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE)) /* WRAP-2 */
        return fail(ST(INVALID_ARGUMENT), "%s: options has unknown bits 0x%x", fn,
                    (unsigned)(options & ~DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE));
    if (legacy == NULL) return fail(ST(NULL_POINTER), "%s: legacy is NULL", fn); /* WRAP-3 */
    if (flags & ~(uint64_t)0x7u) /* WRAP-4 */
        return fail(ST(INVALID_FLAGS), "%s: flags 0x%llx has bits outside 0x7", fn, (unsigned long long)flags);
    memset(&o, 0, sizeof o);
    v0.major = 0;
    v0.minor = 0;
    st = validate_rules(fn, &legacy->dl_tensor, v0, 0, &o, NULL); /* WRAP-5 */
    if (st != ST(OK)) return st;
    w = (vwrap_t *)malloc(block_size(sizeof(vwrap_t), legacy->dl_tensor.ndim));
    if (w == NULL) return fail(ST(OUT_OF_MEMORY), "%s: the wrapper could not be allocated", fn);
    writable = (options & DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE) != 0;
    w->t.version.major = 1;
    w->t.version.minor = 3;
    w->t.manager_ctx = legacy;
    w->t.flags = writable ? flags : (flags | DLPACK_FLAG_BITMASK_READ_ONLY);
    w->t.deleter = (!writable && !(flags & DLPACK_FLAG_BITMASK_READ_ONLY)) ? vwrap_deleter_assumed : vwrap_deleter_stated;
    w->t.dl_tensor = legacy->dl_tensor;
    fill_arrays(&w->t.dl_tensor, &legacy->dl_tensor, w->arrays);
    *out_tensor = &w->t;
    return ST(OK);
}

API dlpack_helpers_status dlpack_legacy_tensor_wrap(DLManagedTensor *legacy, uint64_t flags, uint32_t options,
                                                    DLManagedTensorVersioned **out_tensor)
{
    return wrap_legacy("dlpack_legacy_tensor_wrap", legacy, flags, options, out_tensor, 1);
}

API dlpack_helpers_status dlpack_legacy_to_versioned(DLManagedTensor *legacy, uint64_t flags,
                                                     DLManagedTensorVersioned **out_tensor)
{
    return wrap_legacy("dlpack_legacy_to_versioned", legacy, flags, 0, out_tensor, 0);
}

static int is_assumed_legacy_wrapper(const DLManagedTensorVersioned *t)
{
    return t->deleter == vwrap_deleter_assumed;
}

API dlpack_helpers_status dlpack_tensor_read_only_origin(const DLManagedTensorVersioned *tensor,
                                                         dlpack_helpers_read_only_origin *out_origin)
{
    if (tensor == NULL || out_origin == NULL)
        return fail(ST(NULL_POINTER), "dlpack_tensor_read_only_origin: %s is NULL", tensor == NULL ? "tensor" : "out_origin");
    if (tensor->version.major != 1u) return unsupported("dlpack_tensor_read_only_origin", tensor->version);
    if (!(tensor->flags & DLPACK_FLAG_BITMASK_READ_ONLY))
        *out_origin = DLPACK_HELPERS_READ_ONLY_ORIGIN_NONE;
    else if (is_assumed_legacy_wrapper(tensor))
        *out_origin = DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY;
    else
        *out_origin = DLPACK_HELPERS_READ_ONLY_ORIGIN_STATED;
    return ST(OK);
}

static void lwrap_deleter(DLManagedTensor *self)
{
    DLManagedTensorVersioned *inner = (DLManagedTensorVersioned *)self->manager_ctx;
    free(self);
    release_versioned(inner);
}

API dlpack_helpers_status dlpack_versioned_to_legacy(DLManagedTensorVersioned *tensor, uint32_t options,
                                                     uint64_t *out_dropped_flags, DLManagedTensor **out_tensor)
{
    const char *fn = "dlpack_versioned_to_legacy";
    opts_t o;
    status_t st;
    lwrap_t *w;
    uint32_t b;
    if (out_tensor == NULL || tensor == NULL) /* -1 */
        return fail(ST(NULL_POINTER), "%s: %s is NULL", fn, out_tensor == NULL ? "out_tensor" : "tensor");
    if (options & ~DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY) /* -2 */
        return fail(ST(INVALID_ARGUMENT), "%s: options has unknown bits 0x%x", fn,
                    (unsigned)(options & ~DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY));
    if (tensor->version.major != 1u) return unsupported(fn, tensor->version); /* -3 */
    memset(&o, 0, sizeof o);
    o.flags = DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES;
    st = validate_rules(fn, &tensor->dl_tensor, tensor->version, tensor->flags, &o, NULL); /* -4 */
    if (st != ST(OK)) return st;
    if ((tensor->flags & DLPACK_FLAG_BITMASK_READ_ONLY) && !(options & DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY) &&
        !is_assumed_legacy_wrapper(tensor)) /* -5 */
        return fail(ST(READ_ONLY), "%s: the producer stated READ_ONLY, which the legacy struct cannot carry "
                                   "(pass DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY)", fn);
    b = (uint32_t)tensor->dl_tensor.dtype.bits * (uint32_t)tensor->dl_tensor.dtype.lanes;
    if ((tensor->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) && (b % 8u) != 0) /* -6 */
        return fail(ST(INVALID_FLAGS), "%s: a padded sub-byte dtype cannot be carried by the legacy struct", fn);
    w = (lwrap_t *)malloc(block_size(sizeof(lwrap_t), tensor->dl_tensor.ndim));
    if (w == NULL) return fail(ST(OUT_OF_MEMORY), "%s: the wrapper could not be allocated", fn);
    w->t.dl_tensor = tensor->dl_tensor;
    fill_arrays(&w->t.dl_tensor, &tensor->dl_tensor, w->arrays);
    w->t.manager_ctx = tensor;
    w->t.deleter = lwrap_deleter;
    if (out_dropped_flags != NULL) *out_dropped_flags = tensor->flags; /* -8 */
    *out_tensor = &w->t;
    return ST(OK);
}

/* ------------------------------------------------------------------------------------------ */
/* dlpack_tensor_alloc (CORE-TENSOR-ALLOC-1..9)                                                */
/* ------------------------------------------------------------------------------------------ */

static void alloc_deleter(DLManagedTensorVersioned *self) /* -8: one block */
{
    free(self);
}

API dlpack_helpers_status dlpack_tensor_alloc(DLDevice device, int32_t ndim, const int64_t *shape, const int64_t *strides,
                                              DLDataType dtype, uint64_t flags, DLManagedTensorVersioned **out_tensor)
{
    const char *fn = "dlpack_tensor_alloc";
    const size_t align = DLPACK_HELPERS_ALLOC_ALIGNMENT;
    DLTensor t;
    dlpack_helpers_layout L;
    status_t st;
    uint64_t size;
    size_t head, total, off;
    unsigned char *block;
    created_t *c;
    if (out_tensor == NULL || (shape == NULL && ndim > 0)) /* -1 */
        return fail(ST(NULL_POINTER), "%s: %s is NULL", fn, out_tensor == NULL ? "out_tensor" : "shape");
    if (flags & ~(uint64_t)0x7u) /* -2 */
        return fail(ST(INVALID_FLAGS), "%s: flags 0x%llx has bits outside 0x7", fn, (unsigned long long)flags);
    if (device.device_type != 1u || device.device_id != 0) /* -3 */
        return fail(ST(UNSUPPORTED_DEVICE), "%s: only (kDLCPU, 0) is served, not (%u, %d)", fn,
                    (unsigned)device.device_type, (int)device.device_id);
    if (ndim < 0 || ndim > DLPACK_HELPERS_MAX_NDIM) /* -4 */
        return fail(ST(INVALID_NDIM), "%s: ndim %d is outside 0..1024", fn, (int)ndim);
    t.data = &t; /* any non-NULL data: the layout never uses it but for the alignment */
    t.device = device;
    t.ndim = ndim;
    t.dtype = dtype;
    t.shape = (int64_t *)shape;
    t.strides = (int64_t *)strides;
    t.byte_offset = 0;
    st = layout_body(fn, &t, (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0, &L); /* dtype, shape, overflow */
    if (st != ST(OK)) return st;
    size = (L.properties & DLPACK_HELPERS_LAYOUT_EMPTY) ? 0u : (uint64_t)(L.end_byte - L.lowest_byte);
    head = block_size(sizeof(created_t), ndim);
    if (size > (uint64_t)PTRDIFF_MAX || (size_t)size > (size_t)PTRDIFF_MAX - head - align)
        return fail(ST(OVERFLOW), "%s: a buffer of %llu bytes with the tensor's metadata exceeds PTRDIFF_MAX", fn,
                    (unsigned long long)size);
    total = head + align + (size_t)size;
    block = (unsigned char *)calloc(1, total); /* the buffer holds zero (-7) */
    if (block == NULL) return fail(ST(OUT_OF_MEMORY), "%s: %lu bytes could not be allocated", fn, (unsigned long)total);
    off = head + (align - (size_t)(((uintptr_t)block + head) % align)) % align;
    c = (created_t *)block;
    c->release = NULL;
    c->release_ctx = NULL;
    c->t.version.major = 1;
    c->t.version.minor = 3;
    c->t.manager_ctx = NULL;
    c->t.deleter = alloc_deleter;
    c->t.flags = flags;
    c->t.dl_tensor = t;
    c->t.dl_tensor.data = block + off; /* -6 */
    c->t.dl_tensor.byte_offset = size == 0 ? 0u : (uint64_t)(-L.lowest_byte);
    fill_arrays(&c->t.dl_tensor, &t, c->arrays);
    *out_tensor = &c->t;
    return ST(OK);
}

/* ------------------------------------------------------------------------------------------ */
/* Error-object variants (ABI-ERROR-OBJECT-1..6)                                               */
/* ------------------------------------------------------------------------------------------ */

/* -2: a non-NULL err smaller than this specification's struct is refused before anything. */
static int err_too_small(const char *fn, dlpack_helpers_error *err)
{
    if (err == NULL || err->struct_size >= sizeof(dlpack_helpers_error)) return 0;
    fail(ST(INVALID_ARGUMENT), "%s: err->struct_size %lu is below sizeof(dlpack_helpers_error) %lu", fn,
         (unsigned long)err->struct_size, (unsigned long)sizeof(dlpack_helpers_error));
    return 1;
}

/* -4/-5: on failure, the status and this thread's message (just set by the base function). */
static status_t err_fill(status_t st, dlpack_helpers_error *err)
{
    size_t len, cut;
    if (st == ST(OK) || err == NULL) return st;
    len = strlen(g_msg);
    cut = len;
    if (cut >= DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY) {
        cut = DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY - 1;
        while (cut > 0 && (((unsigned char)g_msg[cut]) & 0xC0u) == 0x80u) cut--; /* a UTF-8 boundary */
    }
    err->struct_size = sizeof(dlpack_helpers_error);
    err->status = st;
    err->reserved = 0;
    err->message_length = len;
    memcpy(err->message, g_msg, cut);
    err->message[cut] = '\0';
    return st;
}

#define WITH_ERROR(name, params, args)                                                         \
    API dlpack_helpers_status name##_with_error params                                         \
    {                                                                                          \
        if (err_too_small(#name "_with_error", err)) return ST(INVALID_ARGUMENT);              \
        return err_fill(name args, err);                                                       \
    }

WITH_ERROR(dlpack_tensor_validate,
           (const DLManagedTensorVersioned *tensor, const dlpack_helpers_validate_options *options,
            dlpack_helpers_layout *out_layout, dlpack_helpers_error *err),
           (tensor, options, out_layout))
WITH_ERROR(dlpack_legacy_tensor_validate,
           (const DLManagedTensor *tensor, const dlpack_helpers_validate_options *options,
            dlpack_helpers_layout *out_layout, dlpack_helpers_error *err),
           (tensor, options, out_layout))
WITH_ERROR(dlpack_dltensor_validate,
           (const DLTensor *tensor, DLPackVersion version, uint64_t flags,
            const dlpack_helpers_validate_options *options, dlpack_helpers_layout *out_layout, dlpack_helpers_error *err),
           (tensor, version, flags, options, out_layout))
WITH_ERROR(dlpack_version_check,
           (DLPackVersion version, dlpack_helpers_version_compat *out_compat, dlpack_helpers_error *err),
           (version, out_compat))
WITH_ERROR(dlpack_tensor_check_version,
           (const DLManagedTensorVersioned *tensor, dlpack_helpers_version_compat *out_compat, dlpack_helpers_error *err),
           (tensor, out_compat))
WITH_ERROR(dlpack_tensor_check_version_or_delete,
           (DLManagedTensorVersioned *tensor, dlpack_helpers_version_compat *out_compat, dlpack_helpers_error *err),
           (tensor, out_compat))
WITH_ERROR(dlpack_version_negotiate,
           (DLPackVersion producer_version, uint32_t producer_flags, const DLPackVersion *max_version,
            dlpack_helpers_version_choice *out_choice, dlpack_helpers_error *err),
           (producer_version, producer_flags, max_version, out_choice))
WITH_ERROR(dlpack_dtype_parse, (const char *name, DLDataType *out_dtype, dlpack_helpers_error *err), (name, out_dtype))
WITH_ERROR(dlpack_device_parse, (const char *name, DLDevice *out_device, dlpack_helpers_error *err), (name, out_device))
WITH_ERROR(dlpack_tensor_create,
           (void *data, DLDevice device, int32_t ndim, const int64_t *shape, const int64_t *strides, DLDataType dtype,
            uint64_t byte_offset, uint64_t flags, void (*release)(void *), void *release_ctx,
            DLManagedTensorVersioned **out_tensor, dlpack_helpers_error *err),
           (data, device, ndim, shape, strides, dtype, byte_offset, flags, release, release_ctx, out_tensor))
WITH_ERROR(dlpack_tensor_alloc,
           (DLDevice device, int32_t ndim, const int64_t *shape, const int64_t *strides, DLDataType dtype, uint64_t flags,
            DLManagedTensorVersioned **out_tensor, dlpack_helpers_error *err),
           (device, ndim, shape, strides, dtype, flags, out_tensor))
WITH_ERROR(dlpack_legacy_to_versioned,
           (DLManagedTensor *legacy, uint64_t flags, DLManagedTensorVersioned **out_tensor, dlpack_helpers_error *err),
           (legacy, flags, out_tensor))
WITH_ERROR(dlpack_versioned_to_legacy,
           (DLManagedTensorVersioned *tensor, uint32_t options, uint64_t *out_dropped_flags, DLManagedTensor **out_tensor,
            dlpack_helpers_error *err),
           (tensor, options, out_dropped_flags, out_tensor))
