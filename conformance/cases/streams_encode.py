"""Streams: dlpack_stream_encode, dlpack_stream_encode_decoded and dlpack_stream_decode_handle as
data (the encode tables of their pages), and the round trips between them and dlpack_stream_decode.

Pure functions: the fake runtimes are on the search path and every case checks that none of
them was called (STREAMS-STREAM-ENCODE-8, -ENCODE-DECODED-8, -DECODE-HANDLE-6). Handles are
addresses of PROT_NONE pages where a dereference must not happen.
"""
import ctypes

from harness import build
from harness.registry import case

from cases import _common as C
from cases._streams import BIG, family, no_runtime_calls


def child_env(fixtures):
    return {"LD_LIBRARY_PATH": build.fake_drivers()}


DEVICES = [1, 2, 3, 13, 10, 11, 14, 4, 7, 8, 9, 12, 15, 0, -1, 99]
U64 = (1 << 64) - 1
KINDS = ("NONE", "NO_SYNC", "LEGACY_DEFAULT", "PER_THREAD_DEFAULT", "DEFAULT", "HANDLE",
         "SYCL_QUEUE", "ZE_COMMAND_QUEUE", "ZE_COMMAND_LIST")
QUEUE_KINDS = ("SYCL_QUEUE", "ZE_COMMAND_QUEUE", "ZE_COMMAND_LIST")


def K(ctx, kind):
    return getattr(ctx.K, "DLPACK_HELPERS_STREAM_" + kind)


def encode_expect(fam, h):
    """The encode table of dlpack_stream_encode: (status, None for absent or the integer)."""
    if h > BIG:
        return "INVALID_STREAM", None
    if fam == "CPU":
        return ("OK", None) if h == 0 else ("INVALID_STREAM", None)
    if fam == "CUDA":
        return ("OK", 1) if h == 0 else ("OK", h)
    if fam == "ROCM":
        if h == 0:
            return "OK", 0
        return ("INVALID_STREAM", None) if h in (1, 2) else ("OK", h)
    return ("OK", None) if h == 0 else ("OK", h)


def handles():
    return [0, 1, 2, 3, 4, C.noaccess(), 0x7F0000001000, BIG, BIG + 1, 1 << 63 | 5, U64]


def bptr(has):
    return None if has is None else ctypes.cast(ctypes.pointer(has), ctypes.POINTER(ctypes.c_bool))


def encode(ctx, dev, h, has, out):
    return ctx.f.dlpack_stream_encode(ctx.T.DLDevice(*dev), h or None,
                                      bptr(has),
                                      ctypes.byref(out) if out is not None else None)


@case("streams.stream_encode.table", profile="streams",
      covers=["STREAMS-STREAM-ENCODE-1", "STREAMS-STREAM-ENCODE-2", "STREAMS-STREAM-ENCODE-4",
              "STREAMS-STREAM-ENCODE-7", "STREAMS-STREAM-ENCODE-8"])
def _(ctx):
    with no_runtime_calls(ctx, "dlpack_stream_encode"):
        for dt in DEVICES:
            for did in (0, 3):
                for h in handles():
                    has, out = ctypes.c_uint8(0x5A), ctypes.c_int64(-0x5A5A)
                    st = encode(ctx, (dt, did), h, has, out)
                    want, val = encode_expect(family(dt), h)
                    where = f"device ({dt}, {did}), native stream {h:#x}"
                    ctx.expect(st, want, what=where)
                    if want != "OK":
                        ctx.check(has.value == 0x5A and out.value == -0x5A5A, f"{where}: written on failure")
                    elif val is None:
                        ctx.check(has.value == 0, f"{where}: out_has_stream {has.value}, expected false")
                        ctx.check(out.value == -0x5A5A, f"{where}: out_stream written for an absent result")
                    else:
                        ctx.check(has.value == 1, f"{where}: out_has_stream {has.value}, expected true")
                        ctx.check(out.value == val, f"{where}: {out.value}, expected {val}")
                    if family(dt) == "CUDA" and st == ctx.S.OK:
                        ctx.check(not (has.value == 1 and out.value == 0), f"{where}: CUDA stream encoded as 0")


