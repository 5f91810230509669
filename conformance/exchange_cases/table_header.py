"""The table as published: attribute, capsule, header, slots (spec/profiles/exchange.md)."""
import ctypes

from harness.registry import case


@case("table.published_on_the_type", profile="table", covers=["EXCH-TABLE-1"])
def _(ctx):
    ctx.check(ctx.capsule is not None, f"{ctx.cls!r} has no __dlpack_c_exchange_api__")
    ctx.check("__dlpack_c_exchange_api__" in {k for c in type.mro(ctx.cls) for k in vars(c)},
              "the attribute is not defined on the type or a base class (found on an instance only?)")
    ctx.check(ctx.api is not None, "the attribute is not a PyCapsule named 'dlpack_exchange_api'")


@case("table.header_version", profile="table", covers=["EXCH-TABLE-3", "EXCH-TABLE-2"])
def _(ctx):
    ctx.check(ctx.api is not None, "no table")
    v = ctx.api.header.version
    ctx.check(v.major == 1, f"header.version.major is {v.major}, not 1")
    ctx.check(v.minor >= 3, f"header.version.minor is {v.minor}: a table published under the 1.3 "
                            "name implements at least 1.3")
    # The same table (address and contents) every time it is looked up.
    again = getattr(ctx.cls, "__dlpack_c_exchange_api__")
    api = ctypes.pythonapi
    ctx.check(api.PyCapsule_GetPointer(again, b"dlpack_exchange_api") == ctx.api_address,
              "a second lookup gives another table")


@case("table.prev_api_chain", profile="table", covers=["EXCH-TABLE-4"])
def _(ctx):
    H = ctx.m.struct("DLPackExchangeAPIHeader")
    seen = {ctx.api_address}
    p = ctypes.cast(ctx.api.header.prev_api, ctypes.c_void_p).value
    while p:
        ctx.check(p not in seen, "header.prev_api loops back to a header already visited")
        seen.add(p)
        h = H.from_address(p)
        ctx.check((h.version.major, h.version.minor) < (ctx.api.header.version.major, ctx.api.header.version.minor),
                  "prev_api points to a header that is not of an older version")
        p = ctypes.cast(h.prev_api, ctypes.c_void_p).value


@case("table.required_slots", profile="table", covers=["EXCH-TABLE-5"])
def _(ctx):
    for name in ("managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
                 "managed_tensor_to_py_object_no_sync", "current_work_stream"):
        ctx.check(ctx.slot(name) is not None, f"{name} is NULL")
