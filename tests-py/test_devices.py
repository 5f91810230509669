"""Issue 22 on the Python side: one device rule and one dtype rule, the C library's.

Peer case 54 (pytorch/pytorch #181140: an index-less device became ``device_id = -1``): no
negative device id is accepted, created or returned, by ``dh.Device``, ``import_tensor(dl_device=)``,
``Tensor.__dlpack__(dl_device=)``, ``dh.device()`` or the C producer helpers. Peer case 55
(NVIDIA/TensorRT-Incubator PR #600): ``dlpack_capsule_new_view`` refuses device types DLPack 1.3
does not assign unless the caller opts in, while a tensor imported on such a type still passes
through the package. ``dh.DType`` / ``dh.Device`` ask the C library instead of restating its rules.
"""
import ctypes
from ctypes import POINTER, byref, c_int64, c_void_p

import numpy as np
import pytest

import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib
from producers import Counter, take

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
ALLOW_UNASSIGNED_TYPE = 0x1  # DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE
CREATE_ALLOW_UNASSIGNED_DEVICE = 2**63  # DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE


def status(name):
    return next(code for code in range(200) if lib.dlpack_status_string(code).decode() == name)


class DeviceProducer:
    """A producer whose __dlpack_device__ answers a fixed pair."""

    def __init__(self, pair):
        self.pair = pair

    def __dlpack_device__(self):
        return self.pair

    def __dlpack__(self, **kw):
        return np.arange(3.0).__dlpack__(**kw)


def test_case_54_negative_device_ids_are_refused():
    for pair in [(14, -1), (2, -1), (1, -1), (99, INT32_MIN)]:
        with pytest.raises(ValueError, match="INVALID_DEVICE"):
            dh.Device(pair)
        with pytest.raises(ValueError, match=r"dl_device.*INVALID_DEVICE"):
            dh.import_tensor(np.arange(3.0), dl_device=pair)
        with dh.import_tensor(np.arange(3.0)) as t, pytest.raises(ValueError, match="INVALID_DEVICE"):
            t.__dlpack__(dl_device=pair)
        with pytest.raises(ValueError, match="INVALID_DEVICE"):
            dh.device(DeviceProducer(pair))
        out = _lib.PV()
        shape = (c_int64 * 1)(3)
        arr = np.arange(3.0)
        s = lib.dlpack_tensor_create(arr.ctypes.data, _lib.DLDevice(*pair), 1, shape, None,
                                     _lib.DLDataType(2, 64, 1), 0, 0, _lib.ReleaseFn(), None, byref(out))
        assert s == status("INVALID_DEVICE") and not out
        assert lib.dlpack_status_python_exception(s) == b"ValueError"
    # The same paths take every non-negative id, and unknown types pass through consumers.
    assert dh.Device((14, 0)) == (14, 0) and dh.Device((99, 3)) == (99, 3)
    assert dh.Device((99, 3)).name is None and str(dh.Device((99, 3))) == "(99, 3)"
    assert dh.device(DeviceProducer((19, 2))) == (19, 2)


def _view(arr, device, flags=0):
    dl = _lib.DLTensor()
    shape = (c_int64 * 1)(arr.size)
    dl.data, dl.device, dl.ndim = arr.ctypes.data, _lib.DLDevice(*device), 1
    dl.dtype, dl.shape = _lib.DLDataType(2, 64, 1), ctypes.cast(shape, POINTER(c_int64))
    out = c_void_p()
    s = lib.dlpack_capsule_new_view(byref(dl), flags, arr, _lib.EXPORT_VERSIONED, byref(out))
    return s, (take(out) if s == 0 else None)


def test_case_55_new_view_refuses_unassigned_device_types():
    arr = np.arange(4.0)
    for t in (0, 5, 6, 19, 20, 99, -3):
        s, cap = _view(arr, (t, 0))
        assert s == status("INVALID_DEVICE") and cap is None, t
        assert "DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE" in lib.dlpack_last_error_message().decode()
        s, cap = _view(arr, (t, 0), CREATE_ALLOW_UNASSIGNED_DEVICE)
        assert s == 0, lib.dlpack_last_error_message()
        res = _lib.PV()
        assert lib.dlpack_capsule_consume(cap, byref(res)) == 0
        assert res.contents.dl_tensor.device.device_type == t and res.contents.flags == 0
        lib.dlpack_tensor_delete(res)
    s, _ = _view(arr, (1, -1), CREATE_ALLOW_UNASSIGNED_DEVICE)
    assert s == status("INVALID_DEVICE")
    s, cap = _view(arr, (14, 0))
    assert s == 0 and cap is not None
    # A tensor imported on a type DLPack 1.3 does not assign (JAX's kDLTPU 19) re-exports
    # unchanged: the package passes what it received through.
    c = Counter()
    mt = c.versioned()
    mt.contents.dl_tensor.device = _lib.DLDevice(19, 1)
    out = c_void_p()
    assert lib.dlpack_capsule_new(mt, byref(out)) == 0
    with dh.import_tensor(take(out)) as t:
        assert t.device == (19, 1) and t.__dlpack_device__() == (19, 1)
        with dh.import_tensor(t.__dlpack__(max_version=(1, 3))) as again:
            assert again.device == (19, 1)


