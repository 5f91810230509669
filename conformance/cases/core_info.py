"""Core: run-time discovery and errors (dlpack_get_info, dlpack_last_error_message).

dlpack_get_info is called with every struct_size from 0 to past the implementation's size, each
time with exactly that many bytes before a guard page (a read or write past them faults), the
bytes prefilled with a sentinel; the manifest gives the fields and offsets.
"""
import ctypes
import os
import re
import subprocess
import sys
import textwrap
import threading

from harness.registry import case

from cases._common import PAGE, expect_fail, in_library, msg_ptr, pages, prime, protect, unchanged_message

SENT = 0xC7


def info_fields(ctx):
    """(name, offset, size) of the manifest's dlpack_helpers_info, by offset."""
    return sorted(((f["name"], int(f["offset"]), int(f["size"]))
                   for f in ctx.m.structs["dlpack_helpers_info"]["fields"]), key=lambda x: x[1])


def info_call(ctx, c, room=None):
    """dlpack_get_info on `room` (default c) bytes ending at a guard page, struct_size = c.
    Returns (status, address, bytes after the call)."""
    room = max(c, 8) if room is None else room
    p = pages(3)
    protect(p + 2 * PAGE, PAGE, 0)
    addr = p + 2 * PAGE - room
    ctypes.memset(addr, SENT, room)
    if room >= 8:
        ctypes.c_size_t.from_address(addr).value = c
    st = ctx.f.dlpack_get_info(ctypes.cast(addr, ctypes.POINTER(ctx.T.dlpack_helpers_info)))
    return st, addr, ctypes.string_at(addr, room)


def full_info(ctx, size=256):
    st, addr, raw = info_call(ctx, size)
    ctx.ok(st, what=f"dlpack_get_info with struct_size {size}")
    Info = ctx.T.dlpack_helpers_info
    return Info.from_buffer_copy(raw[:ctypes.sizeof(Info)]), raw


@case("core.get_info.null", profile="core", covers=["CORE-GET-INFO-1", "ABI-NULL-1"])
def _(ctx):
    expect_fail(ctx, lambda: ctx.f.dlpack_get_info(None), "NULL_POINTER", what="NULL out_info")


@case("core.get_info.struct_size_too_small", profile="core",
      covers=["CORE-GET-INFO-3", "ABI-STRUCT-3", "ABI-OUT-1"])
def _(ctx):
    for c in range(0, 8):
        # struct_size is a size_t; the struct holds only it (8 bytes before the guard page).
        p = pages(2)
        protect(p + PAGE, PAGE, 0)
        addr = p + PAGE - 8
        ctypes.c_size_t.from_address(addr).value = c
        before = ctypes.string_at(addr, 8)
        expect_fail(ctx, lambda: ctx.f.dlpack_get_info(ctypes.cast(addr, ctypes.POINTER(ctx.T.dlpack_helpers_info))),
                    "INVALID_ARGUMENT", what=f"struct_size {c}")
        ctx.check(ctypes.string_at(addr, 8) == before, f"struct_size {c}: written on failure")


@case("core.get_info.every_struct_size", profile="core",
      covers=["CORE-GET-INFO-2", "CORE-GET-INFO-4", "CORE-GET-INFO-5", "ABI-STRUCT-2", "ABI-OUT-2"])
def _(ctx):
    fields = info_fields(ctx)
    msize = ctypes.sizeof(ctx.T.dlpack_helpers_info)
    full, _ = full_info(ctx, 4096)
    s_impl = full.struct_size
    ctx.check(s_impl >= msize, f"struct_size {s_impl} returned for 4096 bytes: below the manifest's {msize}")
    ref = bytes(full)[8:]
    with unchanged_message(ctx, "dlpack_get_info returning OK"):
        for c in list(range(8, s_impl + 17)) + [4096]:
            st, addr, raw = info_call(ctx, c)
            ctx.expect(st, "OK", what=f"struct_size {c}")
            got = ctypes.c_size_t.from_buffer_copy(raw[:8]).value
            filled = [f for f in fields if f[1] + f[2] <= c and f[0] != "struct_size"]
            if c >= s_impl:
                want = s_impl
                ctx.check(got == want, f"struct_size {c}: returned {got}, expected {want}")
            elif c <= msize:
                want = max([8] + [o + n for _, o, n in fields if o + n <= c])
                ctx.check(got == want, f"struct_size {c}: returned {got}, expected {want}")
            else:  # between the manifest's size and the implementation's: its own later fields
                ctx.check(max(o + n for _, o, n in fields) <= got <= c,
                          f"struct_size {c}: returned {got}")
            # Every filled field holds what the full call gave (capabilities may grow).
            for name, o, n in filled:
                if name == "capabilities":
                    continue
                ctx.check(raw[o:o + n] == ref[o - 8:o - 8 + n],
                          f"struct_size {c}: field {name} differs from the full answer")
            # Nothing written at or past the returned struct_size.
            ctx.check(raw[got:] == bytes([SENT]) * (len(raw) - got),
                      f"struct_size {c}: bytes at or past the returned struct_size {got} were written")


