"""Streams: dlpack_export_request_resolve and dlpack_export_request_resolve_with_stream against a
reference model written from their pages (the numbered check order, the same-device and to-host
plans, the copy and flags rules). The model asks the library's own dlpack_version_negotiate and
dlpack_stream_decode where the pages say "exactly as" those functions (each has its own cases).

Every request lies in read-only memory ending against a guard page (STREAMS-EXPORT-REQUEST-
RESOLVE-14: never modified, nothing read past it), every out_plan is filled with a sentinel first
(left unchanged on failure), and no runtime double is called.
"""
import ctypes
import random

from harness import build
from harness.registry import case

from cases import _common as C
from cases._streams import no_runtime_calls


def child_env(fixtures):
    return {"LD_LIBRARY_PATH": build.fake_drivers()}


HOSTLIKE = (1, 3, 11, 13)
TENSOR_DEVICES = [(1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (13, 0), (10, 1), (11, 0), (14, 0), (4, 0), (99, 2)]
DL_DEVICES = [None, (1, 0), (1, 1), (2, 0), (2, 1), (10, 1), (14, 0), (13, 0)]
STREAMS = [None, -1, 0, 1, 2, 3, 0x7F0000001000, -2]
MAXV = [None, (1, 0), (1, 3), (1, 99), (0, 8), (2, 0), (0, 0)]
PVERS = [(1, 3), (1, 0), (0, 8), (1, 9)]


class Req:
    def __init__(self, maxv=None, stream=None, dl=None, copy=0):
        self.maxv, self.stream, self.dl, self.copy = maxv, stream, dl, copy

    def __repr__(self):
        return f"request(max_version={self.maxv}, stream={self.stream}, dl_device={self.dl}, copy={self.copy})"


def req_ptr(ctx, r: Req):
    q = ctx.T.dlpack_helpers_export_request()
    if r.maxv is not None:
        q.has_max_version = True
        q.max_version = ctx.T.DLPackVersion(*r.maxv)
    if r.stream is not None:
        q.has_stream = True
        q.stream = r.stream
    if r.dl is not None:
        q.has_dl_device = True
        q.dl_device = ctx.T.DLDevice(*r.dl)
    q.copy = r.copy
    addr = C.fenced(C.bytes_of(q))
    return ctypes.cast(addr, ctypes.POINTER(ctx.T.dlpack_helpers_export_request)), addr


def sentinel_plan(ctx):
    p = ctx.T.dlpack_helpers_export_plan()
    ctypes.memset(ctypes.addressof(p), 0xA5, ctypes.sizeof(p))
    return p


def plan_tuple(p):
    return (p.kind, (p.version.major, p.version.minor), (p.device.device_type, p.device.device_id),
            bool(p.copy), p.flags, p.sync, (p.stream.kind, p.stream.handle or 0))


def negotiate(ctx, pv, pflags, maxv):
    ch = ctx.T.dlpack_helpers_version_choice()
    mv = ctypes.byref(ctx.T.DLPackVersion(*maxv)) if maxv is not None else None
    st = ctx.f.dlpack_version_negotiate(ctx.T.DLPackVersion(*pv), pflags, mv, ctypes.byref(ch))
    return st, ch


def model(ctx, r: Req, tdev, pv, pflags):
    """(status, plan tuple or None) by the page of dlpack_export_request_resolve."""
    S, K = ctx.S, ctx.K
    if pflags & ~0x7:
        return S.INVALID_ARGUMENT, None
    if r.copy not in (K.DLPACK_HELPERS_COPY_IF_NEEDED, K.DLPACK_HELPERS_COPY_ALWAYS, K.DLPACK_HELPERS_COPY_NEVER):
        return S.INVALID_ARGUMENT, None
    st, ch = negotiate(ctx, pv, pflags & 0x3, r.maxv)
    if st != S.OK:
        return st, None
    if tdev[1] < 0 or (r.dl is not None and r.dl[1] < 0):
        return S.INVALID_DEVICE, None
    kind = ch.kind
    version = (0, 0) if kind == K.DLPACK_HELPERS_EXPORT_LEGACY else (ch.version.major, ch.version.minor)
    target = r.dl if r.dl is not None else tdev
    if tuple(target) == tuple(tdev):
        s = ctx.T.dlpack_helpers_stream()
        st = ctx.f.dlpack_stream_decode(ctx.T.DLDevice(*tdev), r.stream is not None,
                                        r.stream if r.stream is not None else 0,
                                        pflags & K.DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM, ctypes.byref(s))
        if st != S.OK:
            return st, None
        copy = r.copy == K.DLPACK_HELPERS_COPY_ALWAYS
        sync = (K.DLPACK_HELPERS_SYNC_NONE if s.kind in (K.DLPACK_HELPERS_STREAM_NO_SYNC, K.DLPACK_HELPERS_STREAM_NONE)
                else K.DLPACK_HELPERS_SYNC_STREAM_WAIT)
        stream = (s.kind, s.handle or 0)
    else:
        if tuple(target) != (1, 0):
            return S.UNSUPPORTED_DEVICE, None
        if r.stream is not None:
            return S.INVALID_STREAM, None
        if r.copy == K.DLPACK_HELPERS_COPY_ALWAYS:
            copy = True
        elif tdev[0] in HOSTLIKE:
            copy = False
        elif r.copy == K.DLPACK_HELPERS_COPY_IF_NEEDED:
            copy = True
        else:
            return S.COPY_FORBIDDEN, None
        sync, stream = K.DLPACK_HELPERS_SYNC_HOST, (K.DLPACK_HELPERS_STREAM_NONE, 0)
    flags = K.DLPACK_FLAG_BITMASK_IS_COPIED if copy and kind == K.DLPACK_HELPERS_EXPORT_VERSIONED else 0
    return S.OK, (kind, version, tuple(target), copy, flags, sync, stream)


def resolve(ctx, r, tdev, pv, pflags, stream=None, with_stream=False):
    rp, addr = req_ptr(ctx, r)
    out = sentinel_plan(ctx)
    before = C.bytes_of(out)
    if with_stream:
        st = ctx.f.dlpack_export_request_resolve_with_stream(rp, stream, ctx.T.DLDevice(*tdev),
                                                             ctx.T.DLPackVersion(*pv), pflags, ctypes.byref(out))
    else:
        st = ctx.f.dlpack_export_request_resolve(rp, ctx.T.DLDevice(*tdev), ctx.T.DLPackVersion(*pv), pflags,
                                                 ctypes.byref(out))
    return st, out, C.bytes_of(out) == before


def run_rows(ctx, rows, what):
    with no_runtime_calls(ctx, what):
        for r, tdev, pv, pflags in rows:
            want, plan = model(ctx, r, tdev, pv, pflags)
            st, out, untouched = resolve(ctx, r, tdev, pv, pflags)
            where = f"{r}, tensor_device {tdev}, producer {pv} flags {pflags:#x}"
            ctx.expect(st, ctx.status_name(want), what=where)
            if want == ctx.S.OK:
                ctx.check(plan_tuple(out) == plan, f"{where}: plan {plan_tuple(out)}, expected {plan}")
            else:
                ctx.check(untouched, f"{where}: out_plan written on failure")


def grid(seed, n, same=None):
    rnd = random.Random(seed)
    rows = []
    for _ in range(n):
        tdev = rnd.choice(TENSOR_DEVICES)
        dl = rnd.choice(DL_DEVICES)
        if same is True:
            dl = rnd.choice([None, tdev])
        elif same is False:
            dl = rnd.choice([(1, 0), (1, 0), (1, 1), (2, 1), (14, 0)])
            if tuple(dl) == tuple(tdev):
                continue
        r = Req(rnd.choice(MAXV), rnd.choice(STREAMS), dl, rnd.choice([0, 0, 1, 2]))
        rows.append((r, tdev, rnd.choice(PVERS), rnd.choice([0, 0, 1, 2, 3, 4, 4, 5, 7])))
    return rows


@case("streams.export_request_resolve.same_device", profile="streams",
      covers=["STREAMS-EXPORT-REQUEST-RESOLVE-4", "STREAMS-EXPORT-REQUEST-RESOLVE-6",
              "STREAMS-EXPORT-REQUEST-RESOLVE-7", "STREAMS-EXPORT-REQUEST-RESOLVE-12",
              "STREAMS-EXPORT-REQUEST-RESOLVE-13", "STREAMS-EXPORT-REQUEST-RESOLVE-14"])
def _(ctx):
    rows = grid(1, 1500, same=True)
    # every stream value on every device family with and without the lenient flag, copy NEVER
    for tdev in TENSOR_DEVICES:
        for s in STREAMS:
            for pflags in (0, 4):
                rows.append((Req((1, 3), s, None, 2), tdev, (1, 3), pflags))
                rows.append((Req(None, s, tdev, 2), tdev, (1, 3), pflags | 1))
    run_rows(ctx, rows, "dlpack_export_request_resolve")


@case("streams.export_request_resolve.to_host", profile="streams",
      covers=["STREAMS-EXPORT-REQUEST-RESOLVE-8", "STREAMS-EXPORT-REQUEST-RESOLVE-9",
              "STREAMS-EXPORT-REQUEST-RESOLVE-10", "STREAMS-EXPORT-REQUEST-RESOLVE-11",
              "STREAMS-EXPORT-REQUEST-RESOLVE-12", "STREAMS-EXPORT-REQUEST-RESOLVE-13"])
def _(ctx):
    rows = grid(2, 1500, same=False)
    for tdev in TENSOR_DEVICES:
        for copy in (0, 1, 2):
            for pv, pflags in (((1, 3), 0), ((1, 3), 1), ((0, 8), 1), ((1, 3), 4)):
                rows.append((Req((1, 3) if pflags != 1 else None, None, (1, 0), copy), tdev, pv, pflags))
                for s in (-1, 0, 1, 5):
                    rows.append((Req((1, 3), s, (1, 0), copy), tdev, pv, pflags))
    run_rows(ctx, rows, "dlpack_export_request_resolve")


@case("streams.export_request_resolve.arguments", profile="streams",
      covers=["STREAMS-EXPORT-REQUEST-RESOLVE-1", "STREAMS-EXPORT-REQUEST-RESOLVE-2",
              "STREAMS-EXPORT-REQUEST-RESOLVE-3", "STREAMS-EXPORT-REQUEST-RESOLVE-5",
              "STREAMS-EXPORT-REQUEST-RESOLVE-13"])
def _(ctx):
    f = ctx.f.dlpack_export_request_resolve
    rp, _ = req_ptr(ctx, Req((1, 3)))
    out = sentinel_plan(ctx)
    before = C.bytes_of(out)
    ctx.expect(f(None, ctx.T.DLDevice(1, 0), ctx.T.DLPackVersion(1, 3), 0, ctypes.byref(out)), "NULL_POINTER",
               what="NULL request")
    ctx.check(C.bytes_of(out) == before, "out_plan written on failure")
    ctx.expect(f(rp, ctx.T.DLDevice(1, 0), ctx.T.DLPackVersion(1, 3), 0, None), "NULL_POINTER", what="NULL out_plan")
    rows = []
    for bit in range(3, 32):
        rows.append((Req((1, 3)), (1, 0), (1, 3), 1 << bit))
        rows.append((Req((5, 0), 7, (-1, -1), 9), (2, -1), (9, 9), (1 << bit) | 3))  # flags first
    for copy in (3, 4, -1, 0x7FFFFFFF):
        rows.append((Req((1, 3), None, None, copy), (1, 0), (1, 3), 0))
        rows.append((Req((5, 0), 7, (2, -1), copy), (2, -1), (9, 9), 0))     # copy before the rest
    for tdev, dl in (((2, -1), None), ((1, -1), None), ((1, 0), (1, -1)), ((2, 0), (2, -5)), ((2, -1), (1, 0))):
        for s in (None, 0, 5):
            rows.append((Req((1, 3), s, dl, 0), tdev, (1, 3), 0))
            rows.append((Req((0, 5), s, dl, 0), tdev, (1, 3), 0))             # negotiation first
    run_rows(ctx, rows, "dlpack_export_request_resolve")


# ---- with_stream -----------------------------------------------------------------------------

def model_ws(ctx, r, sk, tdev, pv, pflags):
    S, K = ctx.S, ctx.K
    if sk is None:
        return model(ctx, r, tdev, pv, pflags)
    kind, handle = sk
    if not 0 <= kind <= 8:
        return S.INVALID_ARGUMENT, None
    if pflags & ~0x7 or r.copy not in (0, 1, 2):
        return S.INVALID_ARGUMENT, None
    if r.stream is not None:
        return S.INVALID_ARGUMENT, None
    st, plan = model(ctx, r, tdev, pv, pflags)
    if st != S.OK:
        return st, None
    if plan[2] != tuple(tdev):
        return S.INVALID_STREAM, None
    if kind not in (6, 7, 8):
        return S.INVALID_ARGUMENT, None
    if tdev[0] != 14:
        return S.INVALID_STREAM_TYPE, None
    if not handle:
        return S.INVALID_STREAM, None
    return S.OK, plan[:5] + (K.DLPACK_HELPERS_SYNC_STREAM_WAIT, (kind, handle))


def run_ws(ctx, rows, what):
    with no_runtime_calls(ctx, what):
        for r, sk, tdev, pv, pflags in rows:
            sp, saddr = None, None
            if sk is not None:
                s = ctx.T.dlpack_helpers_stream(sk[0], sk[1] or None)
                saddr = C.fenced(C.bytes_of(s))
                sp = ctypes.cast(saddr, ctypes.POINTER(ctx.T.dlpack_helpers_stream))
            want, plan = model_ws(ctx, r, sk, tdev, pv, pflags)
            st, out, untouched = resolve(ctx, r, tdev, pv, pflags, sp, with_stream=True)
            where = f"{r}, stream {sk}, tensor_device {tdev}, producer {pv} flags {pflags:#x}"
            ctx.expect(st, ctx.status_name(want), what=where)
            if want == ctx.S.OK:
                ctx.check(plan_tuple(out) == plan, f"{where}: plan {plan_tuple(out)}, expected {plan}")
            else:
                ctx.check(untouched, f"{where}: out_plan written on failure")


@case("streams.export_request_resolve_with_stream.null_stream", profile="streams",
      covers=["STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-1", "STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-11",
              "STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-12"])
def _(ctx):
    rows = [(r, None, tdev, pv, pf) for r, tdev, pv, pf in grid(3, 800) + grid(4, 400, same=False)]
    run_ws(ctx, rows, "dlpack_export_request_resolve_with_stream")


@case("streams.export_request_resolve_with_stream.queue_objects", profile="streams",
      covers=["STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-2", "STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-3",
              "STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-4", "STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-5",
              "STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-6", "STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-7",
              "STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-8", "STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-9",
              "STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-10", "STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-11",
              "STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-12"])
def _(ctx):
    h = C.noaccess()  # a handle whose dereference faults
    kinds = [(k, hh) for k in (6, 7, 8) for hh in (h, 0)] + [(k, h) for k in range(0, 6)] + \
            [(9, h), (-1, h), (100, 0)]
    rnd = random.Random(5)
    rows = []
    for _ in range(2500):
        tdev = rnd.choice(TENSOR_DEVICES + [(14, 0), (14, 1), (14, -1)] * 3)
        dl = rnd.choice([None, None, tdev, (1, 0), (14, 1), (14, -1)])
        r = Req(rnd.choice(MAXV), rnd.choice([None, None, None, -1, 5]), dl, rnd.choice([0, 0, 1, 2, 3]))
        rows.append((r, rnd.choice(kinds), tdev, rnd.choice(PVERS), rnd.choice([0, 0, 1, 3, 4, 8])))
    for k in (6, 7, 8):
        for copy in (0, 1, 2):
            rows.append((Req((1, 3), None, None, copy), (k, h), (14, 0), (1, 3), 0))
            rows.append((Req((1, 3), None, (1, 0), copy), (k, h), (14, 0), (1, 3), 0))
            rows.append((Req(None, None, (14, 0), copy), (k, h), (14, 0), (1, 3), 1))
    run_ws(ctx, rows, "dlpack_export_request_resolve_with_stream")
