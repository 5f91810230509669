"""The real frameworks of the framework part (issue 25), as producers and consumers.

Imported in one order: PaddlePaddle before TensorFlow (the other order breaks Paddle's import in
one process), Warp initialised once. Every producer makes its tensors with its own API from one
NumPy base array per dtype, so a transpose of a JAX array is JAX's transpose (a compact copy),
of a PyTorch tensor a strided view, and so on. Every consumer is called through the entry point
its users call, with its quirks: TensorFlow's consumer takes a capsule (``x.__dlpack__()``),
MLX builds an array from ``__dlpack__()``, ONNX Runtime's ``OrtValue.from_dlpack``.

``measure(result)`` turns a consumer's result into comparable facts: dtype, shape, strides,
the first element's address, writability (where the consumer has the notion) and the raw bytes
of every element, read through the result's own DLPack export (``dh.import_tensor``), so that
bfloat16 and complex values compare byte for byte.
"""
import ctypes
import hashlib
import os
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("GLOG_minloglevel", "3")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import paddle  # noqa: E402  (before TensorFlow)
import tensorflow as tf  # noqa: E402
import torch  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import mlx.core as mx  # noqa: E402
import warp as wp  # noqa: E402
import onnxruntime as ort  # noqa: E402
import pyarrow as pa  # noqa: E402
import tvm_ffi  # noqa: E402

import dlpack_helpers as dh  # noqa: E402
import dlpack_sum_example as example  # noqa: E402

jax.config.update("jax_enable_x64", True)  # float64/int64 stay 64-bit, as exchanges need
wp.config.quiet = True
wp.init()
paddle.set_device("cpu")

VERSIONS = {
    "numpy": np.__version__, "torch": torch.__version__, "jax": jax.__version__,
    "tensorflow": tf.__version__, "paddle": paddle.__version__, "mlx": mx.__version__,
    "warp": wp.__version__, "onnxruntime": ort.__version__, "pyarrow": pa.__version__,
    "tvm_ffi": tvm_ffi.__version__, "dlpack_helpers": dh.info()["version"],
}

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", "bfloat16"]
LAYOUTS = ["contiguous", "transpose", "strided", "0d", "empty", "readonly"]
SHAPE = (3, 4)


def base(dtype):
    """Deterministic values of `dtype` (a NumPy array; bfloat16 from ml_dtypes), shape (3, 4)."""
    v = np.arange(1, 13).reshape(SHAPE)
    if dtype == "bool":
        return (v % 3 == 0)
    if dtype.startswith("complex"):
        return (v + 1j * (v % 5)).astype(dtype)
    if dtype == "bfloat16":
        return v.astype(ml_dtypes.bfloat16)
    return (v * (-1 if dtype.startswith("int") else 1)).astype(dtype)


def np_layout(a, layout):
    """Apply a layout with NumPy (views where NumPy has them)."""
    if layout == "transpose":
        return a.T
    if layout == "strided":
        return a[::2, 1::2]
    if layout == "0d":
        return a[1, 2, ...]  # a 0-d view (a[1, 2] would be a NumPy scalar)
    if layout == "empty":
        return a[:0]
    if layout == "readonly":
        r = a.copy()
        r.flags.writeable = False
        return r
    return a


def generic_layout(t, layout, transpose, index0d):
    if layout == "transpose":
        return transpose(t)
    if layout == "strided":
        return t[::2, 1::2]
    if layout == "0d":
        return index0d(t)
    if layout == "empty":
        return t[:0]
    return t


class Unsupported(Exception):
    """The producer cannot make this case with its own API (not a DLPack outcome)."""


# ---- producers: name -> make(dtype, layout) -> object ----------------------------------------

def _numpy(dtype, layout):
    return np_layout(base(dtype), layout)


_TORCH = {"bool": torch.bool, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
          "int64": torch.int64, "uint8": torch.uint8, "uint16": torch.uint16, "uint32": torch.uint32,
          "uint64": torch.uint64, "float16": torch.float16, "float32": torch.float32,
          "float64": torch.float64, "complex64": torch.complex64, "complex128": torch.complex128,
          "bfloat16": torch.bfloat16}


def _torch(dtype, layout):
    if layout == "readonly":
        raise Unsupported("PyTorch tensors have no read-only state")
    a = base(dtype)
    t = torch.from_numpy(a.astype(np.float32)).to(_TORCH[dtype]) if dtype == "bfloat16" \
        else torch.from_numpy(a.copy())
    return generic_layout(t, layout, lambda x: x.T, lambda x: x[1, 2])


def _jax(dtype, layout):
    if layout == "readonly":
        raise Unsupported("JAX arrays are immutable; no read-only variant")
    t = jnp.asarray(base(dtype))
    return generic_layout(t, layout, lambda x: x.T, lambda x: x[1, 2])


