"""Issue 25 against the real frameworks (run by scripts/test frameworks in the framework venv).

The exchange tables of PyTorch and PaddlePaddle give the same tensors as their ``__dlpack__``;
our Tensor's table serves tvm-ffi; PaddlePaddle's ``(kDLCPU, None)`` device answer; a
``torch.Tensor`` subclass's ``__dlpack__`` override is called; legacy-only producers and
consumers round-trip through the package in place; a stated read-only reaches them as a copy.
"""
import ctypes
from ctypes import byref

import numpy as np
import pytest

import frameworks as fw
from frameworks import dh, jax, jnp, paddle, tf, torch, tvm_ffi, wp
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib

EXCHANGE = _lib.IMPORTED_EXCHANGE_API
CASES = [(dt, lay) for dt in fw.DTYPES for lay in fw.LAYOUTS]


def _facts(t):
    f = fw.facts_of_tensor(t)
    f.update(readonly=t.readonly, origin=t.readonly_origin, device=tuple(t.device))
    return f


@pytest.mark.parametrize("producer", ["torch", "paddle"])
@pytest.mark.parametrize("dtype,layout", CASES)
def test_exchange_table_gives_what_dlpack_gives(producer, dtype, layout):
    try:
        x = fw.PRODUCERS[producer](dtype, layout)
    except fw.Unsupported as e:
        pytest.skip(str(e))
    try:
        via_dlpack = dh.import_tensor(x, use_exchange_api=False)
    except Exception as e:
        with pytest.raises(type(e)):
            dh.import_tensor(x)
        return
    # A PyTorch complex tensor may carry the conjugate bit, and is_conj() may run Python code,
    # which must not run after the table exported: its export is released, __dlpack__ answers.
    table_kept = not (producer == "torch" and str(dtype).startswith("complex"))
    with via_dlpack, dh.import_tensor(x) as via_table:
        assert bool(via_table.how & EXCHANGE) == table_kept and not via_dlpack.how & EXCHANGE
        assert _facts(via_table) == _facts(via_dlpack)


def test_our_table_serves_tvm_ffi():
    """tvm-ffi converts a Tensor argument through our table (``managed_tensor_from_py_object``)
    and hands tensors to a callback as our Tensor (``managed_tensor_to_py_object``)."""
    assert hasattr(dh.Tensor, "__dlpack_c_exchange_api__")
    src = np.arange(12.0).reshape(3, 4)[:, 1::2]
    seen = []
    echo = tvm_ffi.convert(lambda a: seen.append(a) or a)
    with dh.import_tensor(src) as t:
        out = echo(t)
        assert isinstance(seen[0], tvm_ffi.Tensor)
        with dh.import_tensor(out) as back:
            assert back.data_ptr + back.byte_offset == src.ctypes.data
            assert back.shape == (3, 2) and back.strides == (4, 2)
    got = []
    as_ours = tvm_ffi.convert_func(lambda a: got.append(a), tensor_cls=dh.Tensor)
    as_ours(tvm_ffi.from_dlpack(src))
    assert isinstance(got[0], dh.Tensor)
    np.testing.assert_array_equal(np.from_dlpack(got[0]), src)


def test_paddle_cpu_device_id_none():
    x = paddle.arange(6, dtype="float32")
    assert x.__dlpack_device__()[1] is None  # what Paddle 3.3 ships
    assert dh.device(x) == (1, 0)
    assert dh.is_cpu_accessible(x)
    out = _lib.DLDevice()
    assert lib.dlpack_object_get_device(x, byref(out)) == 0
    assert (out.device_type, out.device_id) == (1, 0)
    # and Paddle -> JAX, which fails directly on the None, works through the package
    got = jax.dlpack.from_dlpack(dh.import_tensor(x))
    np.testing.assert_array_equal(np.asarray(got), np.arange(6, dtype=np.float32))


