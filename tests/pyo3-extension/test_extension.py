"""The PyO3 extension of tests/pyo3-extension (dlpack-helpers' `pyo3` feature) against real
producers and consumers: NumPy always, PyTorch when it can be imported (skipped with the reason
otherwise), and the installed dlpack_helpers package when present.

Run by scripts/test.d/58-pyo3.sh, which builds the extension and puts it on PYTHONPATH.
"""

import gc
import sys

import numpy as np
import pytest

import dlpack_rs_ext as ext

try:
    import torch
except ImportError as e:  # noqa: F841 - the reason is printed by the skip marker
    torch = None
    TORCH_MISSING = f"PyTorch is not importable in {sys.executable}: {e}"
else:
    TORCH_MISSING = ""

needs_torch = pytest.mark.skipif(torch is None, reason=TORCH_MISSING or "n/a")


def collect():
    gc.collect()


# ---- import: Rust consumes NumPy ------------------------------------------------------------


def test_numpy_versioned_import_reads_the_elements():
    a = np.arange(10.0)
    assert ext.sum_f64(a) == 45.0
    dtype, device, shape, strides, version, read_only, legacy, retry, _ = ext.inspect(a)
    assert (dtype, device, shape, strides) == ("float64", "cpu:0", [10], [1])
    assert version[0] == 1 and not read_only and not legacy and not retry


def test_numpy_strided_and_2d_metadata():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    dtype, device, shape, strides, *_ = ext.inspect(a)
    assert (dtype, shape, strides) == ("float64", [3, 2], [4, 2])
    with pytest.raises(BufferError, match="NOT_CONTIGUOUS"):
        ext.sum_f64(a)  # as_slice needs C-contiguous elements


def test_any_strides_read_in_row_major_order():
    a = np.arange(12.0).reshape(3, 4)
    for v in (a[::-1], a[:, ::-2], a.T, a[1:, 1::2], np.broadcast_to(np.arange(3.0), (2, 3))):
        assert ext.to_list_f64(v) == v.ravel().tolist(), v


def test_numpy_readonly_is_read_only_and_refuses_writes():
    a = np.arange(4.0)
    a.flags.writeable = False
    *_, read_only, legacy, _, _ = ext.inspect(a)
    assert read_only and not legacy
    with pytest.raises(BufferError, match="READ_ONLY"):
        ext.double_in_place(a)
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_numpy_writable_is_written_in_place():
    a = np.arange(4.0)
    ext.double_in_place(a)
    assert a.tolist() == [0.0, 2.0, 4.0, 6.0]


def test_copy_and_dl_device_reach_the_producer():
    a = np.arange(3.0)
    ext.double_in_place(a, copy=True)  # NumPy exports a copy: the original is untouched
    assert a.tolist() == [0.0, 1.0, 2.0]
    ext.double_in_place(a, copy=False, dl_device=(1, 0))  # no copy, on the CPU: shared memory
    assert a.tolist() == [0.0, 2.0, 4.0]


def test_legacy_capsule_is_read_only_unless_asserted():
    # NumPy without max_version exports the legacy struct: writability unknown -> READ_ONLY.
    a = np.arange(3.0)
    dtype, _, _, _, _, read_only, legacy, _, _ = ext.inspect(a.__dlpack__())
    assert legacy and read_only and dtype == "float64"
    *_, read_only, legacy, _, _ = ext.inspect(a.__dlpack__(), legacy_writable=True)
    assert legacy and not read_only


def test_capsule_with_request_arguments_is_type_error():
    with pytest.raises(TypeError, match="capsule"):
        ext.inspect(np.arange(3.0).__dlpack__(max_version=(1, 0)), max_version=(1, 0))


def test_consumed_capsule_is_refused():
    cap = np.arange(3.0).__dlpack__(max_version=(1, 0))
    ext.inspect(cap)
    with pytest.raises(ValueError, match="CAPSULE_CONSUMED|used_"):
        ext.inspect(cap)


class RaisesOwnError:
    class Boom(Exception):
        pass

    def __dlpack__(self, **kwargs):
        raise RaisesOwnError.Boom("the producer's own message")

    def __dlpack_device__(self):
        return (1, 0)