@case("streams.stream_encode.round_trip", profile="streams", covers=["STREAMS-STREAM-ENCODE-3"])
def _(ctx):
    for dt in DEVICES:
        for h in handles():
            has, out = ctypes.c_bool(), ctypes.c_int64()
            if encode(ctx, (dt, 0), h, has, out) != ctx.S.OK:
                continue
            s = ctx.T.dlpack_helpers_stream()
            st = ctx.f.dlpack_stream_decode(ctx.T.DLDevice(dt, 0), has.value, out.value, 0, ctypes.byref(s))
            where = f"device type {dt}, native stream {h:#x} -> {out.value if has.value else None}"
            ctx.ok(st, what=where)
            fam = family(dt)
            if fam == "CUDA" and h in (0, 1):
                ctx.check(s.kind == K(ctx, "LEGACY_DEFAULT"), f"{where}: kind {s.kind}, expected LEGACY_DEFAULT")
            elif fam == "CUDA" and h == 2:
                ctx.check(s.kind == K(ctx, "PER_THREAD_DEFAULT"), f"{where}: kind {s.kind}")
            elif h == 0:
                ctx.check(s.kind in (K(ctx, "DEFAULT"), K(ctx, "NONE")) and not s.handle,
                          f"{where}: kind {s.kind}, handle {s.handle}")
            else:
                ctx.check(s.kind == K(ctx, "HANDLE") and (s.handle or 0) == h,
                          f"{where}: kind {s.kind}, handle {s.handle}")


@case("streams.stream_encode.null_out", profile="streams", covers=["STREAMS-STREAM-ENCODE-5"])
def _(ctx):
    for dt in (1, 2, 10, 14):
        for h in (0, 5):
            has, out = ctypes.c_uint8(0x5A), ctypes.c_int64(-7)
            ctx.expect(encode(ctx, (dt, 0), h, None, out), "NULL_POINTER", what=f"device {dt}, NULL out_has_stream")
            ctx.check(out.value == -7, "out_stream written on failure")
            ctx.expect(encode(ctx, (dt, 0), h, has, None), "NULL_POINTER", what=f"device {dt}, NULL out_stream")
            ctx.check(has.value == 0x5A, "out_has_stream written on failure")


@case("streams.stream_encode.negative_device_id", profile="streams", covers=["STREAMS-STREAM-ENCODE-6"])
def _(ctx):
    for dt in (1, 2, 10, 14, 99):
        for did in (-1, -(1 << 31)):
            for h in (0, 1, 5, U64):
                has, out = ctypes.c_uint8(0x5A), ctypes.c_int64(-7)
                ctx.expect(encode(ctx, (dt, did), h, has, out), "INVALID_DEVICE", what=f"device ({dt}, {did}) {h:#x}")
                ctx.check(has.value == 0x5A and out.value == -7, "written on failure")
                ctx.expect(encode(ctx, (dt, did), h, None, None), "INVALID_DEVICE", what="NULL outs too")


# ---- dlpack_stream_encode_decoded -------------------------------------------------------------

def encode_decoded_expect(fam, kind, h):
    """The table of dlpack_stream_encode_decoded: (status, None absent / integer)."""
    rows = {
        "CPU": {("NONE", 0): None, ("NO_SYNC", 0): None},
        "CUDA": {("NO_SYNC", 0): -1, ("LEGACY_DEFAULT", 1): 1, ("PER_THREAD_DEFAULT", 2): 2},
        "ROCM": {("NO_SYNC", 0): -1, ("DEFAULT", 0): 0},
        "OTHER": {("NO_SYNC", 0): -1, ("DEFAULT", 0): None},
    }[fam]
    if (kind, h) in rows:
        return "OK", rows[(kind, h)]
    if kind == "HANDLE" and h <= BIG and ((fam in ("CUDA", "ROCM") and h >= 3) or (fam == "OTHER" and h >= 1)):
        return "OK", h
    return "INVALID_STREAM", None


