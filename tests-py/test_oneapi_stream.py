"""Peer case 51 on the Python side: a kDLOneAPI tensor's ``__dlpack__`` takes the queue object
oneAPI producers and consumers pass as ``stream`` (an object exposing its queue's address through
``addressof_ref()``, as dpctl's ``SyclQueue`` documents), decoded in C by
``dlpack_python_stream_decode``; anything else is ``TypeError``. The memory is host memory
standing in for USM (no Level Zero on CI); the C-level behaviour with a fake Level Zero loader
is in tests/pointer_fake.rs."""
import ctypes
from ctypes import byref

import pytest

import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib
from test_export import _on_device

ONEAPI, CUDA = 14, 2


class SyclQueueLike:
    """The documented surface dpctl's SyclQueue offers here: addressof_ref() -> int."""

    def __init__(self, address):
        self._address = address
        self.calls = 0

    def addressof_ref(self):
        self.calls += 1
        return self._address


def decode(obj, device_type=ONEAPI, flags=0):
    s = _lib.Stream()
    status = lib.dlpack_python_stream_decode(obj, _lib.DLDevice(device_type, 0), flags, byref(s))
    return status, s


def status(name):
    return next(code for code in range(200) if lib.dlpack_status_string(code).decode() == name)


def test_c_decode_of_python_stream_objects():
    queue_storage = ctypes.create_string_buffer(16)
    q = SyclQueueLike(ctypes.addressof(queue_storage))
    st, s = decode(q)
    assert st == 0, lib.dlpack_last_error_message()
    assert (s.kind, s.handle) == (_lib.STREAM_SYCL_QUEUE, ctypes.addressof(queue_storage))
    assert q.calls == 1
    # None and ints take the integer rules of the device.
    assert decode(None)[0] == 0 and decode(None)[1].kind == 4  # default queue
    st, s = decode(7)
    assert (st, s.kind, s.handle) == (0, 5, 7)
    assert decode(0)[0] == status("INVALID_STREAM")
    assert decode(2**64)[0] == status("INVALID_STREAM")
    # Wrong types: TypeError through the status table.
    for bad in [object(), "queue", 1.5, True, SyclQueueLike("not an int")]:
        st, _ = decode(bad)
        assert st == status("INVALID_STREAM_TYPE"), bad
        assert lib.dlpack_status_python_exception(st) == b"TypeError"
    assert decode(SyclQueueLike(0))[0] == status("INVALID_STREAM")
    assert decode(SyclQueueLike(-5))[0] == status("INVALID_STREAM")
    assert decode(SyclQueueLike(2**70))[0] == status("INVALID_STREAM")
    # Integer-like objects (__index__) are integers, not queues.
    import numpy as np
    st, s = decode(np.int64(7))
    assert (st, s.kind, s.handle) == (0, 5, 7)

    class Raises:
        def addressof_ref(self):
            raise RuntimeError("queue gone")
    st, _ = decode(Raises())
    assert st == status("INVALID_STREAM_TYPE")
    assert b"queue gone" in lib.dlpack_last_error_message()
    # A queue object is not a stream of a CUDA device.
    assert decode(q, CUDA)[0] == status("INVALID_STREAM_TYPE")


def test_oneapi_tensor_exports_with_a_queue_object():
    t, c = _on_device(ONEAPI)
    with t:
        q = SyclQueueLike(0x5A0000)
        cap = t.__dlpack__(stream=q, max_version=(1, 3))
        assert q.calls == 1
        with dh.import_tensor(cap) as v:
            assert v.device == (ONEAPI, 0)
        # Integers still work; a non-queue object is TypeError.
        t.__dlpack__(stream=7, max_version=(1, 3))
        with pytest.raises(TypeError, match="addressof_ref"):
            t.__dlpack__(stream=object(), max_version=(1, 3))
    t2, c2 = _on_device(CUDA)
    with t2:
        with pytest.raises(TypeError, match="None or an int"):
            t2.__dlpack__(stream=SyclQueueLike(0x5A0000))


def test_host_access_is_answered_per_tensor():
    """Issue 13: the package gives the C library's per-tensor answer (dlpack_tensor_host_access):
    the device table decides CPU and CUDA memory with no driver call; a kDLOneAPI tensor's answer
    depends on its USM kind, which nobody can tell here (no Level Zero context registered), so it
    is "unknown", never a guess."""
    import numpy as np

    with dh.import_tensor(np.arange(3.0)) as t:
        assert t.host_access() == "always"
    t.release()
    with pytest.raises(ValueError):
        t.host_access()
    t2, c2 = _on_device(CUDA)
    with t2:
        assert t2.host_access() == "never"
    t3, c3 = _on_device(ONEAPI)
    with t3:
        assert t3.host_access() == "unknown"


def test_case_54_negative_device_id_is_refused_before_the_object():
    """Spec PY-PYTHON-STREAM-DECODE-4: a negative device id is INVALID_DEVICE whatever the
    object (it decoded OK before)."""
    q = SyclQueueLike(ctypes.addressof(ctypes.create_string_buffer(16)))
    for obj in (None, 1, 7, q):
        for dt in (1, CUDA, 10, ONEAPI):
            s = _lib.Stream()
            st = lib.dlpack_python_stream_decode(obj, _lib.DLDevice(dt, -1), 0, byref(s))
            assert st == status("INVALID_DEVICE"), (obj, dt, lib.dlpack_last_error_message())
    assert q.calls == 0


def test_keyboard_interrupt_from_index_is_never_swallowed():
    """Spec PY-PYTHON-STREAM-DECODE-10: an exception not deriving from Exception raised by the
    object's __index__ stays set (PYTHON_ERROR_SET); an ordinary one is a refusal of the value.
    The KeyboardInterrupt was cleared and the object then tried as a queue before."""
    class Interrupting:
        def __index__(self):
            raise KeyboardInterrupt("stop")

    class Raising:
        def __index__(self):
            raise ValueError("no")

    pylib = ctypes.PyDLL(lib._name)
    fn = pylib.dlpack_python_stream_decode
    fn.argtypes = [ctypes.py_object, _lib.DLDevice, ctypes.c_uint32, ctypes.POINTER(_lib.Stream)]
    fn.restype = ctypes.c_int32
    s = _lib.Stream()
    with pytest.raises(KeyboardInterrupt):
        # ctypes raises the exception the call left set once the call returns.
        st = fn(Interrupting(), _lib.DLDevice(CUDA, 0), 0, byref(s))
        pytest.fail(f"returned {st} with no exception set")
    st = fn(Raising(), _lib.DLDevice(CUDA, 0), 0, byref(s))
    assert st == status("INVALID_STREAM_TYPE"), lib.dlpack_last_error_message()