def _tf(dtype, layout):
    if layout == "readonly":
        raise Unsupported("TensorFlow tensors are immutable; no read-only variant")
    a = base(dtype)
    t = tf.cast(tf.constant(a.astype(np.float32)), tf.bfloat16) if dtype == "bfloat16" else tf.constant(a)
    return generic_layout(t, layout, tf.transpose, lambda x: x[1, 2])


def _paddle(dtype, layout):
    if layout == "readonly":
        raise Unsupported("Paddle tensors have no read-only state")
    a = base(dtype)
    if dtype == "bfloat16":
        t = paddle.to_tensor(a.astype(np.float32)).astype("bfloat16")
    elif dtype in ("uint16", "uint32", "uint64"):
        raise Unsupported(f"Paddle has no {dtype}")
    else:
        t = paddle.to_tensor(a)
    return generic_layout(t, layout, lambda x: x.T, lambda x: x[1, 2])


_MX = {"bool": mx.bool_, "int8": mx.int8, "int16": mx.int16, "int32": mx.int32, "int64": mx.int64,
       "uint8": mx.uint8, "uint16": mx.uint16, "uint32": mx.uint32, "uint64": mx.uint64,
       "float16": mx.float16, "float32": mx.float32, "float64": getattr(mx, "float64", None),
       "complex64": mx.complex64, "complex128": None, "bfloat16": mx.bfloat16}


def _mlx(dtype, layout):
    if layout == "readonly":
        raise Unsupported("MLX arrays have no read-only state")
    if _MX.get(dtype) is None:
        raise Unsupported(f"MLX has no {dtype}")
    a = base(dtype)
    t = mx.array(a.astype(np.float32)).astype(mx.bfloat16) if dtype == "bfloat16" else mx.array(a)
    return generic_layout(t, layout, lambda x: x.T, lambda x: x[1, 2])


_WP = {"bool": wp.bool, "int8": wp.int8, "int16": wp.int16, "int32": wp.int32, "int64": wp.int64,
       "uint8": wp.uint8, "uint16": wp.uint16, "uint32": wp.uint32, "uint64": wp.uint64,
       "float16": wp.float16, "float32": wp.float32, "float64": wp.float64}


def _warp(dtype, layout):
    if dtype not in _WP:
        raise Unsupported(f"Warp has no {dtype}")
    if layout in ("readonly", "0d"):
        raise Unsupported(f"Warp arrays have no {layout} form")
    a = np_layout(base(dtype), "contiguous")
    t = wp.array(a, dtype=_WP[dtype], device="cpu")
    if layout == "transpose":
        return t.transpose()
    if layout == "strided":
        return t[::2, 1::2]
    if layout == "empty":
        return wp.empty((0, 4), dtype=_WP[dtype], device="cpu")
    return t


def _ort(dtype, layout):
    if layout != "contiguous" and layout != "empty":
        raise Unsupported("OrtValue holds compact tensors only")
    if dtype == "bfloat16" or dtype.startswith("complex"):
        raise Unsupported(f"OrtValue.ortvalue_from_numpy has no {dtype}")
    a = np.ascontiguousarray(np_layout(base(dtype), layout))
    return ort.OrtValue.ortvalue_from_numpy(a)


def _pyarrow(dtype, layout):
    if dtype in ("float16", "bfloat16") or dtype.startswith("complex"):
        raise Unsupported(f"no pyarrow array of {dtype} from NumPy")
    a = base(dtype).reshape(-1)
    arr = pa.array(a)
    if layout == "contiguous":
        return arr
    if layout == "strided":
        return arr.slice(3, 5)  # a non-zero offset into the buffer
    if layout == "empty":
        return arr.slice(0, 0)
    raise Unsupported("pyarrow arrays are 1-d, immutable")


def _tvm(dtype, layout):
    return tvm_ffi.from_dlpack(np_layout(base(dtype), layout))


def _dh(dtype, layout):
    return dh.import_tensor(np_layout(base(dtype), layout))


def _dh_legacy(dtype, layout):
    """A dlpack_helpers.Tensor of a legacy-only producer (JAX): read-only assumed."""
    return dh.import_tensor(_jax(dtype, layout))


PRODUCERS = {
    "numpy": _numpy, "torch": _torch, "jax": _jax, "tensorflow": _tf, "paddle": _paddle,
    "mlx": _mlx, "warp": _warp, "onnxruntime": _ort, "pyarrow": _pyarrow, "tvm_ffi": _tvm,
    "dh": _dh, "dh(jax)": _dh_legacy,
}


