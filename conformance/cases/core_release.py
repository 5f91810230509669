"""Core: releasing managed tensors (dlpack_tensor_delete, dlpack_legacy_tensor_delete)."""
import ctypes
import threading

from harness.registry import case


@case("core.tensor_delete.calls_deleter_once", profile="core",
      covers=["CORE-TENSOR-DELETE-1", "OWN-DELETER-1", "CORE-TENSOR-DELETE-8"])
def _(ctx):
    p, rec = ctx.make_versioned()
    ctx.f.dlpack_tensor_delete(ctx.vptr(p))
    ctx.check(ctx.calls(rec) == 1, f"the deleter ran {ctx.calls(rec)} times, not once")
    ctx.check(ctx.deleter_thread(rec) == ctx.fx.fx_gettid(), "the deleter ran on another thread")


@case("core.tensor_delete.null_tensor", profile="core", covers=["CORE-TENSOR-DELETE-2", "ABI-NULL-2"])
def _(ctx):
    ctx.f.dlpack_tensor_delete(None)  # must simply return


@case("core.tensor_delete.null_deleter", profile="core",
      covers=["CORE-TENSOR-DELETE-3", "OWN-DELETER-2"])
def _(ctx):
    p, rec = ctx.make_versioned(deleter=False)
    before = ctypes.string_at(p, ctypes.sizeof(ctx.T.DLManagedTensorVersioned))
    ctx.f.dlpack_tensor_delete(ctx.vptr(p))
    after = ctypes.string_at(p, ctypes.sizeof(ctx.T.DLManagedTensorVersioned))
    ctx.check(before == after, "the tensor was written")
    ctx.check(ctx.calls(rec) == 0, "something was called")


@case("core.tensor_delete.reads_only_the_deleter", profile="core",
      covers=["CORE-TENSOR-DELETE-4", "OWN-DELETER-4"])
def _(ctx):
    # Only version, manager_ctx and deleter are readable; everything from `flags` on lies in a
    # guard page: reading it crashes the case. Major 2 (an unknown major) and major 1 alike.
    for major in (2, 1, 0, 0xFFFFFFFF):
        off = ctx.T.DLManagedTensorVersioned.flags.offset
        p, rec = ctx.make_versioned(version=(major, 0), readable=off)
        ctx.f.dlpack_tensor_delete(ctx.vptr(p))
        ctx.check(ctx.calls(rec) == 1, f"major {major}: the deleter ran {ctx.calls(rec)} times")


