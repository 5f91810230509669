"""Exception messages: a producer's exception type is named once, and nested imports (a producer
that re-exports through import_tensor) do not stack prefixes.
"""
import numpy as np
import pytest

import dlpack_helpers as dh
from producers import Producer


class _Wrapper:
    """A producer whose __dlpack__ goes through import_tensor itself (a re-exporting library)."""

    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, **kw):
        return dh.import_tensor(self.inner).__dlpack__(**kw)

    def __dlpack_device__(self):
        return (1, 0)


def test_exception_type_named_once():
    with pytest.raises(BufferError) as e:
        dh.import_tensor(Producer(None, "buffer"))
    assert str(e.value) == "cannot export this [PRODUCER_BUFFER_ERROR]"
    with pytest.raises(dh.DLPackHelpersError) as e:
        dh.import_tensor(Producer(None, "notimplemented"))
    assert str(e.value) == "NotImplementedError: max_version is not supported [PRODUCER_ERROR]"


def test_nested_imports_do_not_stack_prefixes():
    with pytest.raises(dh.DLPackHelpersError) as e:
        dh.import_tensor(_Wrapper(_Wrapper(Producer(None, "notimplemented"))))
    msg = str(e.value)
    assert msg == "NotImplementedError: max_version is not supported [PRODUCER_ERROR]", msg
    with pytest.raises(BufferError) as e:
        dh.import_tensor(_Wrapper(Producer(None, "buffer")))
    assert str(e.value) == "cannot export this [PRODUCER_BUFFER_ERROR]"
    # and a working re-exporter keeps its memory alive through the nested views
    arr = np.arange(4.0)
    with dh.import_tensor(_Wrapper(_Wrapper(arr))) as t:
        out = np.from_dlpack(t)
    np.testing.assert_array_equal(out, arr)