@case("core.get_info.fields", profile="core",
      covers=["CORE-GET-INFO-6", "CORE-GET-INFO-7", "CORE-GET-INFO-8", "CORE-GET-INFO-12", "CORE-GET-INFO-13",
              "ABI-BOOL-1"])
def _(ctx):
    info, raw = full_info(ctx)
    ctx.check(info.version, "version is NULL")
    text = ctypes.string_at(info.version)
    m = re.fullmatch(rb"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-+].*)?", text, re.S)
    ctx.check(m is not None, f"version {text!r} does not start with MAJOR.MINOR.PATCH (no leading zeros)")
    ctx.check(tuple(int(x) for x in m.groups()[:3]) == (info.major, info.minor, info.patch),
              f"version {text!r} differs from major/minor/patch {info.major}.{info.minor}.{info.patch}")
    ctx.check(in_library(ctx, info.version), "version does not point into the library's static data")
    again, _ = full_info(ctx)
    ctx.check(again.version == info.version and ctypes.string_at(info.version) == text, "version moved or changed")
    ctx.check(info.dlpack_abi_major == 1, f"dlpack_abi_major is {info.dlpack_abi_major}")
    dv = (info.dlpack_version.major, info.dlpack_version.minor)
    ctx.check(dv == (ctx.K.DLPACK_HELPERS_DLPACK_MAJOR_VERSION, ctx.K.DLPACK_HELPERS_DLPACK_MINOR_VERSION) == (1, 3),
              f"dlpack_version is {dv}")
    compat = ctypes.c_int32(-1)
    ctx.ok(ctx.f.dlpack_version_check(info.dlpack_version, ctypes.byref(compat)))
    ctx.check(compat.value == getattr(ctx.K, "DLPACK_HELPERS_VERSION_EXACT", 0),
              "dlpack_version_check does not call the reported dlpack_version EXACT")
    off = ctx.T.dlpack_helpers_info.accepts_legacy.offset
    ctx.check(raw[off] == 1, f"accepts_legacy is the byte {raw[off]}, not 1")
    want = ctx.m.doc["spec"]["version_number"]
    ctx.check(info.spec_version == want == ctx.K.DLPACK_HELPERS_SPEC_VERSION,
              f"spec_version {info.spec_version}, expected {want}")


@case("core.get_info.capabilities_and_profiles", profile="core",
      covers=["CORE-GET-INFO-9", "CORE-GET-INFO-10", "CORE-GET-INFO-14", "CONF-CLASS-4", "CONF-CLASS-2"])