def _c_dtype_name(code, bits, lanes, buf=ctypes.create_string_buffer(32)):
    n = ctypes.c_size_t()
    s = lib.dlpack_dtype_format(_lib.DLDataType(code, bits, lanes), buf, 32, byref(n))
    return buf.value.decode() if s == 0 else None


def test_dtype_follows_the_c_rule_for_every_code_and_bit_width():
    """Every dtype code and bit width (and lanes 0, 1, 4): DType((code, bits, lanes)) constructs
    exactly when dlpack_dtype_format names it, with that name (issue 22 item 7)."""
    mismatches = []
    for code in range(256):
        for bits in range(256):
            for lanes in (0, 1, 4):
                want = _c_dtype_name(code, bits, lanes)
                try:
                    d = dh.DType((code, bits, lanes))
                except ValueError as e:
                    if want is not None or "INVALID_DTYPE" not in str(e):
                        mismatches.append((code, bits, lanes, want, str(e)))
                    continue
                if want is None or str(d) != want or d.name != want:
                    mismatches.append((code, bits, lanes, want, str(d)))
    assert not mismatches, mismatches[:10]
    for bad in [(2, 64, 0), (2, 7, 1), (99, 8, 1)]:
        with pytest.raises(ValueError, match="INVALID_DTYPE"):
            dh.DType(bad)


def test_device_follows_the_c_rule():
    """Device((type, id)) constructs exactly when dlpack_device_check (consumer rule: unknown
    types pass) accepts it, and its name is dlpack_device_format's (issue 22 item 7)."""
    buf = ctypes.create_string_buffer(32)
    for t in list(range(-2, 26)) + [99, INT32_MIN, INT32_MAX]:
        for i in (INT32_MIN, -1, 0, 1, INT32_MAX):
            want = lib.dlpack_device_check(_lib.DLDevice(t, i), ALLOW_UNASSIGNED_TYPE) == 0
            try:
                d = dh.Device((t, i))
            except ValueError:
                assert not want, (t, i)
                continue
            assert want, (t, i)
            named = lib.dlpack_device_format(_lib.DLDevice(t, i), buf, 32, None) == 0
            assert d.name == (buf.value.decode() if named else None), (t, i)


def test_raise_status_names_an_unknown_status():
    with pytest.raises(ValueError):
        dh.DType("float31")  # an unrelated earlier failure on this thread
    with pytest.raises(dh.DLPackHelpersError) as e:
        dh.raise_status(999)
    assert "unknown status 999" in str(e.value) and "float31" not in str(e.value)
    assert dh.raise_status(0) is None


def test_raise_status_attaches_only_the_message_of_that_status():
    """Issue 34 item 6: raise_status(code) attached this thread's last message whatever status
    it came from; now only a message whose failing call returned `code` goes with it."""
    import ctypes
    lib = dh.lib
    err = _lib.DLDataType()
    assert lib.dlpack_dtype_parse(b"float31", ctypes.byref(err)) == 35  # UNKNOWN_NAME, names float31
    with pytest.raises(BufferError) as e:
        dh.raise_status(29)  # NOT_CONTIGUOUS (a BufferError): not what that call returned
    text = str(e.value)
    assert "float31" not in text and "NOT_CONTIGUOUS" in text, text
    assert "UNKNOWN_NAME" in text and "no message" in text, text
    with pytest.raises(ValueError) as e:
        dh.raise_status(35)  # the status that call returned: its message
    assert "float31" in str(e.value), str(e.value)
    # A thread with no failure has no message for any status.
    import threading
    out = {}

    def fresh():
        try:
            dh.raise_status(35)
        except ValueError as x:
            out["text"] = str(x)

    t = threading.Thread(target=fresh)
    t.start()
    t.join()
    assert "float31" not in out["text"] and "no failing call" in out["text"], out
