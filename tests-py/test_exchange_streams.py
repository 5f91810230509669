"""Peer case 53 (apache/tvm-ffi PR #690, #466): stream ordering across the C exchange API.

A device tensor imported through a producer's table (the no-sync path) is ordered on the
producer's current work stream; `import_tensor` records it, and a later `__dlpack__(stream=s)`
makes `s` wait for it (one event record on the producer's stream, one stream wait on `s`). The
package's own table names the stream its data is ordered on (CUDA: the legacy default stream,
after waiting for a recorded stream), NULL only for kDLCPU, -1 with `BufferError` where it cannot
name one.

The device runtimes are the test doubles `tests-c/fake/fake_cuda.c` and `fake_hip.c`, built here
and loaded through the library's environment overrides in a child process (the override is read
when the runtime is first looked for, so each run gets a fresh process)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

CHILD = r'''
import ctypes, json, os, sys
from ctypes import byref, c_void_p
import numpy as np
import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib

DEV, REC, WAIT = int(sys.argv[1]), sys.argv[2], sys.argv[3]
fake = ctypes.CDLL(os.environ["FAKE_RUNTIME"])  # the same object the library opened
fake.fake_count.restype = ctypes.c_long
PRODUCER_STREAM, CONSUMER_STREAM = 0x1234, 0x5678
buf = np.arange(4.0)
asked, dunder = [], []
answer = {"stream": PRODUCER_STREAM}
PV = ctypes.POINTER(_lib.DLManagedTensorVersioned)
capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.argtypes = [c_void_p, ctypes.c_char_p, c_void_p]
capsule_new.restype = ctypes.py_object
get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
get_pointer.argtypes, get_pointer.restype = [ctypes.py_object, ctypes.c_char_p], c_void_p


def work(device_type, device_id, out):
    asked.append((device_type, device_id))
    out[0] = answer["stream"]
    return 0


def export(obj_ptr, out):
    # A device tensor over host memory: the fakes never dereference data.
    shape = (ctypes.c_int64 * 1)(4)
    res = PV()
    st = lib.dlpack_tensor_create(buf.ctypes.data, _lib.DLDevice(DEV, 0), 1, shape, None,
                                  _lib.DLDataType(2, 64, 1), 0, 0, _lib.ReleaseFn(), None, byref(res))
    if st:
        return -1
    out[0] = res
    return 0


WORK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(c_void_p))(work)
api = _lib.DLPackExchangeAPI()
api.header.version = _lib.DLPackVersion(1, 3)
api.managed_tensor_from_py_object_no_sync = type(api.managed_tensor_from_py_object_no_sync)(export)
api.current_work_stream = ctypes.cast(WORK, c_void_p).value
NAME = ctypes.create_string_buffer(b"dlpack_exchange_api")


class Producer:
    __dlpack_c_exchange_api__ = capsule_new(ctypes.addressof(api), NAME, None)

    def __dlpack__(self, **kw):
        dunder.append(kw)
        return buf.__dlpack__(**kw)

    def __dlpack_device__(self):
        return (1, 0)


def last(name):
    a, b = c_void_p(), c_void_p()
    fake.fake_last(name.encode(), byref(a), byref(b))
    return a.value, b.value


out = {}
t = dh.import_tensor(Producer())
out["source"], out["asked"], out["dunder"] = t.source, asked[:], len(dunder)

fake.fake_reset_counts()
t.__dlpack__(stream=CONSUMER_STREAM, max_version=(1, 3))
out["record"], out["wait"] = fake.fake_count(REC.encode()), fake.fake_count(WAIT.encode())
out["record_stream"], out["wait_stream"] = last(REC)[1], last(WAIT)[0]
out["same_event"] = last(REC)[0] == last(WAIT)[1]

fake.fake_reset_counts()
t.__dlpack__(stream=-1, max_version=(1, 3))
out["nosync_record"] = fake.fake_count(REC.encode())

# The package's own table: what it names per device, and its no-sync export of this tensor.
table = ctypes.cast(get_pointer(dh.Tensor.__dlpack_c_exchange_api__, b"dlpack_exchange_api"),
                    ctypes.POINTER(_lib.DLPackExchangeAPI))
ours = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(c_void_p))(
    table.contents.current_work_stream)
answers = {}
for dev in [(1, 0), (2, 0), (3, 0), (13, 0), (10, 0), (14, 0)]:
    s = c_void_p(0x77)
    try:
        rc = ours(dev[0], dev[1], byref(s))
        answers[str(dev)] = [rc, s.value]
    except BufferError as e:
        answers[str(dev)] = ["BufferError", str(e)]
out["ours"] = answers
fake.fake_reset_counts()
req = _lib.ImportRequest()
req.flags = _lib.IMPORT_EXCHANGE_API
mt, how, stream = PV(), ctypes.c_uint32(), _lib.Stream()
st = lib.dlpack_object_import_with_stream(t, byref(req), byref(mt), byref(how), byref(stream))
out["reimport"] = [st, how.value, stream.kind, stream.handle]
out["reimport_wait_stream"] = last(WAIT)[0] if fake.fake_count(WAIT.encode()) else None
lib.dlpack_tensor_delete(mt)

# A table that answers NULL for this device names no stream: the import goes through __dlpack__.
answer["stream"] = None
before = len(dunder)
t2 = dh.import_tensor(Producer())
out["null_source"], out["null_dunder"] = t2.source, len(dunder) - before
print("RESULT " + json.dumps(out))
'''


def _build(name: str, tmp: Path) -> Path:
    cc = os.environ.get("CC") or shutil.which("cc")
    if not cc:
        pytest.skip("no C compiler to build the fake runtime")
    out = tmp / f"{name}.so"
    subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", str(out),
                    str(ROOT / "tests-c" / "fake" / f"{name}.c"), "-lpthread"], check=True)
    return out


def _run(tmp_path, fake: str, env_var: str, other_var: str, dev: int, rec: str, wait: str) -> dict:
    so = _build(fake, tmp_path)
    env = dict(os.environ, **{env_var: str(so), other_var: str(tmp_path / "absent.so"), "FAKE_RUNTIME": str(so)})
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    r = subprocess.run([sys.executable, str(script), str(dev), rec, wait], env=env, capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    line = [x for x in r.stdout.splitlines() if x.startswith("RESULT ")]
    assert line, r.stdout + r.stderr
    return json.loads(line[0][len("RESULT "):])


def _check_common(out: dict, dev: int):
    # The no-sync import asked the producer's table for its stream on the tensor's device.
    assert out["source"] == "exchange_api" and out["dunder"] == 0
    assert out["asked"] == [[dev, 0]]
    # The re-export with a consumer stream: one record on the producer's stream, one wait on
    # the consumer's, with the same event.
    assert (out["record"], out["wait"]) == (1, 1), out
    assert out["record_stream"] == 0x1234 and out["wait_stream"] == 0x5678, out
    assert out["same_event"]
    # stream=-1: the consumer asked for no ordering.
    assert out["nosync_record"] == 0
    # The package's table: NULL only for kDLCPU; CUDA's legacy default stream; -1 + BufferError
    # for a device whose stream it cannot name (never NULL).
    ours = out["ours"]
    assert ours["(1, 0)"] == [0, None]
    for cuda in ["(2, 0)", "(3, 0)", "(13, 0)"]:
        assert ours[cuda] == [0, 1], ours
    for other in ["(10, 0)", "(14, 0)"]:
        assert ours[other][0] == "BufferError", ours
    # A producer whose table answers NULL off the CPU names no stream: __dlpack__ is used instead.
    assert out["null_source"] != "exchange_api" and out["null_dunder"] == 1


def test_case_53_no_sync_import_then_export_waits_on_fake_cuda(tmp_path):
    out = _run(tmp_path, "fake_cuda", "DLPACK_HELPERS_CUDA_LIBRARY", "DLPACK_HELPERS_HIP_LIBRARY", 2,
               "cuEventRecord", "cuStreamWaitEvent")
    _check_common(out, 2)
    # Re-imported through the package's own table: it ordered the data onto the stream it names
    # (a wait on the legacy default stream) and named that stream.
    st, how, kind, handle = out["reimport"]
    assert (st, how, kind, handle) == (0, 0x4, 2, 1), out  # IMPORTED_EXCHANGE_API, LEGACY_DEFAULT, 0x1
    assert out["reimport_wait_stream"] == 1


def test_case_53_no_sync_import_then_export_waits_on_fake_hip(tmp_path):
    out = _run(tmp_path, "fake_hip", "DLPACK_HELPERS_HIP_LIBRARY", "DLPACK_HELPERS_CUDA_LIBRARY", 10,
               "hipEventRecord", "hipStreamWaitEvent")
    _check_common(out, 10)
    # The package cannot name a ROCm stream: a re-import through its table falls back to
    # __dlpack__ (whose default stream orders the data), never a tensor with unknown ordering.
    st, how, kind, handle = out["reimport"]
    assert st == 0 and how & 0x4 == 0 and kind == 4, out  # DLPACK_HELPERS_STREAM_DEFAULT
