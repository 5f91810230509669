"""Issue 34 items 2 and 4: what the consumer asks reaches the producer (peer case 57: a oneAPI
queue object as `stream`), and what the producer answers is checked against the request (peer
case 58: `dl_device` ignored, `copy=False` answered with a copy). A producer whose
`__dlpack_device__` disagrees with its tensor is imported as its tensor says (decided: the
import never asks `__dlpack_device__`; the tensor's `device` is what its memory is)."""
import ctypes
from ctypes import POINTER, byref, c_void_p

import pytest

import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib
from producers import Counter, take
from test_oneapi_stream import SyclQueueLike


def _capsule_on(counter, device, flags=0):
    mt = counter.versioned(flags=flags)
    mt.contents.dl_tensor.device = _lib.DLDevice(*device)
    out = c_void_p()
    assert lib.dlpack_capsule_new(mt, byref(out)) == 0
    return take(out)


class Recording:
    """A producer on `device` that records every `__dlpack__` keyword set it receives."""

    def __init__(self, device=(14, 0), answer=None, flags=0):
        self.device, self.answer, self.flags = device, answer or device, flags
        self.counter = Counter()
        self.calls = []

    def __dlpack__(self, **kw):
        self.calls.append(kw)
        return _capsule_on(self.counter, self.answer, self.flags)

    def __dlpack_device__(self):
        return self.device


def test_case_57_queue_object_reaches_the_producer_unchanged():
    q = SyclQueueLike(ctypes.addressof(ctypes.create_string_buffer(16)))
    # import_tensor
    p = Recording()
    with dh.import_tensor(p, stream=q) as t:
        assert t.device == (14, 0)
    assert p.calls[-1]["stream"] is q
    # the C request: dlpack_object_import with request->stream = the object
    p = Recording()
    req = _lib.ImportRequest()
    req.stream = q
    out = POINTER(_lib.DLManagedTensorVersioned)()
    assert lib.dlpack_object_import(p, byref(req), byref(out), None) == 0
    assert p.calls[-1]["stream"] is q
    lib.dlpack_tensor_delete(out)
    # Tensor.__dlpack__ of a kDLOneAPI Tensor takes it (decoded by the library)
    with dh.import_tensor(Recording()) as t:
        cap = t.__dlpack__(stream=q, max_version=(1, 3))
        with dh.import_tensor(cap) as v:
            assert v.device == (14, 0)
    assert q.calls >= 1
    # Integers keep their checks; other objects are still TypeError before the producer.
    p = Recording()
    for bad, exc in (("x", TypeError), (1.5, TypeError), (True, TypeError), (2**63, ValueError)):
        with pytest.raises(exc, match="stream"):
            dh.import_tensor(p, stream=bad)
    assert p.calls == []


def test_case_58_dl_device_ignored_by_the_producer_is_refused():
    p = Recording(device=(2, 0))  # ignores dl_device, answers CUDA
    with pytest.raises(BufferError, match=r"dl_device \(1, 0\).*\(2, 0\).*UNSUPPORTED_DEVICE"):
        dh.import_tensor(p, dl_device=(1, 0))
    assert p.calls[-1]["dl_device"] == (1, 0)
    assert p.counter.calls == 1 and not p.counter.live  # released once
    # C: the same status
    out = POINTER(_lib.DLManagedTensorVersioned)()
    p = Recording(device=(2, 0))
    req = _lib.ImportRequest()
    req.has_dl_device = True
    req.dl_device = _lib.DLDevice(1, 0)
    st = lib.dlpack_object_import(p, byref(req), byref(out), None)
    assert lib.dlpack_status_string(st) == b"UNSUPPORTED_DEVICE" and p.counter.calls == 1
    # A producer that answers what was asked is imported.
    p = Recording(device=(1, 0))
    with dh.import_tensor(p, dl_device=(1, 0)) as t:
        assert t.device == (1, 0)


def test_case_58_copy_false_answered_with_a_copy_is_refused():
    p = Recording(device=(1, 0), flags=2)  # IS_COPIED
    with pytest.raises(BufferError, match="copy=False.*IS_COPIED.*COPY_FORBIDDEN"):
        dh.import_tensor(p, copy=False)
    assert p.counter.calls == 1
    # copy=None and copy=True accept the producer's copy.
    for copy in (None, True):
        with dh.import_tensor(Recording(device=(1, 0), flags=2), copy=copy) as t:
            assert t.flags & 2


def test_case_58_device_answers_that_disagree():
    """`__dlpack_device__` says CUDA 0, the tensor says CUDA 1 (a hard-coded 0): the import
    takes the tensor's device; `dh.device(obj)` reports what the method says."""
    p = Recording(device=(2, 0), answer=(2, 1))
    with dh.import_tensor(p) as t:
        assert t.device == (2, 1)
    assert dh.device(p) == (2, 0)
    assert "stream" not in p.calls[-1]