def _(ctx):
    K = ctx.K
    info, _ = full_info(ctx)
    caps, prof = info.capabilities, info.profiles
    allcaps = 0
    for k, v in vars(K).items():
        if k.startswith("DLPACK_HELPERS_CAP_"):
            allcaps |= v
    ctx.check(allcaps == 0x7F, "suite bug: the seven capability bits")
    ctx.check(caps & ~0x7F == 0, f"capabilities {caps:#x} has bits beyond 0x7F")
    ctx.check(prof & K.DLPACK_HELPERS_PROFILE_CORE, f"profiles {prof:#x} lacks CORE")
    ctx.check(prof & ~0xF == 0, f"profiles {prof:#x} has bits beyond 0xF")
    for name, bit in ctx.m.profile_bits.items():
        if prof & bit:
            missing = [n for n, f in ctx.m.functions.items() if f.get("profile") == name and not ctx.f.has(n)]
            ctx.check(not missing, f"profile {name} claimed but not exported: {missing}")
    device_caps = (K.DLPACK_HELPERS_CAP_CUDA | K.DLPACK_HELPERS_CAP_ROCM | K.DLPACK_HELPERS_CAP_LEVEL_ZERO
                   | K.DLPACK_HELPERS_CAP_POINTER_CUDA | K.DLPACK_HELPERS_CAP_POINTER_ROCM
                   | K.DLPACK_HELPERS_CAP_POINTER_LEVEL_ZERO)
    if not prof & K.DLPACK_HELPERS_PROFILE_STREAMS:
        ctx.check(caps & device_caps == 0, f"capabilities {caps:#x}: device bits without the streams profile")
    if not prof & (K.DLPACK_HELPERS_PROFILE_PYTHON | K.DLPACK_HELPERS_PROFILE_EXCHANGE):
        ctx.check(caps & K.DLPACK_HELPERS_CAP_PYTHON == 0, "CAP_PYTHON without the python or exchange profile")
    # (A bit is set *only when* its facility is usable: core.abi.runs_without_python checks that
    # CAP_PYTHON is clear in a process without Python; nothing requires it set here.)
    # The runner's discovery (another process) saw the same profiles.
    if ctx.claimed is not None:
        ctx.check(ctx.claimed == prof, f"profiles {prof:#x} here, {ctx.claimed:#x} at discovery")


@case("core.get_info.same_in_every_call", profile="core", covers=["CORE-GET-INFO-15"])
def _(ctx):
    ref, _ = full_info(ctx)
    results, barrier = [], threading.Barrier(4)

    def work():
        barrier.wait()
        for _ in range(50):
            results.append(full_info(ctx)[0])

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for name, o, n in info_fields(ctx):
        if name == "capabilities":
            continue
        vals = {bytes(r)[o:o + n] for r in results} | {bytes(ref)[o:o + n]}
        ctx.check(len(vals) == 1, f"field {name} differs between calls")
    caps = [r.capabilities for r in results]
    ctx.check(all(c | ref.capabilities == c for c in caps), "a capability bit reported once was cleared")


CAPS_CHILD = textwrap.dedent(r"""
    import ctypes, json, os, sys
    lib = ctypes.CDLL(sys.argv[1])
    class Info(ctypes.Structure):
        _fields_ = [("struct_size", ctypes.c_size_t), ("pad", ctypes.c_char * 4088)]
    def caps():
        i = Info(); i.struct_size = 4096
        assert lib.dlpack_get_info(ctypes.byref(i)) == 0
        return ctypes.c_uint64.from_buffer(i, int(sys.argv[2])).value
    before = caps()
    # The driver appears on the (so far empty) library path and the application loads it.
    os.symlink(os.path.join(sys.argv[3], "libcuda.so.1"), os.path.join(sys.argv[4], "libcuda.so.1"))
    ctypes.CDLL(os.path.join(sys.argv[4], "libcuda.so.1"), mode=os.RTLD_GLOBAL)
    after = caps()
    print(json.dumps([before, after, caps()]))
""")


@case("core.get_info.capabilities_follow_the_process", profile="core", covers=["CORE-GET-INFO-11"])
def _(ctx):
    # A child process without any device runtime on its search path asks, then loads the fake
    # CUDA driver (which initializes), then asks again: the bit appears and stays.
    K = ctx.K
    info, _ = full_info(ctx)
    if not info.profiles & K.DLPACK_HELPERS_PROFILE_STREAMS:
        ctx.check(info.capabilities & K.DLPACK_HELPERS_CAP_CUDA == 0, "CAP_CUDA without the streams profile")
        return
    from harness import build
    fakes = build.fake_drivers()
    import tempfile
    empty = tempfile.mkdtemp(prefix="dlpc-libpath-")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    env["LD_LIBRARY_PATH"] = empty
    off = ctx.T.dlpack_helpers_info.capabilities.offset
    try:
        p = subprocess.run([sys.executable, "-c", CAPS_CHILD, ctx.lib_path, str(off), fakes, empty],
                           capture_output=True, text=True, env=env, timeout=60)
    finally:
        for n in os.listdir(empty):
            os.unlink(os.path.join(empty, n))
        os.rmdir(empty)
    ctx.check(p.returncode == 0, f"the child failed: {p.stderr[-500:]}")
    before, after, later = (int(x) for x in p.stdout.split("[", 1)[1].rstrip("]\n ").split(","))
    cuda = K.DLPACK_HELPERS_CAP_CUDA
    ctx.check(before & ~after == 0 and after & ~later == 0, f"a bit was cleared: {before:#x} {after:#x} {later:#x}")
    ctx.check(after & cuda, f"CAP_CUDA not reported after the CUDA driver was loaded ({before:#x} -> {after:#x})")


