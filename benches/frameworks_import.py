"""Import timings per producer across the real frameworks (issue 25), in one process.

For each producer (a 1024-element float32 tensor of NumPy, PyTorch, PaddlePaddle, JAX,
TensorFlow, MLX, Warp, tvm-ffi and a dlpack_helpers.Tensor), the time of one import plus release
through: the producer type's C exchange table (``dh.import_tensor``, where the type publishes
one), its ``__dlpack__`` (``dh.import_tensor(use_exchange_api=False)``), ``np.from_dlpack``,
``torch.from_dlpack`` and ``tvm_ffi.from_dlpack``. Best of 7 repeats, microseconds per call.

Run by ``scripts/bench --frameworks`` with the framework venv (scripts/test frameworks makes it);
writes section 7 of docs/performance.md (``--out FILE`` elsewhere, ``--print`` to stdout only).
Benchmarks never fail because a machine is slow.
"""
import os
import platform
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests-frameworks"))
import frameworks as fw  # noqa: E402  (imports every framework in the order they need)
from frameworks import dh, jnp, mx, np, paddle, tf, torch, tvm_ffi, wp  # noqa: E402

DOC = Path(__file__).resolve().parent.parent / "docs" / "performance.md"
HEAD = "\n## 7. Imports across frameworks"
N = 1024


def producers():
    a = np.arange(N, dtype=np.float32)
    return {
        "numpy": a,
        "torch": torch.from_numpy(a.copy()),
        "paddle": paddle.to_tensor(a),
        "jax": jnp.asarray(a),
        "tensorflow": tf.constant(a),
        "mlx": mx.array(a),
        "warp": wp.array(a, device="cpu"),
        "tvm_ffi": tvm_ffi.from_dlpack(a.copy()),
        "dh.Tensor": dh.import_tensor(a.copy()),
    }


def has_table(x):
    t = type(x)
    return hasattr(t, "__dlpack_c_exchange_api__") or hasattr(t, "__c_dlpack_exchange_api__")


ROUTES = {
    "exchange table": lambda x: dh.import_tensor(x),
    "`__dlpack__`": lambda x: dh.import_tensor(x, use_exchange_api=False),
    "`np.from_dlpack`": np.from_dlpack,
    "`torch.from_dlpack`": torch.from_dlpack,
    "`tvm_ffi.from_dlpack`": tvm_ffi.from_dlpack,
}


def time_us(f, x):
    try:
        f(x)
    except Exception as e:
        return f"fails ({type(e).__name__})"
    loops = 2000
    best = min(timeit.repeat(lambda: f(x), number=loops, repeat=7))
    return f"{best / loops * 1e6:.2f}"


def main():
    rows = []
    for name, x in producers().items():
        cells = []
        for route, f in ROUTES.items():
            if route == "exchange table" and not has_table(x):
                cells.append("no table")
            else:
                cells.append(time_us(f, x))
        rows.append((name, cells))
    L = [HEAD.lstrip("\n") + "\n",
         f"One import plus release of a {N}-element float32 tensor from each producer, in one "
         "process (`benches/frameworks_import.py`, run by `scripts/bench --frameworks` with the "
         "framework venv of `scripts/test frameworks`), best of 7, microseconds per call. "
         "\"exchange table\" is `dh.import_tensor` through the producer type's C exchange API "
         "(DLPack 1.3), \"`__dlpack__`\" the same call with `use_exchange_api=False`. "
         + ", ".join(f"{k} {v}" for k, v in fw.VERSIONS.items())
         + f"; {platform.python_implementation()} {platform.python_version()}, "
         f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start (a shared "
         "machine: compare columns within a row, not across runs).\n",
         "| producer | " + " | ".join(ROUTES) + " |",
         "|---|" + "---:|" * len(ROUTES)]
    L += [f"| {name} | " + " | ".join(cells) + " |" for name, cells in rows]
    text = "\n".join(L) + "\n"
    print(text)
    if "--print" in sys.argv:
        return
    out = Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv else DOC
    doc = out.read_text() if out.exists() else ""
    rest = ""
    if HEAD in doc:  # replace this section only (section 8, free-threaded, may follow it)
        start = doc.index(HEAD)
        nxt = doc.find("\n## ", start + len(HEAD))
        doc, rest = doc[:start], ("" if nxt < 0 else doc[nxt:])
    out.write_text(doc.rstrip("\n") + "\n\n" + text + rest)


if __name__ == "__main__":
    main()