def test_torch_subclass_override_is_called():
    calls = []

    class Logged(torch.Tensor):
        def __dlpack__(self, *args, **kwargs):
            calls.append(kwargs)
            return super().__dlpack__(*args, **kwargs)

    class Plain(torch.Tensor):
        pass

    with dh.import_tensor(torch.arange(4.0).as_subclass(Logged)) as t:
        assert not t.how & EXCHANGE
    assert len(calls) == 1
    with dh.import_tensor(torch.arange(4.0).as_subclass(Plain)) as t:
        assert t.how & EXCHANGE  # nothing overridden: the table stands in
    with dh.import_tensor(torch.arange(4.0)) as t:
        assert t.how & EXCHANGE


@pytest.mark.parametrize("make,consume", [
    (lambda: jnp.arange(6.0).reshape(2, 3), jax.dlpack.from_dlpack),
    (lambda: tf.reshape(tf.range(6.0), (2, 3)),
     lambda t: tf.experimental.dlpack.from_dlpack(t.__dlpack__())),
    (lambda: fw.mx.arange(6.0).reshape(2, 3), wp.from_dlpack),
], ids=["jax->jax", "tf->tf", "mlx->warp"])
def test_legacy_round_trip_is_in_place(make, consume):
    x = make()
    with dh.import_tensor(x) as t:
        assert t.readonly_origin == "assumed"
        y = consume(t)
        with dh.import_tensor(y) as back:
            assert back.data_ptr + back.byte_offset == t.data_ptr + t.byte_offset
            np.testing.assert_array_equal(np.from_dlpack(back), np.from_dlpack(t))


def test_stated_read_only_reaches_legacy_consumers_as_a_copy():
    src = np.arange(6.0).reshape(2, 3)
    src.flags.writeable = False
    with pytest.raises(BufferError):  # NumPy's own policy: refused
        jax.dlpack.from_dlpack(src)
    with dh.import_tensor(src) as t:
        got = jax.dlpack.from_dlpack(t)  # jax asks for the legacy struct: a copy
        np.testing.assert_array_equal(np.asarray(got), src)
        with dh.import_tensor(got) as g:
            assert g.data_ptr != src.ctypes.data
        with pytest.raises(BufferError):
            t.__dlpack__(copy=False)


def test_legacy_writable_with_a_real_legacy_producer():
    a = wp.array(np.zeros(4, dtype=np.float32), device="cpu")
    with dh.import_tensor(a) as t:
        assert t.readonly and t.readonly_origin == "assumed"
        assert not np.from_dlpack(t).flags.writeable
    with dh.import_tensor(a, legacy_writable=True) as t:
        assert not t.readonly
        view = np.from_dlpack(t)
        view[1] = 5.0  # the caller asserted Warp's memory is writable
    assert a.numpy()[1] == 5.0


def test_versions_are_the_pinned_ones():
    pins = {}
    with open(__file__.rsplit("/", 2)[0] + "/scripts/frameworks-requirements.txt") as f:
        for line in f:
            if "==" in line and not line.startswith("#"):
                name, version = line.strip().split("==")
                pins[name.lower().replace("_", "-")] = version
    for name, key in [("torch", "torch"), ("jax", "jax"), ("tensorflow", "tensorflow-cpu"),
                      ("paddle", "paddlepaddle"), ("onnxruntime", "onnxruntime"),
                      ("pyarrow", "pyarrow"), ("numpy", "numpy")]:
        assert fw.VERSIONS[name].split("+")[0] == pins[key], (name, fw.VERSIONS[name], pins[key])


def test_matrix_survives_an_abort_and_counts_it_lost(tmp_path):
    """The matrix runs jobs in worker processes: a consumer that aborts the process on the
    bridged path is recorded as that call's failure ("Abort"), the run goes on, and the pair is
    lost (exit 1)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, DH_MATRIX_PRODUCERS="numpy", DH_MATRIX_CONSUMERS="abort-selftest",
               DH_MATRIX_DTYPES="float32", DH_MATRIX_LAYOUTS="contiguous,strided")
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, os.path.join(here, "matrix.py")], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    out = r.stdout
    assert "worker aborts (isolated" in out
    lost = int(out.split("total: same ")[1].split("lost ")[1].split(",")[0])
    aborts = int(out.split("worker aborts (isolated, counted as failures of that one call): ")[1].split()[0])
    assert lost == 2 and aborts == 2, out[-3000:]
