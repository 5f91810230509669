"""The producer side of the package: ``Tensor.__dlpack__`` follows the library's export plan
(``dlpack_export_request_resolve``), one branch per test. Real NumPy arrays as the source; test
doubles only for device types this machine does not have (the memory is host memory, read only
where the plan says host code may)."""
import ctypes
from ctypes import byref, c_void_p

import numpy as np
import pytest

import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib
from producers import Counter, take


def _on_device(device_type):
    """A Tensor over four float64 host values (0..3) whose managed tensor reports
    ``(device_type, 0)``, and the Counter that owns it."""
    c = Counter()
    mt = c.versioned()
    mt.contents.dl_tensor.device = _lib.DLDevice(device_type, 0)
    out = c_void_p()
    assert lib.dlpack_capsule_new(mt, byref(out)) == 0
    return dh.import_tensor(take(out)), c


def _is_legacy(capsule) -> bool:
    return '"dltensor"' in repr(capsule)


# ---------------------------------------------------------------- struct and version


def test_export_struct_and_version_follow_the_plan():
    with dh.import_tensor(np.arange(3.0)) as t:
        for mv, legacy in [(None, True), ((0, 8), True), ((1, 0), False), ((1, 3), False), ((2, 0), False)]:
            cap = t.__dlpack__(max_version=mv)
            assert _is_legacy(cap) == legacy, mv
            with dh.import_tensor(cap) as v:
                if not legacy:
                    assert v.version == (1, 3)  # the producer's own version, whatever the consumer's minor
                assert v.data_ptr == t.data_ptr  # a view: no copy


def test_case_18_read_only_view_is_never_legacy_but_a_copy_may_be():
    arr = np.arange(3.0)
    arr.setflags(write=False)
    with dh.import_tensor(arr) as t:
        assert t.readonly
        with pytest.raises(BufferError, match="read-only"):
            t.__dlpack__(copy=False)
        implicit = t.__dlpack__()  # copy=None: a copy (issue 25), never the read-only memory
        assert _is_legacy(implicit)
        np.testing.assert_array_equal(np.from_dlpack(_Cap(implicit)), arr)
        cap = t.__dlpack__(copy=True)  # a fresh, writable copy: the legacy struct can carry it
        assert _is_legacy(cap)
        np.testing.assert_array_equal(np.from_dlpack(_Cap(cap)), arr)


class _Cap:
    """Hands a ready capsule to ``np.from_dlpack``."""

    def __init__(self, cap, device=(1, 0)):
        self.cap, self.device = cap, device

    def __dlpack__(self, **kw):
        return self.cap

    def __dlpack_device__(self):
        return self.device


# ---------------------------------------------------------------- copy


@pytest.mark.parametrize("make", [
    lambda: np.arange(12.0).reshape(3, 4),                 # compact: one memmove
    lambda: np.arange(24.0).reshape(4, 6)[::2, 1:5],       # contiguous rows
    lambda: np.arange(24.0).reshape(4, 6)[::-2, ::-3],     # single elements, negative strides
    lambda: np.arange(24, dtype=np.int16).reshape(2, 3, 4).transpose(2, 0, 1),
    lambda: np.array(7.5),                                 # 0-d
    lambda: np.zeros((0, 3)),                              # empty
    lambda: np.arange(6, dtype=np.uint8).reshape(6, 1)[::2],
])
def test_case_47_copy_true_copies_and_sets_is_copied(make):
    arr = make()
    with dh.import_tensor(arr) as t:
        cap = t.__dlpack__(max_version=(1, 3), copy=True)
        with dh.import_tensor(cap) as v:
            assert v.flags & _lib.FLAG_IS_COPIED
            assert v.device == (1, 0) and v.shape == arr.shape and v.is_contiguous()
            assert arr.size == 0 or v.data_ptr != t.data_ptr
            got = np.from_dlpack(v)
            np.testing.assert_array_equal(got, arr)
            assert got.dtype == arr.dtype
        legacy = t.__dlpack__(copy=True)  # legacy copies copy too (no flags to say so)
        assert _is_legacy(legacy)
        np.testing.assert_array_equal(np.from_dlpack(_Cap(legacy)), arr)


def test_case_47_copy_outlives_the_tensor_and_the_source():
    arr = np.arange(5.0)
    t = dh.import_tensor(arr)
    copied = np.from_dlpack(t, copy=True)  # NumPy passes copy=True to __dlpack__
    t.release()
    arr[:] = -1
    del arr
    np.testing.assert_array_equal(copied, np.arange(5.0))


