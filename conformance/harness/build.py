"""Builds the suite's fixture libraries (conformance/fixtures/*.c) with the C compiler, once per
source content, into a cache folder (DLPACK_CONFORMANCE_CACHE, or a folder under the system's
temporary directory)."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sysconfig
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def cache_dir() -> Path:
    base = os.environ.get("DLPACK_CONFORMANCE_CACHE") or os.path.join(tempfile.gettempdir(),
                                                                      "dlpack-conformance")
    return Path(base)


def build(name: str, sources: list[Path], extra: list[str] = (), key: str = "") -> Path:
    """Compile `sources` into lib<name>.so (position independent, -O1, warnings as errors)."""
    cc = os.environ.get("CC", "cc")
    h = hashlib.sha256((cc + key + " ".join(extra)).encode())
    for s in sources:
        h.update(s.read_bytes())
    out = cache_dir() / h.hexdigest()[:16] / f"lib{name}.so"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".tmp{os.getpid()}")
    cmd = [cc, "-std=gnu11", "-shared", "-fPIC", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
           "-pthread", *map(str, sources), "-o", str(tmp), *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"building the fixture {name} failed:\n{' '.join(cmd)}\n{p.stderr}")
    os.replace(tmp, out)
    return out


def fixtures() -> dict[str, str]:
    """Paths of the fixture libraries: fixtures, fx_alloc (to preload), fx_py (Python capsules)."""
    paths = {
        "fixtures": build("dlpc_fixtures", [FIXTURES / "fixtures.c"]),
        "alloc": build("dlpc_alloc", [FIXTURES / "fx_alloc.c"]),
    }
    inc = sysconfig.get_paths()["include"]
    if os.path.exists(os.path.join(inc, "Python.h")):
        paths["py"] = build("dlpc_py", [FIXTURES / "fx_py.c"], [f"-I{inc}", "-Wno-unused-parameter"],
                            key=inc)
    return {k: str(v) for k, v in paths.items()}