# ---- consumers: name -> consume(obj) -> result ------------------------------------------------

class DLPackOnly:
    """Only the DLPack protocol of `obj` (its ``__dlpack__`` keywords forwarded unchanged): for
    a consumer whose entry point also takes other protocols. ``mx.array(x)`` reads a NumPy array
    through the buffer protocol, a bfloat16 ``torch.Tensor`` through ``x.view(...)``, and an MLX
    array as itself; wrapped, it is the DLPack consumer it is for every producer."""

    def __init__(self, obj):
        self.obj = obj

    def __dlpack__(self, *args, **kwargs):
        return self.obj.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.obj.__dlpack_device__()


def _example(x):
    d = example.describe(x)
    s = example.sum(x) if d["dtype"] in ("float32", "float64") else None
    return {"describe": {k: v for k, v in d.items() if k not in ("legacy", "version")}, "sum": s}


CONSUMERS = {
    "numpy": np.from_dlpack,
    "torch": torch.from_dlpack,
    "jax": jax.dlpack.from_dlpack,
    "tensorflow": lambda x: tf.experimental.dlpack.from_dlpack(x.__dlpack__()),
    "paddle": paddle.from_dlpack if hasattr(paddle, "from_dlpack") else paddle.utils.dlpack.from_dlpack,
    "mlx": lambda x: mx.array(DLPackOnly(x)),
    "warp": wp.from_dlpack,
    "onnxruntime": ort.OrtValue.from_dlpack,
    "pyarrow": pa.Tensor.from_dlpack,
    "tvm_ffi": tvm_ffi.from_dlpack,
    "dh": dh.import_tensor,
    "example": _example,
    # Only when named in DH_MATRIX_CONSUMERS (test_frameworks.py): a consumer that aborts the
    # process on every bridged call, to show that the matrix survives an abort and counts it.
    "abort-selftest": lambda x: os.abort() if isinstance(x, dh.Tensor) else np.from_dlpack(x),
}


def writable(result):
    """True/False where the consumer's result has a notion of writability, else None."""
    if isinstance(result, np.ndarray):
        return bool(result.flags.writeable)
    if isinstance(result, pa.Tensor):
        return bool(result.is_mutable)
    if isinstance(result, dh.Tensor):
        return not result.readonly
    if isinstance(result, dict):
        return bool(result["describe"]["writable"])
    return None


def _raw_bytes(t):
    """Every element's bytes, row-major, read through a dlpack_helpers.Tensor on the CPU."""
    shape, strides = t.shape, t.strides
    item = max(1, t.dtype.bits * t.dtype.lanes // 8)
    if 0 in shape:
        return b""
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides))
    start = t.data_ptr + t.byte_offset + lo * item
    buf = np.frombuffer((ctypes.c_char * ((hi - lo + 1) * item)).from_address(start), np.uint8)
    view = np.lib.stride_tricks.as_strided(buf[-lo * item:], shape=tuple(shape) + (item,),
                                           strides=tuple(s * item for s in strides) + (1,))
    return np.ascontiguousarray(view).tobytes()


def _norm_strides(shape, strides):
    """Strides that matter: none for empty tensors, 0 for extent-1 dimensions."""
    if 0 in shape:
        return None
    return tuple(0 if n == 1 else s for n, s in zip(shape, strides))


def facts_of_tensor(t):
    data = _raw_bytes(t)
    addr = t.data_ptr + t.byte_offset if 0 not in t.shape else None
    return {"dtype": str(t.dtype), "shape": tuple(t.shape),
            "strides": _norm_strides(t.shape, t.strides), "address": addr,
            "values": hashlib.sha1(data).hexdigest()}


def measure(result):
    """Comparable facts of a consumer's result (a dict)."""
    if isinstance(result, dict):  # the example extension
        return {"describe": result["describe"], "sum": result["sum"], "writable": writable(result)}
    if isinstance(result, dh.Tensor):
        f = facts_of_tensor(result)
    else:
        src = result
        if isinstance(result, pa.Tensor) and not hasattr(result, "__dlpack__"):
            src = result.to_numpy()
        with dh.import_tensor(src) as t:
            f = facts_of_tensor(t)
    f["writable"] = writable(result)
    return f


def producer_facts(obj):
    """The producer's own facts (its values, address and what it states about writability) and
    the import they were read from. Keep the import while the paths run: a producer whose export
    makes a temporary buffer (MLX for a lazy array) would otherwise free it, and a consumer's
    copy could land at the same address and look zero-copy."""
    t = dh.import_tensor(obj)
    f = facts_of_tensor(t)
    f["stated_read_only"] = t.readonly_origin == "stated"
    f["legacy"] = t.readonly_origin == "assumed"
    return f, t