class OldProducer:
    """A producer whose __dlpack__ predates max_version: a TypeError, then a retry without it."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)


def test_producer_exception_is_kept_unchanged():
    with pytest.raises(RaisesOwnError.Boom, match="the producer's own message"):
        ext.sum_f64(RaisesOwnError())


def test_dlpack_device_query_keeps_the_producer_exception():
    assert ext.device_of(np.arange(2.0)) == (1, 0)

    class BadDevice:
        def __dlpack_device__(self):
            raise RaisesOwnError.Boom("no device for you")

    with pytest.raises(RaisesOwnError.Boom, match="no device for you"):
        ext.device_of(BadDevice())

    class NotAPair:
        def __dlpack_device__(self):
            return "cpu"

    with pytest.raises(TypeError):
        ext.device_of(NotAPair())


def test_missing_dlpack_is_attribute_error():
    with pytest.raises(AttributeError):
        ext.sum_f64(object())


def test_old_producer_is_retried_without_max_version():
    *_, read_only, legacy, retry, _ = ext.inspect(OldProducer(np.arange(3.0)))
    assert retry and legacy and read_only


def test_stream_argument_reaches_the_producer():
    seen = {}

    class Recorder:
        def __dlpack__(self, **kw):
            seen.update(kw)
            return np.arange(2.0).__dlpack__(max_version=kw.get("max_version"))

        def __dlpack_device__(self):
            return (1, 0)

    ext.inspect(Recorder(), stream=-1, max_version=(1, 1))
    assert seen["stream"] == -1 and seen["max_version"] == (1, 1)


# ---- export: Rust produces, NumPy consumes ---------------------------------------------------


def test_capsule_export_to_numpy_releases_the_rust_owner_once():
    before = ext.drops()
    b = np.from_dlpack(ext.arange_export(5))
    assert b.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert b.flags.writeable
    del b
    collect()
    assert ext.drops() == before + 1


def test_raw_capsule_unconsumed_is_released_by_its_destructor():
    before = ext.drops()
    cap = ext.arange_capsule(3)
    assert type(cap).__name__ == "PyCapsule"
    del cap
    collect()
    assert ext.drops() == before + 1


def test_export_object_serves_many_consumers_then_releases_once():
    before = ext.drops()
    x = ext.arange_export(4)
    assert x.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(x)
    b = np.from_dlpack(x)
    a[0] = 42.0  # shared memory: both views see it
    assert b[0] == 42.0
    del x, a
    collect()
    assert ext.drops() == before  # b still holds a share
    del b
    collect()
    assert ext.drops() == before + 1


def test_export_object_legacy_for_a_consumer_without_max_version():
    x = ext.arange_export(3)
    cap = x.__dlpack__()  # no max_version: legacy "dltensor"
    assert "dltensor" in repr(cap) and "versioned" not in repr(cap)
    cap2 = x.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap2)


def test_export_object_request_rules():
    x = ext.arange_export(3)
    with pytest.raises(ValueError, match="INVALID_STREAM"):
        x.__dlpack__(stream=1, max_version=(1, 3))  # CPU: only stream=None
    with pytest.raises(BufferError):
        x.__dlpack__(max_version=(1, 3), copy=True)
    with pytest.raises(BufferError):
        x.__dlpack__(max_version=(1, 3), dl_device=(2, 0))
    with pytest.raises(TypeError):
        x.__dlpack__(stream=True, max_version=(1, 3))
    assert np.from_dlpack(x).tolist() == [0.0, 1.0, 2.0]


def test_roundtrip_numpy_rust_numpy_shares_memory_and_read_only_survives():
    a = np.arange(6.0)
    b = np.from_dlpack(ext.reexport(a))
    b[1] = -1.0
    assert a[1] == -1.0
    r = np.arange(3.0)
    r.flags.writeable = False
    c = np.from_dlpack(ext.reexport(r))
    assert not c.flags.writeable


def test_the_package_imports_the_extension_export():
    dh = pytest.importorskip("dlpack_helpers", reason="the dlpack_helpers package is not installed")
    with dh.import_tensor(ext.arange_export(3)) as t:
        assert np.from_dlpack(t).tolist() == [0.0, 1.0, 2.0]


# ---- PyTorch ----------------------------------------------------------------------------------


@needs_torch
def test_torch_tensor_imports():
    t = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    dtype, device, shape, strides, version, read_only, legacy, _, _ = ext.inspect(t)
    assert (dtype, device, shape, strides) == ("float64", "cpu:0", [2, 3], [3, 1])
    assert ext.sum_f64(t) == 15.0


@needs_torch
def test_torch_consumes_the_rust_export_and_releases_once():
    before = ext.drops()
    t = torch.from_dlpack(ext.arange_export(4))
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    del t
    collect()
    assert ext.drops() == before + 1


@needs_torch
def test_torch_written_in_place_from_rust():
    t = torch.arange(3, dtype=torch.float64)
    ext.double_in_place(t)
    assert t.tolist() == [0.0, 2.0, 4.0]


@needs_torch
def test_torch_tensors_its_dlpack_refuses_are_refused():
    """PyTorch's exchange table stands in for ``__dlpack__`` only where its answer is the same
    (issue 25): a tensor that requires grad or has the conjugate bit gets PyTorch's own
    ``BufferError``, never a writable tensor or unconjugated values."""
    for t in (torch.ones(2, requires_grad=True), torch.tensor([1 + 2j]).conj()):
        with pytest.raises(BufferError) as direct:
            t.__dlpack__(max_version=(1, 3))
        with pytest.raises(BufferError) as got:
            ext.inspect(t)
        assert str(got.value) == str(direct.value)
    if hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        assert ext.inspect(torch.ones(2, 3))[-1]  # an ordinary tensor keeps the table
