"""Cross-producer matrix: real producers (NumPy, NumPy through the legacy protocol, PyArrow
tensors and arrays, JAX on CPU when installed) x real consumers (``numpy.from_dlpack``,
``pyarrow.Tensor.from_dlpack``), over every dtype the array API names and the layouts that
break naive consumers. Each consumer takes the producer twice: directly, and through
``dh.import_tensor``; the outcomes must be the same: values, shape, dtype and writability, or
the same exception class when the direct path refuses. Then lifetimes: the producer object stays
alive exactly as long as a view needs it, and is released after (weak references)."""
import gc
import weakref

import numpy as np
import pytest

import dlpack_helpers as dh
from expect import INTEGRITY, NATIVE

pa = pytest.importorskip("pyarrow")
try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "cpu")
except Exception:  # JAX is optional: its tests are skipped (reported) when it does not import
    jax = jnp = None

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", "bfloat16"]
LAYOUTS = ["contiguous", "0-d", "empty", "transposed", "strided", "negative-stride", "broadcast", "read-only"]


def _base(dtype: str, layout: str) -> np.ndarray:
    """A NumPy array of `dtype` (bfloat16: float32 values, converted by the producer) laid out
    as `layout`, with distinct values."""
    real = "float32" if dtype == "bfloat16" else dtype
    x = (np.arange(60) % 7 - 3).reshape(3, 4, 5)
    x = (x % 2).astype(real) if real == "bool" else x.astype(real)
    if real.startswith("complex"):
        x = x + 1j * x[::-1]
    if layout == "contiguous":
        return x
    if layout == "0-d":
        return np.array(x.flat[7])
    if layout == "empty":
        return x[:, :0]
    if layout == "transposed":
        return x.transpose(2, 0, 1)
    if layout == "strided":
        return x[::2, 1::2, ::3]
    if layout == "negative-stride":
        return x[::-1, :, ::-2]
    if layout == "broadcast":
        return np.broadcast_to(x[0, 0], (3, 5))
    if layout == "read-only":
        y = x.copy()
        y.flags.writeable = False
        return y
    raise AssertionError(layout)


class _LegacyOnly(np.ndarray):
    """NumPy memory behind a producer of the legacy protocol: ``__dlpack__(stream=None)`` takes
    no ``max_version`` and returns a ``"dltensor"`` capsule (as NumPy's own test suite does)."""

    def __dlpack__(self, stream=None):
        return super().__dlpack__(stream=None)


def _produce(producer: str, dtype: str, layout: str):
    """The producer object, or pytest.skip when that producer cannot make it at all."""
    if dtype == "bfloat16" and producer != "jax":
        pytest.skip(f"{producer} has no bfloat16")
    x = _base(dtype, layout)
    if producer == "numpy":
        return x
    if producer == "numpy-legacy":
        return x.view(_LegacyOnly)
    if producer == "pyarrow-tensor":
        try:
            return pa.Tensor.from_numpy(x)
        except (pa.ArrowException, ValueError, TypeError) as e:
            pytest.skip(f"pyarrow.Tensor.from_numpy refuses {dtype}/{layout}: {e}")
    if producer == "pyarrow-array":
        if x.ndim != 1 and layout not in ("contiguous", "strided", "empty"):
            pytest.skip("pyarrow arrays are one-dimensional")
        flat = x.reshape(-1)
        try:
            arr = pa.array(flat)
        except (pa.ArrowException, ValueError, TypeError) as e:
            pytest.skip(f"pyarrow.array refuses {dtype}: {e}")
        return arr.slice(3, 11) if layout == "strided" else arr  # a sliced array: a non-zero offset
    if producer == "jax":
        if jnp is None:
            pytest.skip("JAX does not import here")
        return jnp.asarray(x, dtype=jnp.bfloat16 if dtype == "bfloat16" else None)
    raise AssertionError(producer)


def _consume(consumer: str, obj):
    """A summary of what the consumer made of `obj`: values (as NumPy), shape, dtype name and
    writability."""
    if consumer == "numpy":
        y = np.from_dlpack(obj)
        return {"values": np.array(y, copy=True), "shape": y.shape, "dtype": str(y.dtype),
                "writable": bool(y.flags.writeable)}
    if consumer == "pyarrow":
        t = pa.Tensor.from_dlpack(obj)
        return {"values": t.to_numpy().copy(), "shape": tuple(t.shape), "dtype": str(t.type),
                "writable": bool(t.is_mutable)}
    raise AssertionError(consumer)


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # the exception's class is part of the outcome
        return ("raises", type(e).__name__)


def _differences(reference, ours) -> list:
    """What differs between two outcomes (empty when equal)."""
    if reference[0] != ours[0]:
        return [f"{reference} vs {ours}"]
    if reference[0] == "raises":
        return [] if reference[1] in (ours[1], None) else [f"raises {reference[1]} vs {ours[1]}"]
    d, o = reference[1], ours[1]
    out = [f"{k}: {d[k]} vs {o[k]}" for k in ("shape", "dtype", "writable") if d[k] != o[k]]
    if d["values"].dtype != o["values"].dtype or not np.array_equal(d["values"], o["values"]):
        out.append(f"values: {d['values']!r} vs {o['values']!r}")
    return out


