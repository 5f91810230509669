"""Profile core: dlpack_dltensor_dim_order (the dimensions by stride, innermost first).

The expected order comes from `model` below, the page's rule written as a sort key, never from
the library. Tensors, shapes and strides are read-only guarded memory and `data` points into a
PROT_NONE page (the function reads neither data nor dtype). The output array holds sentinels
and ends against a guard page: a write past `capacity` faults, a write past `ndim` shows.
"""
import ctypes

from harness import tensors as X
from harness.registry import case

D = X.desc
SENTINEL = 0x5A5A5A5A


def model(shape, strides):
    """CORE-DLTENSOR-DIM-ORDER-5/-6: extent != 1 first by |stride| ascending, ties higher index
    first; then extent 1, higher index first. NULL strides: row-major, so index descending."""
    n = len(shape)
    if strides is None:
        key = lambda d: (shape[d] == 1, 0, -d)
    else:
        key = lambda d: (shape[d] == 1, 0 if shape[d] == 1 else abs(strides[d]), -d)
    return sorted(range(n), key=key)


ROWS = [
    ("c_3d", (2, 3, 4), (12, 4, 1)),
    ("f_3d", (2, 3, 4), (1, 2, 6)),
    ("c_implied", (2, 3, 4), None),
    ("implied_with_ones", (1, 3, 1, 4, 1), None),
    ("implied_would_overflow", (0, 1 << 62, 4), None),
    ("permuted", (2, 3, 4), (1, 8, 2)),
    ("one_first_stride_1", (1, 3, 4), (1, 4, 1)),
    ("one_mid_stride_1", (3, 1, 4), (4, 1, 1)),
    ("one_last_stride_1", (3, 4, 1), (4, 1, 1)),
    ("one_mid_huge_stride", (3, 1, 4), (4, 1 << 40, 1)),
    ("one_negative_stride", (3, 1, 4), (4, -1, 1)),
    ("f_with_one", (3, 1, 4), (1, 3, 3)),
    ("all_ones", (1, 1, 1), (5, 1, 9)),
    ("broadcast", (4, 3), (0, 1)),
    ("all_broadcast", (4, 3, 5), (0, 0, 0)),
    ("negative", (4, 3), (-1, 4)),
    ("equal_magnitude", (4, 3), (2, -2)),
    ("int64_min", (2, 3), (-(1 << 63), (1 << 63) - 1)),
    ("empty", (0, 3), (1, 5)),
    ("one_dim", (7,), (3,)),
    ("max_ndim", tuple([2, 1] * 512), tuple(range(1024, 0, -1))),
]


def order_row(rid, shape, strides):
    def run(ctx):
        n = len(shape)
        t = X.dltensor(ctx, D(shape=shape, strides=strides))
        cap = n + 2
        out = ctx.guarded(4 * cap)
        arr = (ctypes.c_int32 * cap).from_address(out)
        for i in range(cap):
            arr[i] = SENTINEL
        st = ctx.f.dlpack_dltensor_dim_order(ctx.dptr(t), ctypes.cast(out, ctypes.POINTER(ctypes.c_int32)), cap)
        ctx.ok(st, what=rid)
        want = model(list(shape), None if strides is None else list(strides))
        got = list(arr)
        ctx.check(got[:n] == want, f"{rid}: order {got[:min(n, 12)]}, expected {want[:12]}")
        ctx.check(got[n:] == [SENTINEL] * 2, f"{rid}: out_order written past ndim: {got[n:]}")
    return run


for rid, shape, strides in ROWS:
    covers = ["CORE-DLTENSOR-DIM-ORDER-5"]
    if strides is None:
        covers.append("CORE-DLTENSOR-DIM-ORDER-6")
    case(f"core.dltensor_dim_order.{rid}", profile="core", covers=covers)(order_row(rid, shape, strides))


@case("core.dltensor_dim_order.refusals", profile="core",
      covers=["CORE-DLTENSOR-DIM-ORDER-1", "CORE-DLTENSOR-DIM-ORDER-2", "CORE-DLTENSOR-DIM-ORDER-3",
              "CORE-DLTENSOR-DIM-ORDER-4", "CORE-DLTENSOR-DIM-ORDER-7"])
def _(ctx):
    P = ctypes.POINTER(ctypes.c_int32)
    f = ctx.f.dlpack_dltensor_dim_order
    out = ctx.guarded(4 * 3)
    arr = (ctypes.c_int32 * 3).from_address(out)
    for i in range(3):
        arr[i] = SENTINEL
    po = ctypes.cast(out, P)
    poison_out = ctypes.cast(X.poison_page(ctx), P)
    ctx.expect(f(None, po, 3), "NULL_POINTER", what="NULL tensor")
    # ndim out of range: refused before shape/strides (poisoned) are read, whatever out is.
    for n in (-1, 1025, -(1 << 31)):
        t = X.dltensor(ctx, D(shape="poison", strides="poison", ndim=n))
        ctx.expect(f(ctx.dptr(t), poison_out, 3), "INVALID_NDIM", what=f"ndim {n}")
    # 0-d: OK, nothing read or written, whatever out_order and capacity are.
    z = X.dltensor(ctx, D(shape="poison", strides="poison", ndim=0))
    for o, cap in ((None, 0), (poison_out, -5), (poison_out, 3)):
        ctx.ok(f(ctx.dptr(z), o, cap), what=f"0-d, capacity {cap}")
    # The order of the checks: NULL out, capacity, NULL shape, negative extent.
    t = X.dltensor(ctx, D(shape=(2, 3, 4), strides=(12, 4, 1)))
    ctx.expect(f(ctx.dptr(t), None, 3), "NULL_POINTER", what="NULL out_order")
    ctx.expect(f(ctx.dptr(t), None, 0), "NULL_POINTER", what="NULL out_order, capacity 0")
    for cap in (2, 0, -1):
        ctx.expect(f(ctx.dptr(t), po, cap), "BUFFER_TOO_SMALL", what=f"capacity {cap}")
    ns = X.dltensor(ctx, D(shape=None, strides=(12, 4, 1), ndim=3))
    ctx.expect(f(ctx.dptr(ns), po, 3), "NULL_SHAPE", what="NULL shape")
    ctx.expect(f(ctx.dptr(ns), po, 2), "BUFFER_TOO_SMALL", what="NULL shape, capacity 2")
    for shape in ((2, -1, 4), (-1, 3, 4), (2, 3, -(1 << 63))):
        neg = X.dltensor(ctx, D(shape=shape, strides=(12, 4, 1)))
        ctx.expect(f(ctx.dptr(neg), po, 3), "INVALID_SHAPE", what=f"shape {shape}")
        negi = X.dltensor(ctx, D(shape=shape, strides=None))
        ctx.expect(f(ctx.dptr(negi), po, 3), "INVALID_SHAPE", what=f"shape {shape}, NULL strides")
    ctx.check(list(arr) == [SENTINEL] * 3, f"out_order written on a refusal: {list(arr)}")