def enc_dec(ctx, dev, sptr, has, out):
    return ctx.f.dlpack_stream_encode_decoded(ctx.T.DLDevice(*dev), sptr,
                                              bptr(has),
                                              ctypes.byref(out) if out is not None else None)


def stream_ro(ctx, kind, h):
    """A read-only dlpack_helpers_stream ending against a guard page."""
    s = ctx.T.dlpack_helpers_stream(kind, h or None)
    addr = C.fenced(C.bytes_of(s))
    return ctypes.cast(addr, ctypes.POINTER(ctx.T.dlpack_helpers_stream)), addr


@case("streams.stream_encode_decoded.table", profile="streams",
      covers=["STREAMS-STREAM-ENCODE-DECODED-1", "STREAMS-STREAM-ENCODE-DECODED-3",
              "STREAMS-STREAM-ENCODE-DECODED-7", "STREAMS-STREAM-ENCODE-DECODED-8"])
def _(ctx):
    with no_runtime_calls(ctx, "dlpack_stream_encode_decoded"):
        for dt in DEVICES:
            for kname in KINDS:
                for h in handles():
                    sp, addr = stream_ro(ctx, K(ctx, kname), h)
                    has, out = ctypes.c_uint8(0x5A), ctypes.c_int64(-0x5A5A)
                    before = ctypes.string_at(addr, ctypes.sizeof(ctx.T.dlpack_helpers_stream))
                    st = enc_dec(ctx, (dt, 1), sp, has, out)
                    want, val = encode_decoded_expect(family(dt), kname, h)
                    where = f"device type {dt}, {{{kname}, {h:#x}}}"
                    ctx.expect(st, want, what=where)
                    ctx.check(ctypes.string_at(addr, len(before)) == before, f"{where}: *stream modified")
                    if want != "OK":
                        ctx.check(has.value == 0x5A and out.value == -0x5A5A, f"{where}: written on failure")
                    elif val is None:
                        ctx.check(has.value == 0 and out.value == -0x5A5A, f"{where}: absent written as {has.value}/{out.value}")
                    else:
                        ctx.check(has.value == 1 and out.value == val, f"{where}: {has.value}/{out.value}, expected {val}")


@case("streams.stream_encode_decoded.round_trip", profile="streams",
      covers=["STREAMS-STREAM-ENCODE-DECODED-2", "STREAMS-STREAM-DECODE-9"])
def _(ctx):
    ints = [-3, -2, -1, 0, 1, 2, 3, 4, 0x7F0000001000, BIG]
    for dt in DEVICES:
        written = set()
        for has_in, v in [(False, 0)] + [(True, x) for x in ints]:
            s = ctx.T.dlpack_helpers_stream()
            if ctx.f.dlpack_stream_decode(ctx.T.DLDevice(dt, 0), has_in, v, 0, ctypes.byref(s)) != ctx.S.OK:
                continue
            written.add((s.kind, s.handle or 0))
            has, out = ctypes.c_bool(), ctypes.c_int64(-99)
            st = enc_dec(ctx, (dt, 0), ctypes.byref(s), has, out)
            where = f"device type {dt}, input {v if has_in else None}"
            ctx.ok(st, what=where)
            fam = family(dt)
            if not has_in:
                want = (True, 1) if fam == "CUDA" else (True, 0) if fam == "ROCM" else (False, None)
            else:
                want = (True, v)
            got = (has.value, out.value if has.value else None)
            ctx.check(got == want, f"{where}: encoded back as {got}, expected {want}")
        # every (kind, handle) decode never writes for the family is refused (the CPU rows aside)
        if family(dt) == "CPU":
            continue
        for kname in KINDS:
            for h in (0, 1, 2, 3, 5):
                pair = (K(ctx, kname), h)
                if pair in written or (kname == "HANDLE" and h >= 3) or (kname == "HANDLE" and family(dt) == "OTHER" and h >= 1):
                    continue
                s = ctx.T.dlpack_helpers_stream(*pair)
                has, out = ctypes.c_bool(), ctypes.c_int64()
                ctx.expect(enc_dec(ctx, (dt, 0), ctypes.byref(s), has, out), "INVALID_STREAM",
                           what=f"device type {dt}, {{{kname}, {h}}} (never decoded)")


