"""Core: names (dlpack_status_string, dlpack_dtype_format, dlpack_dtype_parse,
dlpack_device_format, dlpack_device_parse).

The names are data: the dtype and device tables of the pages are written once below, every valid
value is formatted into buffers that end against a guard page, parsed back from strings whose NUL
is the last readable byte, and every invalid value and malformed string is refused with nothing
written.
"""
import ctypes

from harness.registry import case

from cases._common import PAGE, cstring, expect_fail, in_library, out_slot, pages, protect, unchanged_message

# -- the tables of spec/functions/dlpack_dtype_format.md ------------------------------------------
POW = (1, 2, 4, 8, 16, 32, 64, 128)
DTYPES = {0: ("int", POW), 1: ("uint", POW), 2: ("float", (16, 32, 64, 128)),
          3: ("handle", tuple(range(8, 249, 8))), 4: ("bfloat16", (16,)), 5: ("complex", (32, 64, 128)),
          6: ("bool", (8,)), 7: ("float8_e3m4", (8,)), 8: ("float8_e4m3", (8,)),
          9: ("float8_e4m3b11fnuz", (8,)), 10: ("float8_e4m3fn", (8,)), 11: ("float8_e4m3fnuz", (8,)),
          12: ("float8_e5m2", (8,)), 13: ("float8_e5m2fnuz", (8,)), 14: ("float8_e8m0fnu", (8,)),
          15: ("float6_e2m3fn", (6,)), 16: ("float6_e3m2fn", (6,)), 17: ("float4_e2m1fn", (4,))}
FAMILIES = {0, 1, 2, 3, 5}  # names carry <bits>
LANES = (1, 2, 3, 4, 8, 16, 100, 255, 256, 65535)


def dtype_name(code, bits, lanes):
    base, allowed = DTYPES.get(code, (None, ()))
    if base is None or bits not in allowed or lanes < 1:
        return None
    name = f"{base}{bits}" if code in FAMILIES else base
    return name if lanes == 1 else f"{name}x{lanes}"


VALID_DTYPES = [(c, b, l) for c, (_, bits) in DTYPES.items() for b in bits for l in LANES]

# -- the table of spec/functions/dlpack_device_format.md ------------------------------------------
DEVICES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi",
           10: "rocm", 11: "rocm_host", 12: "ext_dev", 13: "cuda_managed", 14: "oneapi", 15: "webgpu",
           16: "hexagon", 17: "maia", 18: "trn"}
IDS = (0, 1, 9, 10, 99, 12345, (1 << 31) - 1)
UNNAMED = (0, 5, 6, 19, 20, 21, 99, 255, 1 << 16, -1, -2, -(1 << 31), (1 << 31) - 1)


def fmt_buffer(size):
    """A buffer of `size` bytes ending against a guard page, filled with 0xAB."""
    p = pages(2)
    protect(p + PAGE, PAGE, 0)
    addr = p + PAGE - size
    if size:
        ctypes.memset(addr, 0xAB, size)
    return addr


def _format(ctx, fn, value, size, out_len=True):
    buf = fmt_buffer(size)
    ln, lptr, lraw = out_slot(ctypes.c_size_t)
    st = fn(value, ctypes.cast(buf, ctypes.c_char_p), size, lptr if out_len else None)
    return st, buf, ln, lraw