PRODUCERS = ["numpy", "numpy-legacy", "pyarrow-tensor", "pyarrow-array", "jax"]
CONSUMERS = ["numpy", "pyarrow"]


def _reference(consumer, src):
    """The direct path's outcome. Where a consumer cannot take a producer at all (PyArrow's
    ``Tensor.from_dlpack`` passes ``max_version`` and does not retry a legacy producer, and
    refuses legacy ``"dltensor"`` capsules, which JAX returns), the reference is that consumer
    on NumPy's import of the producer: NumPy as the bridge, with NumPy's rules (a legacy tensor
    is read-only)."""
    direct = _outcome(lambda: _consume(consumer, src))
    if direct[0] == "raises" and consumer != "numpy":
        bridged = _outcome(lambda: _consume(consumer, np.from_dlpack(src)))
        # NumPy refusing too (bfloat16) says only that some consumer refuses: any exception
        return bridged if bridged[0] == "ok" else ("raises", None)
    return direct


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("consumer", CONSUMERS)
@pytest.mark.parametrize("producer", PRODUCERS)
def test_import_tensor_matches_the_direct_path(producer, consumer, layout):
    """For every dtype: the consumer's outcome through dh.import_tensor equals the direct one."""
    if producer == "jax" and jnp is None:
        pytest.skip("JAX does not import here")
    found, known, tried = {}, {}, []
    for dtype in DTYPES:
        try:
            src = _produce(producer, dtype, layout)
        except pytest.skip.Exception:
            continue  # this producer cannot make it (reported in `tried`)
        tried.append(dtype)
        reference = _reference(consumer, src)
        ours = _outcome(lambda: _consume(consumer, dh.import_tensor(src)))
        diff = _differences(reference, ours)
        if not diff:
            continue
        if ((not INTEGRITY and diff == ["writable: False vs True"])  # legacy writability invented
                or (not (NATIVE and INTEGRITY) and reference[0] == ours[0] == "raises"
                    and ours[1] in ("TypeError", "BufferError", "DLPackHelpersError"))):  # rewrapped
            known[dtype] = diff
        else:
            found[dtype] = diff
    if not tried:
        pytest.skip(f"{producer} makes no {layout} tensor")
    assert not found, found
    if known:
        pytest.xfail(f"known before issue 11 lands (see expect.py): {known}")


# ---- lifetimes ----------------------------------------------------------------------------------
def _weakrefable(producer):
    src = _produce(producer, "float64", "strided")
    try:
        weakref.ref(src)
    except TypeError:
        pytest.skip(f"{producer} objects take no weak references")
    return src


def _lifetime(producer, consumer, through_package):
    """(producer object alive while the view is, alive after the view went) for one path."""
    src = _weakrefable(producer)
    alive = weakref.ref(src)
    want = np.array(src, copy=True) if producer != "pyarrow-tensor" else src.to_numpy().copy()
    view = _consume_view(consumer, dh.import_tensor(src) if through_package else src)
    del src
    gc.collect()
    during = alive() is not None
    got = view if consumer == "numpy" else view.to_numpy()
    np.testing.assert_array_equal(got, want)  # the memory is still the producer's data
    del view, got
    gc.collect()
    return during, alive() is not None


def _consume_view(consumer, obj):
    return np.from_dlpack(obj) if consumer == "numpy" else pa.Tensor.from_dlpack(obj)


@pytest.mark.parametrize("consumer", CONSUMERS)
@pytest.mark.parametrize("producer", PRODUCERS)
def test_producer_lives_exactly_as_long_as_a_view_needs_it(producer, consumer):
    try:
        direct = _lifetime(producer, consumer, through_package=False)
    except Exception:  # this consumer cannot take the producer directly: NumPy's rule is the reference
        direct = _lifetime(producer, "numpy", through_package=False)
    ours = _lifetime(producer, consumer, through_package=True)
    assert ours == direct, f"through the package (alive during, after) = {ours}, directly {direct}"
    assert ours[1] is False, "the producer outlived every view"


def test_producer_lives_while_a_view_of_a_released_tensor_needs_it():
    src = np.arange(12.0).reshape(3, 4)[:, 1::2]
    want, alive = src.copy(), weakref.ref(src)
    t = dh.import_tensor(src)
    views = [np.from_dlpack(t), pa.Tensor.from_dlpack(t), t.__dlpack__(max_version=(1, 3))]
    t.release()
    del src, t
    for i in range(len(views)):
        gc.collect()
        assert alive() is not None, f"released while {len(views)} views remain"
        if i == 0:
            np.testing.assert_array_equal(views[0], want)
            np.testing.assert_array_equal(views[1].to_numpy(), want)
        views.pop(0)
    gc.collect()
    assert alive() is None