@case("streams.stream_encode_decoded.unknown_kind", profile="streams", covers=["STREAMS-STREAM-ENCODE-DECODED-4"])
def _(ctx):
    for dt in (1, 2, 10, 14):
        for kind in (9, 10, 100, -1, 0x7FFFFFFF, -(1 << 31)):
            sp, _ = stream_ro(ctx, kind, 0)
            has, out = ctypes.c_uint8(0x5A), ctypes.c_int64(-7)
            ctx.expect(enc_dec(ctx, (dt, 0), sp, has, out), "INVALID_ARGUMENT", what=f"device {dt}, kind {kind}")
            ctx.check(has.value == 0x5A and out.value == -7, "written on failure")


@case("streams.stream_encode_decoded.null_pointers", profile="streams", covers=["STREAMS-STREAM-ENCODE-DECODED-5"])
def _(ctx):
    for dt in (1, 2, 10, 14):
        sp, _ = stream_ro(ctx, K(ctx, "NO_SYNC"), 0)
        has, out = ctypes.c_uint8(0x5A), ctypes.c_int64(-7)
        ctx.expect(enc_dec(ctx, (dt, 0), None, has, out), "NULL_POINTER", what="NULL stream")
        ctx.expect(enc_dec(ctx, (dt, 0), sp, None, out), "NULL_POINTER", what="NULL out_has_stream")
        ctx.expect(enc_dec(ctx, (dt, 0), sp, has, None), "NULL_POINTER", what="NULL out_stream")
        ctx.check(has.value == 0x5A and out.value == -7, "written on failure")


@case("streams.stream_encode_decoded.negative_device_id", profile="streams",
      covers=["STREAMS-STREAM-ENCODE-DECODED-6"])
def _(ctx):
    for dt in (1, 2, 10, 14):
        for kind, h in (("NO_SYNC", 0), ("HANDLE", 5), ("SYCL_QUEUE", 5)):
            sp, _ = stream_ro(ctx, K(ctx, kind), h)
            has, out = ctypes.c_uint8(0x5A), ctypes.c_int64(-7)
            ctx.expect(enc_dec(ctx, (dt, -1), sp, has, out), "INVALID_DEVICE", what=f"device ({dt}, -1) {kind}")
            ctx.check(has.value == 0x5A and out.value == -7, "written on failure")
        bad, _ = stream_ro(ctx, 77, 0)
        ctx.expect(enc_dec(ctx, (dt, -3), bad, None, None), "INVALID_DEVICE", what="with every other fault")


# ---- dlpack_stream_decode_handle --------------------------------------------------------------

def dec_handle(ctx, dev, kind, h, out):
    return ctx.f.dlpack_stream_decode_handle(ctx.T.DLDevice(*dev), kind, h or None,
                                             ctypes.byref(out) if out is not None else None)


def sentinel_stream(ctx):
    s = ctx.T.dlpack_helpers_stream()
    s.kind, s.handle = 0x5A5A, 0xABCD
    return s


@case("streams.stream_decode_handle.accepts", profile="streams",
      covers=["STREAMS-STREAM-DECODE-HANDLE-1", "STREAMS-STREAM-DECODE-HANDLE-6"])