def _check_formats(ctx, fn, value, name, what):
    n = len(name)
    # Exactly n + 1 bytes: written in full, the NUL last (a write past it faults).
    st, buf, ln, _ = _format(ctx, fn, value, n + 1)
    ctx.expect(st, "OK", what=what)
    got = ctypes.string_at(buf, n + 1)
    ctx.check(got == name.encode() + b"\0", f"{what}: wrote {got!r}, expected {name!r}")
    ctx.check(ln.value == n, f"{what}: out_len {ln.value}, expected {n}")
    # A larger buffer: nothing written after the NUL; out_len NULL accepted.
    st, buf, ln, lraw = _format(ctx, fn, value, 64, out_len=False)
    ctx.expect(st, "OK", what=what + " (64 bytes, NULL out_len)")
    got = ctypes.string_at(buf, 64)
    ctx.check(got[:n + 1] == name.encode() + b"\0" and got[n + 1:] == b"\xab" * (63 - n),
              f"{what}: a 64-byte buffer holds {got!r}")
    # Too small, 0 included: BUFFER_TOO_SMALL, nothing written to buf, the length to out_len.
    for size in sorted({0, 1, n // 2, n}):
        st, buf, ln, _ = _format(ctx, fn, value, size)
        ctx.expect(st, "BUFFER_TOO_SMALL", what=f"{what} in {size} bytes")
        ctx.check(ctypes.string_at(buf, size) == b"\xab" * size, f"{what}: buf written in {size} bytes")
        ctx.check(ln.value == n, f"{what} in {size} bytes: out_len {ln.value}, expected {n}")
    st, buf, ln, _ = _format(ctx, fn, value, n, out_len=False)
    ctx.expect(st, "BUFFER_TOO_SMALL", what=f"{what} in {n} bytes, NULL out_len")


def _check_refused(ctx, fn, value, status, what):
    for size in (0, 1, 32, 64):
        prime_needed = size == 32
        buf = fmt_buffer(size)
        ln, lptr, lraw = out_slot(ctypes.c_size_t)
        before = lraw()
        call = lambda: fn(value, ctypes.cast(buf, ctypes.c_char_p), size, lptr)  # noqa: E731
        if prime_needed:
            expect_fail(ctx, call, status, what=what)
        else:
            ctx.expect(call(), status, what=f"{what} ({size} bytes)")
        ctx.check(ctypes.string_at(buf, size) == b"\xab" * size, f"{what}: buf written on failure")
        ctx.check(lraw() == before, f"{what}: out_len written on {status}")
    # A buf_size far larger than the real buffer: a write would fault.
    buf = fmt_buffer(4)
    ctx.expect(fn(value, ctypes.cast(buf, ctypes.c_char_p), (1 << 64) - 1, None), status, what=f"{what} (huge buf_size)")


def _parse(ctx, fn, s, out_type):
    p = cstring(s)
    out, ptr, raw = out_slot(out_type)
    before = raw()
    st = fn(ctypes.cast(p, ctypes.c_char_p), ptr)
    return st, out, raw() == before


# -- dlpack_status_string -------------------------------------------------------------------------
PAGE_STATUS = {0: "OK", 1: "NULL_POINTER", 2: "INVALID_ARGUMENT", 3: "PANIC", 10: "UNSUPPORTED_VERSION",
               11: "NO_COMMON_VERSION", 12: "KEYWORD_NOT_UNDERSTOOD", 20: "INVALID_NDIM", 21: "NULL_SHAPE",
               22: "NULL_STRIDES", 23: "INVALID_SHAPE", 24: "OVERFLOW", 25: "NULL_DATA", 26: "INVALID_DTYPE",
               27: "DTYPE_MISMATCH", 28: "INVALID_FLAGS", 29: "NOT_CONTIGUOUS", 30: "NOT_CPU_ACCESSIBLE",
               31: "MISALIGNED", 32: "READ_ONLY", 33: "OPAQUE_HANDLE", 34: "BUFFER_TOO_SMALL",
               35: "UNKNOWN_NAME", 36: "UNSUPPORTED_STRIDES", 37: "OUT_OF_MEMORY", 38: "COPIED_REJECTED",
               40: "INVALID_STREAM", 41: "COPY_FORBIDDEN", 42: "UNSUPPORTED_DEVICE", 43: "BACKEND_UNAVAILABLE",
               44: "DEVICE_ERROR", 45: "DEVICE_UNKNOWN", 46: "INVALID_STREAM_TYPE", 47: "NULL_WORK_STREAM",
               48: "INVALID_DEVICE", 49: "DEVICE_ID_UNKNOWN", 60: "PYTHON_UNAVAILABLE", 61: "NOT_A_CAPSULE",
               62: "CAPSULE_NAME", 63: "CAPSULE_CONSUMED", 64: "NO_DLPACK_METHOD", 65: "PRODUCER_BUFFER_ERROR",
               66: "PRODUCER_TYPE_ERROR", 67: "PRODUCER_ERROR", 68: "BAD_PRODUCER_RESULT",
               69: "EXCHANGE_API_INVALID", 70: "NO_EXCHANGE_API", 71: "PYTHON_ERROR_SET"}


def _status_string(ctx, code):
    f = ctx.f.dlpack_status_string
    f.restype = ctypes.c_void_p
    return f(code)


@case("core.status_string.names", profile="core",
      covers=["CORE-STATUS-STRING-1", "CORE-STATUS-STRING-3", "ABI-STATUS-4"])
def _(ctx):
    manifest = {v: k[len("DLPACK_HELPERS_STATUS_"):] for k, v in ctx.m.constants.items()
                if k.startswith("DLPACK_HELPERS_STATUS_")}
    ctx.check(manifest == PAGE_STATUS, "suite bug: the manifest's status list differs from the page's")
    ctx.check(len(PAGE_STATUS) == 48, "suite bug: 48 status codes expected")
    first = {}
    for code, name in PAGE_STATUS.items():
        p = _status_string(ctx, code)
        ctx.check(p, f"dlpack_status_string({code}) returned NULL")
        got = ctypes.string_at(p)
        ctx.check(got == name.encode(), f"dlpack_status_string({code}) is {got!r}, expected {name!r}")
        ctx.check(in_library(ctx, p), f"dlpack_status_string({code}) does not point into the library's static data")
        first[code] = p
    # Valid for as long as the library is loaded: the same text at the same place after more calls
    # (failing ones included).
    for code in PAGE_STATUS:
        ctx.f.dlpack_device_check(ctx.T.DLDevice(0, -1), 0)
        _status_string(ctx, (code + 1) * 7)
    for code, p in first.items():
        ctx.check(ctypes.string_at(p) == PAGE_STATUS[code].encode(), f"the text of {code} changed")


@case("core.status_string.unknown", profile="core", covers=["CORE-STATUS-STRING-2", "CORE-STATUS-STRING-3"])
def _(ctx):
    others = [c for c in range(-20, 300) if c not in PAGE_STATUS] + [-(1 << 31), (1 << 31) - 1, 1 << 20, -(1 << 20)]
    for code in others:
        p = _status_string(ctx, code)
        ctx.check(p, f"dlpack_status_string({code}) returned NULL")
        got = ctypes.string_at(p)
        ctx.check(got == b"UNKNOWN_STATUS", f"dlpack_status_string({code}) is {got!r}, not UNKNOWN_STATUS")
        ctx.check(in_library(ctx, p), f"dlpack_status_string({code}) does not point into the library's static data")


@case("core.status_string.keeps_last_error", profile="core", covers=["CORE-STATUS-STRING-4"])
def _(ctx):
    with unchanged_message(ctx, "dlpack_status_string"):
        for code in list(PAGE_STATUS) + [-1, 5, 1000]:
            _status_string(ctx, code)


# -- dlpack_dtype_format --------------------------------------------------------------------------
@case("core.dtype_format.valid", profile="core",
      covers=["CORE-DTYPE-FORMAT-3", "CORE-DTYPE-FORMAT-4", "CORE-DTYPE-FORMAT-5", "ABI-OUT-1", "ABI-OUT-2"])
def _(ctx):
    fn = ctx.f.dlpack_dtype_format
    for code, bits, lanes in VALID_DTYPES:
        name = dtype_name(code, bits, lanes)
        _check_formats(ctx, fn, ctx.T.DLDataType(code, bits, lanes), name, f"dtype ({code}, {bits}, {lanes})")


@case("core.dtype_format.invalid", profile="core", covers=["CORE-DTYPE-FORMAT-2", "ABI-OUT-1"])
def _(ctx):
    fn = ctx.f.dlpack_dtype_format
    D = ctx.T.DLDataType
    rows = 0
    for code in range(256):
        for bits in range(256):
            if dtype_name(code, bits, 1) is not None:
                continue
            # Every invalid (code, bits) with one lane; the full check on a sample.
            buf = fmt_buffer(32)
            ln = ctypes.c_size_t(0xDEAD)
            st = fn(D(code, bits, 1), ctypes.cast(buf, ctypes.c_char_p), 32, ctypes.byref(ln))
            ctx.expect(st, "INVALID_DTYPE", what=f"dtype ({code}, {bits}, 1)")
            ctx.check(ln.value == 0xDEAD and ctypes.string_at(buf, 32) == b"\xab" * 32,
                      f"dtype ({code}, {bits}, 1): written on failure")
            rows += 1
    for code, bits, lanes in ((2, 32, 0), (6, 8, 0), (0, 8, 0), (2, 33, 1), (18, 8, 1), (255, 8, 4), (4, 8, 1),
                              (3, 0, 1), (3, 256 % 256, 2), (15, 8, 1)):
        _check_refused(ctx, fn, D(code, bits, lanes), "INVALID_DTYPE", f"dtype ({code}, {bits}, {lanes})")


@case("core.dtype_format.null_buf", profile="core", covers=["CORE-DTYPE-FORMAT-1", "ABI-NULL-1", "ABI-STATUS-3"])
def _(ctx):
    fn = ctx.f.dlpack_dtype_format
    for dtype in ((2, 32, 1), (2, 33, 0), (200, 0, 0)):
        for size in (0, 32, (1 << 64) - 1):
            ln, lptr, lraw = out_slot(ctypes.c_size_t)
            before = lraw()
            expect_fail(ctx, lambda: fn(ctx.T.DLDataType(*dtype), None, size, lptr), "NULL_POINTER",
                        what=f"NULL buf, dtype {dtype}, buf_size {size}")
            ctx.check(lraw() == before, "out_len written on NULL_POINTER")


@case("core.dtype_format.parses_back", profile="core", covers=["CORE-DTYPE-FORMAT-6", "CORE-DTYPE-PARSE-6"])
def _(ctx):
    for code, bits, lanes in VALID_DTYPES:
        buf = ctypes.create_string_buffer(32)
        ctx.ok(ctx.f.dlpack_dtype_format(ctx.T.DLDataType(code, bits, lanes), buf, 32, None))
        st, out, _ = _parse(ctx, ctx.f.dlpack_dtype_parse, buf.value, ctx.T.DLDataType)
        ctx.expect(st, "OK", what=f"parsing {buf.value!r}")
        got = (out.code, out.bits, out.lanes)
        ctx.check(got == (code, bits, lanes), f"{buf.value!r} parses to {got}, not {(code, bits, lanes)}")
        buf2 = ctypes.create_string_buffer(32)
        ctx.ok(ctx.f.dlpack_dtype_format(out, buf2, 32, None))
        ctx.check(buf2.value == buf.value, f"{buf.value!r} formats back as {buf2.value!r}")


# -- dlpack_dtype_parse ---------------------------------------------------------------------------
BAD_DTYPE_NAMES = [
    b"", b"Float32", b"FLOAT32", b" float32", b"float32 ", b"float32\n", b"\tint8", b"int08", b"float32x02",
    b"float32x1", b"float32x0", b"float32x65536", b"float32x100000", b"float32x4294967297", b"float", b"float32x",
    b"int", b"uint", b"handle", b"complex", b"bfloat32", b"bfloat16x1", b"float8", b"int7", b"bool1", b"bool8",
    b"handle0", b"handle256", b"handle7", b"float8_e4m3x0", b"boolx1", b"int3", b"uint0", b"int256",
    b"float16x-2", b"float16x+2", b"float+16", b"int-8", b"float32\xff", b"\xc3\x28", b"float32x4x2",
    b"complex16", b"complex256", b"float8_E4M3", b"float8_e4m3fnx", b"x4", b"uint8x65535x", b"int 8",
    b"float_32", b"float32_", b"f32", b"i32", b"uint8 ", b"\xef\xbb\xbfint8", b"int8\x01", b"float6_e2m3fn8",
    b"float4_e2m1fn4", b"float6", b"float4",
]


@case("core.dtype_parse.valid", profile="core", covers=["CORE-DTYPE-PARSE-2", "CORE-DTYPE-PARSE-5", "ABI-OUT-2"])
def _(ctx):
    fn = ctx.f.dlpack_dtype_parse
    for code, bits, lanes in VALID_DTYPES:
        name = dtype_name(code, bits, lanes).encode()
        st, out, _ = _parse(ctx, fn, name, ctx.T.DLDataType)  # NUL last readable, read-only
        ctx.expect(st, "OK", what=f"parsing {name!r}")
        got = (out.code, out.bits, out.lanes)
        ctx.check(got == (code, bits, lanes), f"{name!r} parsed to {got}, expected {(code, bits, lanes)}")
    # Bytes after the NUL are not part of the name (and lie behind a read-only page here).
    st, d, _ = _parse(ctx, fn, b"int8\0x4", ctx.T.DLDataType)
    ctx.expect(st, "OK", what="b'int8\\0x4'")
    ctx.check((d.code, d.bits, d.lanes) == (0, 8, 1), "b'int8\\0x4' is not int8")


@case("core.dtype_parse.refused", profile="core",
      covers=["CORE-DTYPE-PARSE-3", "CORE-DTYPE-PARSE-4", "CORE-DTYPE-PARSE-5", "ABI-OUT-1"])
def _(ctx):
    fn = ctx.f.dlpack_dtype_parse
    for i, s in enumerate(BAD_DTYPE_NAMES):
        if i % 5 == 0:
            p = cstring(s)
            out, ptr, raw = out_slot(ctx.T.DLDataType)
            before = raw()
            expect_fail(ctx, lambda: fn(ctypes.cast(p, ctypes.c_char_p), ptr), "UNKNOWN_NAME", what=f"{s!r}")
            ok = raw() == before
        else:
            st, _, ok = _parse(ctx, fn, s, ctx.T.DLDataType)
            ctx.expect(st, "UNKNOWN_NAME", what=f"parsing {s!r}")
        ctx.check(ok, f"{s!r}: out_dtype written on failure")


@case("core.dtype_parse.null", profile="core", covers=["CORE-DTYPE-PARSE-1", "ABI-NULL-1"])
def _(ctx):
    fn = ctx.f.dlpack_dtype_parse
    out, ptr, raw = out_slot(ctx.T.DLDataType)
    before = raw()
    expect_fail(ctx, lambda: fn(None, ptr), "NULL_POINTER", what="NULL name")
    ctx.check(raw() == before, "out_dtype written on failure")
    for s in (b"float32", b"nonsense"):
        expect_fail(ctx, lambda: fn(ctypes.cast(cstring(s), ctypes.c_char_p), None), "NULL_POINTER",
                    what=f"NULL out_dtype, name {s!r}")


# -- dlpack_device_format -------------------------------------------------------------------------
@case("core.device_format.valid", profile="core",
      covers=["CORE-DEVICE-FORMAT-4", "CORE-DEVICE-FORMAT-5", "ABI-OUT-1", "ABI-OUT-2"])
def _(ctx):
    fn = ctx.f.dlpack_device_format
    for t, name in DEVICES.items():
        for i in IDS:
            _check_formats(ctx, fn, ctx.T.DLDevice(t, i), f"{name}:{i}", f"device ({t}, {i})")


@case("core.device_format.refused", profile="core",
      covers=["CORE-DEVICE-FORMAT-2", "CORE-DEVICE-FORMAT-3", "ABI-OUT-1", "ABI-STATUS-3", "VER-UNKNOWN-3"])
def _(ctx):
    fn = ctx.f.dlpack_device_format
    for t in UNNAMED:
        _check_refused(ctx, fn, ctx.T.DLDevice(t, 0), "UNKNOWN_NAME", f"device ({t}, 0)")
        for i in (-1, -(1 << 31)):
            _check_refused(ctx, fn, ctx.T.DLDevice(t, i), "INVALID_DEVICE", f"device ({t}, {i})")
    for t in DEVICES:
        for i in (-1, -5, -(1 << 31)):
            _check_refused(ctx, fn, ctx.T.DLDevice(t, i), "INVALID_DEVICE", f"device ({t}, {i})")


@case("core.device_format.null_buf", profile="core", covers=["CORE-DEVICE-FORMAT-1", "ABI-NULL-1", "ABI-STATUS-3"])
def _(ctx):
    fn = ctx.f.dlpack_device_format
    for dev in ((1, 0), (1, -1), (99, 0), (99, -1)):
        for size in (0, 32, (1 << 64) - 1):
            ln, lptr, lraw = out_slot(ctypes.c_size_t)
            before = lraw()
            expect_fail(ctx, lambda: fn(ctx.T.DLDevice(*dev), None, size, lptr), "NULL_POINTER",
                        what=f"NULL buf, device {dev}, buf_size {size}")
            ctx.check(lraw() == before, "out_len written on NULL_POINTER")


@case("core.device_format.parses_back", profile="core", covers=["CORE-DEVICE-FORMAT-6", "CORE-DEVICE-PARSE-6"])
def _(ctx):
    for t in DEVICES:
        for i in IDS:
            buf = ctypes.create_string_buffer(32)
            ctx.ok(ctx.f.dlpack_device_format(ctx.T.DLDevice(t, i), buf, 32, None))
            st, out, _ = _parse(ctx, ctx.f.dlpack_device_parse, buf.value, ctx.T.DLDevice)
            ctx.expect(st, "OK", what=f"parsing {buf.value!r}")
            ctx.check((out.device_type, out.device_id) == (t, i), f"{buf.value!r} parses to "
                      f"({out.device_type}, {out.device_id})")
            ctx.check(out.device_id >= 0, "a negative device_id was written")
            buf2 = ctypes.create_string_buffer(32)
            ctx.ok(ctx.f.dlpack_device_format(out, buf2, 32, None))
            ctx.check(buf2.value == buf.value, f"{buf.value!r} formats back as {buf2.value!r}")


# -- dlpack_device_parse --------------------------------------------------------------------------
BAD_DEVICE_NAMES = [
    b"", b"CPU", b"Cuda", b"gpu", b"tpu", b"tpu_host", b":0", b"cuda:", b"cuda:+1", b"cuda:-1", b"cuda:01",
    b"cuda:00", b"cuda:2147483648", b"cuda:4294967296", b"cuda:99999999999999999999", b"cuda:1:2", b"cuda::1",
    b" cuda", b"cuda ", b"cuda: 1", b"cuda :1", b"cu da", b"cuda:1 ", b"\tcpu", b"cpu\n", b"cpu:\xff", b"\xc3\x28",
    b"cuda:0x1", b"cuda:1e3", b"cuda:\xd9\xa1", b"cpu0", b"cpu-0", b"cpu;0", b"rocmhost", b"ext-dev", b"opencl:",
    b"cuda_host:-0", b"cuda:-0", b":", b"::", b"cpu:0:", b"cudamanaged:1",
]


@case("core.device_parse.valid", profile="core", covers=["CORE-DEVICE-PARSE-2", "CORE-DEVICE-PARSE-5",
                                                         "CORE-DEVICE-PARSE-6"])
def _(ctx):
    fn = ctx.f.dlpack_device_parse
    for t, name in DEVICES.items():
        rows = [(name.encode(), 0)] + [(f"{name}:{i}".encode(), i) for i in IDS]
        for s, i in rows:
            st, out, _ = _parse(ctx, fn, s, ctx.T.DLDevice)  # NUL last readable, read-only
            ctx.expect(st, "OK", what=f"parsing {s!r}")
            ctx.check((out.device_type, out.device_id) == (t, i),
                      f"{s!r} parsed to ({out.device_type}, {out.device_id}), expected ({t}, {i})")


@case("core.device_parse.refused", profile="core",
      covers=["CORE-DEVICE-PARSE-3", "CORE-DEVICE-PARSE-4", "CORE-DEVICE-PARSE-5", "ABI-OUT-1"])
def _(ctx):
    fn = ctx.f.dlpack_device_parse
    for i, s in enumerate(BAD_DEVICE_NAMES):
        if i % 5 == 0:
            p = cstring(s)
            out, ptr, raw = out_slot(ctx.T.DLDevice)
            before = raw()
            expect_fail(ctx, lambda: fn(ctypes.cast(p, ctypes.c_char_p), ptr), "UNKNOWN_NAME", what=f"{s!r}")
            ok = raw() == before
        else:
            st, _, ok = _parse(ctx, fn, s, ctx.T.DLDevice)
            ctx.expect(st, "UNKNOWN_NAME", what=f"parsing {s!r}")
        ctx.check(ok, f"{s!r}: out_device written on failure")
    st, out, _ = _parse(ctx, fn, b"cuda:1\0:2", ctx.T.DLDevice)
    ctx.expect(st, "OK", what="b'cuda:1\\0:2'")


@case("core.device_parse.null", profile="core", covers=["CORE-DEVICE-PARSE-1", "ABI-NULL-1"])
def _(ctx):
    fn = ctx.f.dlpack_device_parse
    out, ptr, raw = out_slot(ctx.T.DLDevice)
    before = raw()
    expect_fail(ctx, lambda: fn(None, ptr), "NULL_POINTER", what="NULL name")
    ctx.check(raw() == before, "out_device written on failure")
    for s in (b"cpu", b"nonsense"):
        expect_fail(ctx, lambda: fn(ctypes.cast(cstring(s), ctypes.c_char_p), None), "NULL_POINTER",
                    what=f"NULL out_device, name {s!r}")