@case("core.tensor_delete.no_write", profile="core", covers=["CORE-TENSOR-DELETE-5"])
def _(ctx):
    # A read-only mapping holding the tensor: any write faults. The deleter (the fixture's) only
    # counts, so the struct stays readable after it.
    p, rec = ctx.make_versioned(poison=False)
    size = ctypes.sizeof(ctx.T.DLManagedTensorVersioned)
    libc = ctypes.CDLL(None)
    page = 4096
    base = p & ~(page - 1)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    ctx.check(libc.mprotect(base, (p + size - base + page - 1) // page * page, 1) == 0, "mprotect")
    ctx.f.dlpack_tensor_delete(ctx.vptr(p))
    ctx.check(ctx.calls(rec) == 1, "the deleter did not run once")


@case("core.tensor_delete.nothing_after_deleter", profile="core",
      covers=["CORE-TENSOR-DELETE-6", "OWN-DELETER-3"])
def _(ctx):
    # The fixture deleter makes the struct, shape, strides and data PROT_NONE: any access after
    # it faults and fails the case.
    p, rec = ctx.make_versioned(poison=True)
    ctx.f.dlpack_tensor_delete(ctx.vptr(p))
    ctx.check(ctx.calls(rec) == 1, "the deleter did not run once")


@case("core.tensor_delete.keeps_last_error", profile="core",
      covers=["CORE-TENSOR-DELETE-7", "CORE-LAST-ERROR-MESSAGE-4"])
def _(ctx):
    st = ctx.f.dlpack_get_device(None, None)
    ctx.expect(st, "NULL_POINTER")
    f = ctx.f.dlpack_last_error_message
    f.restype = ctypes.c_void_p
    ptr, text = f(), ctx.last_error()
    p, rec = ctx.make_versioned()
    ctx.f.dlpack_tensor_delete(ctx.vptr(p))
    ctx.check(f() == ptr and ctx.last_error() == text, "the delete changed the last-error message")


@case("core.tensor_delete.any_thread_no_lock", profile="core", covers=["OWN-THREAD-1"])
def _(ctx):
    # Eight threads released by a barrier each delete their own tensors at once.
    made = [[ctx.make_versioned() for _ in range(50)] for _ in range(8)]
    barrier = threading.Barrier(8)

    def work(ts):
        barrier.wait()
        for p, _ in ts:
            ctx.f.dlpack_tensor_delete(ctx.vptr(p))

    threads = [threading.Thread(target=work, args=(m,)) for m in made]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bad = [ctx.calls(rec) for m in made for _, rec in m if ctx.calls(rec) != 1]
    ctx.check(not bad, f"{len(bad)} deleters did not run exactly once")


@case("core.legacy_tensor_delete.calls_deleter_once", profile="core",
      covers=["CORE-LEGACY-TENSOR-DELETE-1"])
def _(ctx):
    p, rec = ctx.make_legacy()
    ctx.f.dlpack_legacy_tensor_delete(ctx.lptr(p))
    ctx.check(ctx.calls(rec) == 1, f"the deleter ran {ctx.calls(rec)} times, not once")


@case("core.legacy_tensor_delete.null", profile="core", covers=["CORE-LEGACY-TENSOR-DELETE-2"])
def _(ctx):
    ctx.f.dlpack_legacy_tensor_delete(None)
    p, rec = ctx.make_legacy(deleter=False)
    ctx.f.dlpack_legacy_tensor_delete(ctx.lptr(p))
    ctx.check(ctx.calls(rec) == 0, "something was called")


@case("core.legacy_tensor_delete.null_deleter", profile="core",
      covers=["CORE-LEGACY-TENSOR-DELETE-3", "ABI-NULL-3"])
def _(ctx):
    # A read-only tensor whose deleter is NULL: nothing is called and nothing written.
    from cases._common import bytes_of, fenced
    L = ctx.T.DLManagedTensor
    t = L()
    rec = ctx.fx.fx_record_new()
    t.manager_ctx = rec
    t.deleter = None
    p = fenced(bytes_of(t))
    ctx.f.dlpack_legacy_tensor_delete(ctx.lptr(p))
    ctx.check(ctypes.string_at(p, ctypes.sizeof(L)) == bytes_of(t), "the tensor was written")
    ctx.check(ctx.calls(rec) == 0, "something was called")


@case("core.legacy_tensor_delete.reads_only_the_deleter", profile="core",
      covers=["CORE-LEGACY-TENSOR-DELETE-4", "CORE-LEGACY-TENSOR-DELETE-5"])
def _(ctx):
    # The deleter is the struct's last member: every byte before it lies in a PROT_NONE page and
    # the page holding it is read-only, so reading dl_tensor or manager_ctx, or writing, faults.
    # The deleter is a callback that records its argument (it needs no manager_ctx).
    from cases._common import bytes_of, fenced
    L = ctx.T.DLManagedTensor
    DEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    seen = []
    cb = DEL(lambda self: seen.append(self))
    for ndim in (0, 3, -1):
        seen.clear()
        t = L()
        t.deleter = ctypes.cast(cb, ctypes.c_void_p).value
        t.dl_tensor.ndim = ndim
        p = fenced(bytes_of(t), lo=L.deleter.offset)
        ctx.f.dlpack_legacy_tensor_delete(ctx.lptr(p))
        ctx.check(seen == [p], f"the deleter was called {len(seen)} times, or with another pointer")


@case("core.legacy_tensor_delete.nothing_after_deleter", profile="core",
      covers=["CORE-LEGACY-TENSOR-DELETE-6", "CORE-LEGACY-TENSOR-DELETE-8"])
def _(ctx):
    # The fixture deleter makes the struct, shape, strides and data PROT_NONE.
    for _ in range(3):
        p, rec = ctx.make_legacy(poison=True)
        ctx.f.dlpack_legacy_tensor_delete(ctx.lptr(p))
        ctx.check(ctx.calls(rec) == 1, "the deleter did not run once")
        ctx.check(ctx.deleter_thread(rec) == ctx.fx.fx_gettid(), "the deleter ran on another thread")


@case("core.legacy_tensor_delete.keeps_last_error", profile="core", covers=["CORE-LEGACY-TENSOR-DELETE-7"])
def _(ctx):
    from cases._common import unchanged_message
    with unchanged_message(ctx, "dlpack_legacy_tensor_delete"):
        for deleter in (True, False):
            p, rec = ctx.make_legacy(deleter=deleter)
            ctx.f.dlpack_legacy_tensor_delete(ctx.lptr(p))
        ctx.f.dlpack_legacy_tensor_delete(None)
    # Calls the deleter makes can change it: a deleter that fails a call leaves its message.
    DEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

    def deleter(_self):
        ctx.f.dlpack_version_check(ctx.T.DLPackVersion(9, 8080808), None)

    cb = DEL(deleter)
    t = ctx.T.DLManagedTensor()
    t.deleter = ctypes.cast(cb, ctypes.c_void_p).value
    ctx.f.dlpack_legacy_tensor_delete(ctypes.pointer(t))
    ctx.check(b"8080808" in ctx.last_error(), "the deleter's own failing call did not set the message")