def _(ctx):
    with no_runtime_calls(ctx, "dlpack_stream_decode_handle"):
        for kname in QUEUE_KINDS:
            for did in (0, 1, 9):
                for h in (C.noaccess(), 1, 0x7F0000001000, U64):
                    out = sentinel_stream(ctx)
                    ctx.ok(dec_handle(ctx, (14, did), K(ctx, kname), h, out), what=f"{kname} {h:#x}")
                    ctx.check(out.kind == K(ctx, kname) and (out.handle or 0) == h,
                              f"{kname} {h:#x}: wrote {{{out.kind}, {out.handle}}}")


@case("streams.stream_decode_handle.refusals", profile="streams",
      covers=["STREAMS-STREAM-DECODE-HANDLE-2", "STREAMS-STREAM-DECODE-HANDLE-3",
              "STREAMS-STREAM-DECODE-HANDLE-4", "STREAMS-STREAM-DECODE-HANDLE-7"])
def _(ctx):
    h = C.noaccess()
    rows = []
    for kname in KINDS[:6]:
        rows.append(((14, 0), K(ctx, kname), h, "INVALID_ARGUMENT", f"integer kind {kname}"))
    for kind in (9, 42, -1):
        rows.append(((14, 0), kind, h, "INVALID_ARGUMENT", f"kind {kind}"))
    for dt in (1, 2, 3, 13, 10, 11, 4, 7, 0, 99):
        for kname in QUEUE_KINDS:
            rows.append(((dt, 0), K(ctx, kname), h, "INVALID_STREAM_TYPE", f"{kname} on device type {dt}"))
    for kname in QUEUE_KINDS:
        rows.append(((14, 0), K(ctx, kname), 0, "NULL_POINTER", f"{kname} with a NULL handle"))
    for dev, kind, hh, want, what in rows:
        out = sentinel_stream(ctx)
        ctx.expect(dec_handle(ctx, dev, kind, hh, out), want, what=what)
        ctx.check(out.kind == 0x5A5A and out.handle == 0xABCD, f"{what}: out_stream written on failure")
    for kname in QUEUE_KINDS:
        ctx.expect(dec_handle(ctx, (14, 0), K(ctx, kname), h, None), "NULL_POINTER", what="NULL out_stream")


@case("streams.stream_decode_handle.negative_device_id", profile="streams",
      covers=["STREAMS-STREAM-DECODE-HANDLE-5", "STREAMS-STREAM-DECODE-HANDLE-7"])
def _(ctx):
    for dt in (14, 2, 1):
        for kind in (K(ctx, "SYCL_QUEUE"), K(ctx, "HANDLE"), 42):
            for h in (0, 5):
                out = sentinel_stream(ctx)
                ctx.expect(dec_handle(ctx, (dt, -1), kind, h, out), "INVALID_DEVICE", what=f"({dt}, -1) kind {kind}")
                ctx.check(out.kind == 0x5A5A and out.handle == 0xABCD, "out_stream written on failure")
                ctx.expect(dec_handle(ctx, (dt, -(1 << 31)), kind, h, None), "INVALID_DEVICE", what="NULL out too")


@case("streams.stream_decode.pointer_width", profile="streams", covers=["STREAMS-STREAM-DECODE-3"])
def _(ctx):
    # Every HANDLE row's v that does not fit a pointer is refused, never truncated; on a 64-bit
    # platform every v up to INT64_MAX fits and must come back whole (no truncation to 32 bits).
    width = ctypes.sizeof(ctypes.c_void_p) * 8
    for dt in (2, 10, 14, 3, 11, 13):
        for v in (3, (1 << 31) + 5, (1 << 32) + 7, (1 << 40) | 0x123, BIG):
            s = sentinel_stream(ctx)
            st = ctx.f.dlpack_stream_decode(ctx.T.DLDevice(dt, 0), True, v, 0, ctypes.byref(s))
            if v >= (1 << width):
                ctx.expect(st, "INVALID_STREAM", what=f"device {dt}, v {v:#x} on a {width}-bit platform")
            else:
                ctx.ok(st, what=f"device {dt}, v {v:#x}")
                ctx.check((s.handle or 0) == v, f"device {dt}: v {v:#x} decoded as {(s.handle or 0):#x}")
