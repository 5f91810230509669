"""Argument checking of the public functions: max_version, dl_device and copy are checked (type
and range) before a producer is called, the same way by import_tensor and Tensor.__dlpack__.
"""
import numpy as np
import pytest

import dlpack_helpers as dh
from producers import Producer


@pytest.mark.parametrize("kw,exc", [
    (dict(max_version=(2**40, 0)), ValueError),
    (dict(max_version=(1, 2**32)), ValueError),
    (dict(max_version=(-1, 0)), ValueError),
    (dict(max_version=(0, 0)), ValueError),
    (dict(max_version=(1,)), TypeError),
    (dict(max_version=(1, 2, 3)), TypeError),
    (dict(max_version=[1, 3]), TypeError),
    (dict(max_version=(1.0, 3)), TypeError),
    (dict(max_version="1.3"), TypeError),
    (dict(dl_device=(1,)), TypeError),
    (dict(dl_device=1), TypeError),
    (dict(dl_device=("cpu", 0)), TypeError),
    (dict(dl_device=(2**40, 0)), ValueError),
    (dict(dl_device=(1, -2**31 - 1)), ValueError),
    (dict(copy="yes"), TypeError),
    (dict(copy=1), TypeError),
])
def test_import_arguments_are_checked(kw, exc):
    p = Producer(lambda k: np.arange(2.0).__dlpack__(**k))
    with pytest.raises(exc):
        dh.import_tensor(p, **kw)
    assert p.calls == []  # refused before the producer is called
    if kw.get("max_version") == (0, 0):
        return  # for an exporter (0, 0) is a legal "legacy only"; only the C request reserves it
    with dh.import_tensor(np.arange(2.0)) as t:  # the view's __dlpack__ checks the same way
        with pytest.raises(exc):
            t.__dlpack__(**kw)


def test_valid_arguments_still_work():
    import enum

    class Dev(enum.IntEnum):
        CPU = 1
    arr = np.arange(3.0)
    with dh.import_tensor(arr, max_version=(np.uint32(1), 3), dl_device=(Dev.CPU, 0), copy=np.False_) as t:
        assert t.shape == (3,)
        np.testing.assert_array_equal(np.from_dlpack(t), arr)
    with dh.import_tensor(arr, max_version=(1, 2**32 - 1), copy=False) as t:
        assert t.version[0] == 1


@pytest.mark.parametrize("dev,exc", [((2**40, 0), ValueError), ((1,), TypeError), ((1, 0, 0), TypeError),
                                     (("cuda", 0), TypeError), ((1, 2**31), ValueError)])
def test_is_cpu_accessible_checks_devices(dev, exc):
    with pytest.raises(exc):
        dh.is_cpu_accessible(dev)
    assert dh.is_cpu_accessible((1, 0)) and not dh.is_cpu_accessible((2, 0))
