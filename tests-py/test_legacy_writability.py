"""Peer case 50 (numpy/numpy #20337) through the package: the legacy ``DLManagedTensor`` cannot say
read-only, so a tensor that arrived through it is read-only in ``Tensor.readonly`` and in every
re-export toward versioned consumers (NumPy arrays, PyArrow tensors, versioned capsules), its
read-only bit is reported as assumed, and it goes back through the legacy struct in place (issue 25:
it states exactly what its producer stated); "came from legacy" is reported for producer objects
and raw capsules alike. A versioned writable tensor stays writable; a stated read-only one reaches
a legacy consumer only as a copy."""
import gc
import warnings

import numpy as np
import pytest

import dlpack_helpers as dh
from expect import until_integrity, until_native_or_integrity
from producers import Counter

pa = pytest.importorskip("pyarrow")

IMPORTED_LEGACY = 0x1  # DLPACK_HELPERS_IMPORTED_LEGACY


class _LegacyOnly(np.ndarray):
    """A producer of the legacy protocol: ``__dlpack__(stream=None)`` without ``max_version``,
    returning a ``"dltensor"`` capsule (writable NumPy memory behind it)."""

    def __dlpack__(self, stream=None):
        return super().__dlpack__(stream=None)


def _legacy_sources():
    """(name, make) pairs: each make() returns something whose import arrives through the
    legacy struct, and the counter that owns it (or None)."""
    def producer_object():
        return np.arange(4.0).view(_LegacyOnly), None

    def raw_capsule():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # NumPy: unversioned export
            return np.arange(4.0).__dlpack__(), None

    def hand_made():
        c = Counter()
        return c.legacy_capsule(), c

    return {"producer_object": producer_object, "raw_capsule": raw_capsule, "hand_made": hand_made}


LEGACY = _legacy_sources()


_RAW = until_native_or_integrity("the origin of a raw capsule is not reported (how is 0)")


@pytest.mark.parametrize("source", [pytest.param(n, marks=[_RAW] if n != "producer_object" else [])
                                    for n in LEGACY])
def test_case_50_legacy_origin_is_reported(source):
    obj, counter = LEGACY[source]()
    with dh.import_tensor(obj) as t:
        assert t.how & IMPORTED_LEGACY
    if counter is not None:
        gc.collect()
        assert counter.calls == 1


@until_integrity("a legacy import is marked writable")
@pytest.mark.parametrize("source", LEGACY)
def test_case_50_legacy_import_is_read_only(source):
    obj, _ = LEGACY[source]()
    with dh.import_tensor(obj) as t:
        assert t.readonly


@until_integrity("a legacy import is re-exported writable")
@pytest.mark.parametrize("source", LEGACY)
def test_case_50_every_re_export_of_a_legacy_import_is_read_only(source):
    obj, counter = LEGACY[source]()
    t = dh.import_tensor(obj)
    a = np.from_dlpack(t)
    assert not a.flags.writeable, "NumPy may write into memory whose producer could not allow it"
    with pytest.raises(ValueError):
        a[0] = 1.0
    assert not pa.Tensor.from_dlpack(t).is_mutable
    with dh.import_tensor(t.__dlpack__(max_version=(1, 3))) as again:
        assert again.readonly
    # issue 25: toward a legacy consumer it goes back in place, stating what its producer stated
    # (nothing), and comes back read-only (assumed) again
    assert t.readonly_origin == "assumed"
    with dh.import_tensor(t.__dlpack__()) as back:
        assert back.data_ptr == t.data_ptr and back.readonly and back.readonly_origin == "assumed"
    t.release()
    del a, t
    gc.collect()
    if counter is not None:
        assert counter.calls == 1


def test_case_50_numpy_is_the_reference():
    """What NumPy itself does with the same legacy producer (peer case 50's expected behaviour)."""
    a = np.from_dlpack(np.arange(4.0).view(_LegacyOnly))
    assert not a.flags.writeable


def test_case_50_versioned_writable_stays_writable():
    src = np.arange(4.0)
    with dh.import_tensor(src) as t:
        assert not t.how & IMPORTED_LEGACY
        assert not t.readonly
        a = np.from_dlpack(t)
        assert a.flags.writeable
        assert pa.Tensor.from_dlpack(t).is_mutable
        with dh.import_tensor(t.__dlpack__(max_version=(1, 3))) as again:
            assert not again.readonly and not again.how & IMPORTED_LEGACY
    a[0] = 7.0
    assert src[0] == 7.0  # the same memory


@until_integrity("a legacy capsule re-imported is marked writable, and its origin not reported")
def test_case_50_a_writable_tensor_sent_through_legacy_comes_back_read_only():
    with dh.import_tensor(np.arange(4.0)) as t:
        legacy = t.__dlpack__()  # writable memory may leave through the legacy struct ...
    with dh.import_tensor(legacy) as back:  # ... but nothing on the other side can know that
        assert back.how & IMPORTED_LEGACY
        assert back.readonly


def test_case_50_versioned_read_only_stays_read_only():
    src = np.arange(4.0)
    src.flags.writeable = False
    with dh.import_tensor(src) as t:
        assert t.readonly and not t.how & IMPORTED_LEGACY and t.readonly_origin == "stated"
        assert not np.from_dlpack(t).flags.writeable
        assert not pa.Tensor.from_dlpack(t).is_mutable
        with pytest.raises(BufferError):
            t.__dlpack__(copy=False)  # never in place through the legacy struct
        with dh.import_tensor(t.__dlpack__()) as copied:  # copy=None: a copy, its own memory
            assert copied.data_ptr != t.data_ptr
            copied_values = np.from_dlpack(copied)
            np.testing.assert_array_equal(copied_values, src)
