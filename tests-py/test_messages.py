"""Exception messages: a producer's exception arrives unchanged (issue 11: no status tag, no
rewrapping), also through nested imports (a producer that re-exports through import_tensor).
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
    # Issue 11: a producer's exception propagates unchanged (the same type, message and
    # traceback), not rewrapped with a status tag.
    with pytest.raises(BufferError) as e:
        dh.import_tensor(Producer(None, "buffer"))
    assert str(e.value) == "cannot export this"
    assert any(f.name == "__dlpack__" for f in e.traceback)  # the producer's frame is kept
    with pytest.raises(NotImplementedError) as e:
        dh.import_tensor(Producer(None, "notimplemented"))
    assert str(e.value) == "max_version is not supported"


def test_nested_imports_do_not_stack_prefixes():
    with pytest.raises(NotImplementedError) as e:
        dh.import_tensor(_Wrapper(_Wrapper(Producer(None, "notimplemented"))))
    assert str(e.value) == "max_version is not supported"
    with pytest.raises(BufferError) as e:
        dh.import_tensor(_Wrapper(Producer(None, "buffer")))
    assert str(e.value) == "cannot export this"
    # and a working re-exporter keeps its memory alive through the nested views
    arr = np.arange(4.0)
    with dh.import_tensor(_Wrapper(_Wrapper(arr))) as t:
        out = np.from_dlpack(t)
    np.testing.assert_array_equal(out, arr)