def test_case_47_copy_false_and_none_share():
    arr = np.arange(4.0)
    with dh.import_tensor(arr) as t:
        for copy in (None, False):
            with dh.import_tensor(t.__dlpack__(max_version=(1, 3), copy=copy)) as v:
                assert v.data_ptr == t.data_ptr and not v.flags & _lib.FLAG_IS_COPIED


# ---------------------------------------------------------------- dl_device


def test_case_47_dl_device_cpu_tensor():
    arr = np.arange(4.0)
    with dh.import_tensor(arr) as t:
        with dh.import_tensor(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=False)) as v:
            assert v.device == (1, 0) and v.data_ptr == t.data_ptr
        for dev in [(2, 0), (1, 1), (14, 0)]:
            with pytest.raises(BufferError, match="UNSUPPORTED_DEVICE"):
                t.__dlpack__(max_version=(1, 3), dl_device=dev)


def test_case_47_host_accessible_memory_is_served_to_the_cpu_in_place():
    t, c = _on_device(3)  # kDLCUDAHost: host-accessible
    with t:
        assert t.device == (3, 0)
        for copy in (None, False):
            with dh.import_tensor(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=copy)) as v:
                assert v.device == (1, 0) and v.data_ptr == t.data_ptr
                assert not v.flags & _lib.FLAG_IS_COPIED
                np.testing.assert_array_equal(np.from_dlpack(v), np.arange(4.0))
        with dh.import_tensor(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=True)) as v:
            assert v.device == (1, 0) and v.data_ptr != t.data_ptr and v.flags & _lib.FLAG_IS_COPIED
            np.testing.assert_array_equal(np.from_dlpack(v), np.arange(4.0))
        with dh.import_tensor(t.__dlpack__(max_version=(1, 3))) as v:  # its own device: a view
            assert v.device == (3, 0) and v.data_ptr == t.data_ptr
        # copy=True on its own device means pinned memory: this package cannot allocate that.
        # The refusal names the remedy that works (issue 34): a CPU copy with dl_device=(1, 0),
        # which the lines above show succeeds; not "no dl_device", which gives a view.
        with pytest.raises(BufferError, match="to the CPU only") as e:
            t.__dlpack__(max_version=(1, 3), copy=True)
        assert "host-accessible, so pass dl_device=(1, 0) with copy=True" in str(e.value), str(e.value)


def test_case_47_device_memory_refusals():
    t, c = _on_device(2)  # kDLCUDA: the host cannot read it (never read here)
    with t:
        with pytest.raises(BufferError, match="COPY_FORBIDDEN"):
            t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=False)
        for copy in (None, True):  # the plan copies; this package cannot copy device memory
            with pytest.raises(BufferError, match="to the CPU only") as e:
                t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=copy)
            # No CPU copy advice for memory the host cannot read.
            assert "not host-accessible" in str(e.value) and "dl_device=(1, 0)" not in str(e.value), str(e.value)
        with pytest.raises(ValueError, match="INVALID_STREAM"):  # a CPU export takes stream None
            t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), stream=1)
        with dh.import_tensor(t.__dlpack__(max_version=(1, 3), dl_device=(2, 0))) as v:
            assert v.device == (2, 0) and v.data_ptr == t.data_ptr


# ---------------------------------------------------------------- stream


def test_case_23_case_28_stream_is_checked_for_the_device():
    with dh.import_tensor(np.arange(2.0)) as t:
        for s in (-1, 0, 1, 5):  # kDLCPU takes only None (array API)
            with pytest.raises(ValueError, match="INVALID_STREAM"):
                t.__dlpack__(max_version=(1, 3), stream=s)
        with pytest.raises(TypeError):
            t.__dlpack__(stream="1")
        with pytest.raises(ValueError, match="int64"):
            t.__dlpack__(stream=2**63)
    t, c = _on_device(2)
    with t:
        for s in (-1, 1, 2, 0x7F00_1234):
            with dh.import_tensor(t.__dlpack__(max_version=(1, 3), stream=s)) as v:
                assert v.device == (2, 0)
        for s in (0, -2):  # 0 is ambiguous on CUDA
            with pytest.raises(ValueError, match="INVALID_STREAM"):
                t.__dlpack__(max_version=(1, 3), stream=s)