# -- dlpack_last_error_message --------------------------------------------------------------------
def _on_new_thread(fn):
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - reported by the caller
            out["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


@case("core.last_error_message.empty_before_any_failure", profile="core",
      covers=["CORE-LAST-ERROR-MESSAGE-2", "CORE-LAST-ERROR-MESSAGE-1"])
def _(ctx):
    def fresh():
        a = msg_ptr(ctx)
        ctx.check(a, "dlpack_last_error_message returned NULL on a new thread")
        # Successful calls do not set it either.
        ctx.f.dlpack_is_cpu_accessible(ctx.T.DLDevice(1, 0))
        ctx.ok(ctx.f.dlpack_version_check(ctx.T.DLPackVersion(1, 3), None))
        return ctypes.string_at(a), ctypes.string_at(msg_ptr(ctx))

    for _ in range(3):
        first, second = _on_new_thread(fresh)
        ctx.check(first == b"" and second == b"", f"a new thread's message is {first!r} / {second!r}, not empty")


@case("core.last_error_message.set_by_each_failure", profile="core",
      covers=["CORE-LAST-ERROR-MESSAGE-1", "CORE-LAST-ERROR-MESSAGE-3", "ABI-ERROR-1"])
def _(ctx):
    D = ctx.T.DLDevice
    calls = [
        ("device_check", lambda: ctx.f.dlpack_device_check(D(1, -1), 0), "INVALID_DEVICE"),
        ("get_device", lambda: ctx.f.dlpack_get_device(None, None), "NULL_POINTER"),
        ("dtype_parse", lambda: ctx.f.dlpack_dtype_parse(b"\xff\xfe", ctypes.byref(ctx.T.DLDataType())), "UNKNOWN_NAME"),
        ("device_parse", lambda: ctx.f.dlpack_device_parse(b"cuda:\x80", ctypes.byref(D())), "UNKNOWN_NAME"),
        ("get_info", lambda: ctx.f.dlpack_get_info(None), "NULL_POINTER"),
        ("negotiate", lambda: ctx.f.dlpack_version_negotiate(ctx.T.DLPackVersion(1, 3), 8, None,
                                                             ctypes.byref(ctx.T.dlpack_helpers_version_choice())),
         "INVALID_ARGUMENT"),
    ]
    for name, call, status in calls * 2:
        expect_fail(ctx, call, status, what=name)  # non-empty UTF-8, not the previous message
        p, text = msg_ptr(ctx), ctx.last_error()
        # It stays until the next failing call (the call itself and successful calls keep it).
        for _ in range(3):
            ctx.f.dlpack_last_error_message()
            ctx.ok(ctx.f.dlpack_device_check(D(2, 0), 0))
        ctx.check(msg_ptr(ctx) == p and ctypes.string_at(p) == text, f"{name}: the message did not stay")


@case("core.last_error_message.ok_calls_keep_it", profile="core", covers=["CORE-LAST-ERROR-MESSAGE-4"])
def _(ctx):
    D = ctx.T.DLDevice
    with unchanged_message(ctx, "successful calls and functions that cannot fail"):
        info = ctx.T.dlpack_helpers_info()
        info.struct_size = ctypes.sizeof(info)
        ctx.ok(ctx.f.dlpack_get_info(ctypes.byref(info)))
        ctx.ok(ctx.f.dlpack_version_check(ctx.T.DLPackVersion(1, 1), None))
        ctx.ok(ctx.f.dlpack_device_check(D(1, 0), 0))
        d = ctx.T.DLDataType()
        ctx.ok(ctx.f.dlpack_dtype_parse(b"float32", ctypes.byref(d)))
        buf = ctypes.create_string_buffer(32)
        ctx.ok(ctx.f.dlpack_device_format(D(2, 1), buf, 32, None))
        ctx.f.dlpack_is_cpu_accessible(D(2, 0))
        ctx.f.dlpack_device_host_access(D(2, 0))
        ctx.f.dlpack_device_is_pointer_addressed(D(2, 0))
        ctx.f.dlpack_status_string(5)
        ctx.f.dlpack_last_error_message()
        p, rec = ctx.make_versioned()
        ctx.f.dlpack_tensor_delete(ctx.vptr(p))


@case("core.last_error_message.per_thread", profile="core",
      covers=["CORE-LAST-ERROR-MESSAGE-5", "CORE-LAST-ERROR-MESSAGE-6"])
def _(ctx):
    # Thread A fails (its message names 7777777), then thread B fails many times while A waits;
    # A's message, pointer and text, is the same afterwards. B checks the same of its own.
    b1, b2 = threading.Barrier(2), threading.Barrier(2)
    out = {}

    def a():
        ctx.f.dlpack_version_check(ctx.T.DLPackVersion(3, 7777777), None)
        p = msg_ptr(ctx)
        out["a_before"] = (p, ctypes.string_at(p))
        b1.wait()   # B fails now
        b2.wait()
        out["a_after"] = (msg_ptr(ctx), ctypes.string_at(p))

    def b():
        ctx.f.dlpack_version_check(ctx.T.DLPackVersion(4, 5555555), None)
        p = msg_ptr(ctx)
        out["b_before"] = (p, ctypes.string_at(p))
        b1.wait()
        for i in range(200):
            ctx.f.dlpack_device_check(ctx.T.DLDevice(0, -1 - i), 0)
        ctx.f.dlpack_version_check(ctx.T.DLPackVersion(4, 6666666), None)
        out["b_after"] = ctypes.string_at(msg_ptr(ctx))
        b2.wait()

    ta, tb = threading.Thread(target=a), threading.Thread(target=b)
    ta.start(); tb.start(); ta.join(); tb.join()  # noqa: E702
    ctx.check(b"7777777" in out["a_before"][1] and b"5555555" in out["b_before"][1],
              "dlpack_version_check's messages do not name the minor")
    ctx.check(out["a_after"] == out["a_before"],
              f"thread A's message changed while thread B failed: {out['a_before']} -> {out['a_after']}")
    ctx.check(b"6666666" in out["b_after"], "thread B's last message is not its last failure's")


# -- dlpack_last_error_status -----------------------------------------------------------------
@case("core.last_error_status.ok_on_a_new_thread", profile="core", covers=["CORE-LAST-ERROR-STATUS-1"])
def _(ctx):
    def fresh():
        first = ctx.f.dlpack_last_error_status()
        ctx.ok(ctx.f.dlpack_version_check(ctx.T.DLPackVersion(1, 3), None))
        ctx.f.dlpack_is_cpu_accessible(ctx.T.DLDevice(1, 0))
        return first, ctx.f.dlpack_last_error_status()

    for _ in range(3):
        first, second = _on_new_thread(fresh)
        ctx.check(first == 0 and second == 0, f"a new thread's last status is {first} / {second}, not OK (0)")


@case("core.last_error_status.follows_each_failure", profile="core",
      covers=["CORE-LAST-ERROR-STATUS-2", "CORE-LAST-ERROR-STATUS-3"])
def _(ctx):
    D = ctx.T.DLDevice
    calls = [
        ("device_check", lambda: ctx.f.dlpack_device_check(D(1, -1), 0), "INVALID_DEVICE"),
        ("get_device", lambda: ctx.f.dlpack_get_device(None, None), "NULL_POINTER"),
        ("dtype_parse", lambda: ctx.f.dlpack_dtype_parse(b"float31", ctypes.byref(ctx.T.DLDataType())), "UNKNOWN_NAME"),
        ("version_check", lambda: ctx.f.dlpack_version_check(ctx.T.DLPackVersion(2, 0), None), "UNSUPPORTED_VERSION"),
        ("compact_strides", lambda: ctx.f.dlpack_compact_strides(-1, None, False, None), "INVALID_NDIM"),
    ]
    for name, call, status in calls * 2:
        st = call()
        ctx.expect(st, status, what=name)
        got = ctx.f.dlpack_last_error_status()
        ctx.check(got == st, f"{name}: last status {ctx.status_name(got)}, the call returned {ctx.status_name(st)}")
        # It stays through successful calls, functions that cannot fail and its own calls.
        for _ in range(3):
            ctx.f.dlpack_last_error_status()
            ctx.f.dlpack_last_error_message()
            ctx.ok(ctx.f.dlpack_device_check(D(2, 0), 0))
            ctx.f.dlpack_status_string(5)
            d = ctx.T.DLDataType()
            ctx.ok(ctx.f.dlpack_dtype_parse(b"float32", ctypes.byref(d)))
        got = ctx.f.dlpack_last_error_status()
        ctx.check(got == st, f"{name}: last status became {ctx.status_name(got)} after successful calls")


@case("core.last_error_status.per_thread", profile="core", covers=["CORE-LAST-ERROR-STATUS-4"])
def _(ctx):
    # Thread A fails with UNSUPPORTED_VERSION, then waits while thread B fails with other statuses.
    b1, b2 = threading.Barrier(2), threading.Barrier(2)
    out = {}

    def a():
        ctx.f.dlpack_version_check(ctx.T.DLPackVersion(3, 0), None)
        out["a_before"] = ctx.f.dlpack_last_error_status()
        b1.wait()
        b2.wait()
        out["a_after"] = ctx.f.dlpack_last_error_status()

    def b():
        b1.wait()
        for i in range(50):
            ctx.f.dlpack_device_check(ctx.T.DLDevice(1, -1 - i), 0)
        out["b"] = ctx.f.dlpack_last_error_status()
        b2.wait()

    ta, tb = threading.Thread(target=a), threading.Thread(target=b)
    ta.start(); tb.start(); ta.join(); tb.join()  # noqa: E702
    want_a, want_b = ctx.m.status("UNSUPPORTED_VERSION"), ctx.m.status("INVALID_DEVICE")
    ctx.check(out["a_before"] == want_a, f"thread A's last status is {out['a_before']}, not UNSUPPORTED_VERSION")
    ctx.check(out["a_after"] == want_a, f"thread A's last status changed to {out['a_after']} while B failed")
    ctx.check(out["b"] == want_b, f"thread B's last status is {out['b']}, not INVALID_DEVICE")


@case("core.last_error_message.utf8_for_invalid_input", profile="core",
      covers=["CORE-LAST-ERROR-MESSAGE-1"])
def _(ctx):
    # Names that are not UTF-8 or hold control bytes: the message stays valid UTF-8.
    for s in (b"\xff", b"float\xc3", b"\x01\x02\x1b[31m", b"cuda:\xed\xa0\x80", b"a" * 5000 + b"\xff"):
        for fn, out in ((ctx.f.dlpack_dtype_parse, ctx.T.DLDataType()), (ctx.f.dlpack_device_parse, ctx.T.DLDevice())):
            prime(ctx)
            ctx.expect(fn(s, ctypes.byref(out)), "UNKNOWN_NAME")
            text = ctx.last_error()
            try:
                text.decode("utf-8")
            except UnicodeDecodeError:
                ctx.check(False, f"the message for {s[:20]!r} is not UTF-8: {text[:80]!r}")


class _RaisesWithNul:
    """A producer whose __dlpack__ and __dlpack_device__ raise BufferError with a NUL inside."""

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, *args, **kwargs):
        raise BufferError("head\0TAIL_4711_MARK after the NUL")


@case("python.last_error_message.nul_escaped", profile="python",
      covers=["CORE-LAST-ERROR-MESSAGE-7", "CORE-LAST-ERROR-MESSAGE-1"])
def _(ctx):
    # Core inputs are NUL-terminated and cannot carry a NUL; a Python producer's exception text
    # can, and the python profile's import carries it into the message: it is escaped, so the
    # text after the NUL is still there.
    obj = _RaisesWithNul()
    out = ctypes.c_void_p(0)
    fn = ctx.pf.dlpack_object_import
    st = fn(ctypes.c_void_p(id(obj)), None, ctypes.cast(ctypes.byref(out), fn.argtypes[2]), None)
    ctx.expect(st, "PRODUCER_BUFFER_ERROR", what="a producer raising BufferError('head\\0TAIL...')")
    text = ctx.last_error()
    text.decode("utf-8")
    ctx.check(b"TAIL_4711_MARK" in text, f"the message was cut at the producer's NUL: {text!r}")
