"""Registered stream backends written in Python (ctypes callbacks) that record each call
(registers no case). The callbacks stay referenced for the life of the process, as the
registration requires (STREAMS-STREAM-BACKEND-REGISTER-10)."""
import ctypes
import threading

WAIT = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)
SYNC = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p)
WAIT_HANDLE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int,
                               ctypes.c_void_p)
KEEP = []


class Backend:
    """Recording callbacks; `result` is what each returns (0 success)."""

    def __init__(self, name="b"):
        self.name = name
        self.calls = []
        self.result = 0
        self.lock = threading.Lock()

        def w(c, dev, prod, cons):
            with self.lock:
                self.calls.append(("wait", c or 0, dev, prod or 0, cons or 0))
            return self.result

        def s(c, dev, st):
            with self.lock:
                self.calls.append(("synchronize", c or 0, dev, st or 0))
            return self.result

        def wh(c, dev, prod, kind, h):
            with self.lock:
                self.calls.append(("wait_handle", c or 0, dev, prod or 0, kind, h or 0))
            return self.result

        self.wait, self.sync, self.wait_handle = WAIT(w), SYNC(s), WAIT_HANDLE(wh)
        KEEP.append(self)

    def addr(self, fn):
        return ctypes.cast(fn, ctypes.c_void_p).value

    def struct(self, ctx, cval):
        return ctx.T.dlpack_helpers_stream_backend(cval, self.addr(self.wait), self.addr(self.sync))

    def struct_ex(self, ctx, cval, with_handle=True, size=None):
        b = ctx.T.dlpack_helpers_stream_backend_ex()
        b.struct_size = ctypes.sizeof(b) if size is None else size
        b.ctx, b.wait, b.synchronize = cval, self.addr(self.wait), self.addr(self.sync)
        b.wait_handle = self.addr(self.wait_handle) if with_handle else None
        return b

    def take(self):
        with self.lock:
            c, self.calls = self.calls, []
        return c
