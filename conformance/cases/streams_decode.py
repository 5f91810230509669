"""Streams: dlpack_stream_decode as data (the decode table of spec/functions/dlpack_stream_decode.md).

Each row: (device family, has_stream, value, lenient flag, expected status, kind, handle). One
case per row, each citing STREAMS-STREAM-DECODE-1; device ids and the ignored `stream` of an
absent argument vary per row (STREAMS-STREAM-DECODE-2).
"""
import ctypes

from harness import build
from harness.registry import case


def child_env(fixtures):
    # No runtime may be loaded (STREAMS-STREAM-DECODE-7): fake runtimes on the search path
    # count any call, and the case checks that none was made.
    return {"LD_LIBRARY_PATH": build.fake_drivers()}


FAMILIES = {"CPU": [1], "CUDA": [2, 3, 13], "ROCM": [10, 11],
            "OTHER": [14, 4, 7, 8, 9, 12, 15, 16, 17, 18, 0, 5, 6, 19, 99, -1, 0x7FFFFFFF]}
BIG = (1 << 63) - 1
# family, input ("absent" or an int), lenient, status, kind, handle (None: as v)
TABLE = [
    ("CPU", "absent", False, "OK", "NONE", 0),
    *[("CPU", v, False, "INVALID_STREAM", None, None) for v in (-2, -1, 0, 1, 2, 3, BIG)],
    ("CPU", "absent", True, "OK", "NONE", 0),
    *[("CPU", v, True, "OK", "NO_SYNC", 0) for v in (-2, -1, 0, 1, 2, 3, BIG)],
    ("CUDA", "absent", False, "OK", "LEGACY_DEFAULT", 1),
    ("CUDA", -1, False, "OK", "NO_SYNC", 0),
    *[("CUDA", v, False, "INVALID_STREAM", None, None) for v in (-2, -3, -(1 << 63))],
    ("CUDA", 0, False, "INVALID_STREAM", None, None),
    ("CUDA", 1, False, "OK", "LEGACY_DEFAULT", 1),
    ("CUDA", 2, False, "OK", "PER_THREAD_DEFAULT", 2),
    *[("CUDA", v, False, "OK", "HANDLE", None) for v in (3, 4, 0x7F0000001000, BIG)],
    ("ROCM", "absent", False, "OK", "DEFAULT", 0),
    ("ROCM", -1, False, "OK", "NO_SYNC", 0),
    *[("ROCM", v, False, "INVALID_STREAM", None, None) for v in (-2, -(1 << 63))],
    ("ROCM", 0, False, "OK", "DEFAULT", 0),
    ("ROCM", 1, False, "INVALID_STREAM", None, None),
    ("ROCM", 2, False, "INVALID_STREAM", None, None),
    *[("ROCM", v, False, "OK", "HANDLE", None) for v in (3, 0x7F0000001000, BIG)],
    ("OTHER", "absent", False, "OK", "DEFAULT", 0),
    ("OTHER", -1, False, "OK", "NO_SYNC", 0),
    *[("OTHER", v, False, "INVALID_STREAM", None, None) for v in (-2, -(1 << 63))],
    ("OTHER", 0, False, "INVALID_STREAM", None, None),
    *[("OTHER", v, False, "OK", "HANDLE", None) for v in (1, 2, 3, BIG)],
]
# The lenient flag changes only the CPU rows: the other families' rows hold with it too.
TABLE += [(fam, v, True, st, k, h) for fam, v, lenient, st, k, h in TABLE
          if fam != "CPU" and not lenient]


def decode(ctx, device, has, value, flags, out):
    return ctx.f.dlpack_stream_decode(ctx.T.DLDevice(*device), has, value, flags,
                                      ctypes.byref(out) if out is not None else None)


def row_case(family, value, lenient, status, kind, handle):
    def run(ctx):
        flags = ctx.K.DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM if lenient else 0
        fake = ctypes.CDLL("libcuda.so.1")
        fake.fake_reset_counts()
        for dtype in FAMILIES[family]:
            for dev_id in (0, 1, 7):
                ignored = (0, 1, -5, BIG) if value == "absent" else (None,)
                for junk in ignored:
                    out = ctx.T.dlpack_helpers_stream()
                    out.kind, out.handle = 0x5A5A, 0xABCD  # sentinel: must survive a failure
                    has = value != "absent"
                    v = value if has else junk
                    st = decode(ctx, (dtype, dev_id), has, v, flags, out)
                    where = f"device ({dtype}, {dev_id}), stream {'absent' if not has else v}"
                    ctx.expect(st, status, what=where)
                    if status == "OK":
                        want_kind = getattr(ctx.K, "DLPACK_HELPERS_STREAM_" + kind)
                        want_handle = value if handle is None else handle
                        ctx.check(out.kind == want_kind,
                                  f"{where}: kind {out.kind}, expected {kind} ({want_kind})")
                        ctx.check((out.handle or 0) == want_handle,
                                  f"{where}: handle {(out.handle or 0):#x}, expected {want_handle:#x}")
                    else:
                        ctx.check(out.kind == 0x5A5A and out.handle == 0xABCD,
                                  f"{where}: out_stream written on failure")
        for fn in (b"cuInit", b"cuStreamSynchronize", b"cuEventCreate"):
            ctx.check(fake.fake_count(fn) == 0, f"the decode called the CUDA driver ({fn.decode()})")
    return run


for i, (fam, v, lenient, st, kind, handle) in enumerate(TABLE):
    tag = f"{fam.lower()}{'_lenient' if lenient else ''}.{'absent' if v == 'absent' else ('m' + str(-v) if v < 0 else v)}"
    covers = ["STREAMS-STREAM-DECODE-1", "STREAMS-STREAM-DECODE-2"]
    if st != "OK":
        covers.append("STREAMS-STREAM-DECODE-8")
    if fam == "CUDA":
        covers.append("STREAMS-STREAM-DECODE-7")
    case(f"streams.stream_decode.{tag}", profile="streams", covers=covers)(
        row_case(fam, v, lenient, st, kind, handle))


@case("streams.stream_decode.unknown_flags", profile="streams", covers=["STREAMS-STREAM-DECODE-4"])
def _(ctx):
    known = ctx.K.DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM
    for bit in range(32):
        if (1 << bit) & known:
            continue
        out = ctx.T.dlpack_helpers_stream()
        ctx.expect(decode(ctx, (2, 0), True, 1, 1 << bit, out), "INVALID_ARGUMENT", what=f"flag bit {bit}")


@case("streams.stream_decode.null_out", profile="streams", covers=["STREAMS-STREAM-DECODE-5"])
def _(ctx):
    for dev in ((1, 0), (2, 0), (10, 0)):
        ctx.expect(decode(ctx, dev, False, 0, 0, None), "NULL_POINTER", what=f"device {dev}")


@case("streams.stream_decode.negative_device_id", profile="streams", covers=["STREAMS-STREAM-DECODE-6"])
def _(ctx):
    for dev in ((1, -1), (2, -1), (10, -7), (14, -(1 << 31))):
        for has, v in ((False, 0), (True, 1), (True, 5)):
            out = ctx.T.dlpack_helpers_stream()
            ctx.expect(decode(ctx, dev, has, v, 0, out), "INVALID_DEVICE", what=f"device {dev}")
