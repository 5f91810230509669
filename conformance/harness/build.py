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


FAKES = Path(__file__).resolve().parent.parent.parent / "tests-c" / "fake"


def fake_drivers() -> str:
    """A folder holding the test doubles of the CUDA driver, the HIP runtime and the Level Zero
    loader (tests-c/fake/*.c) under the file names a program's dlopen looks for
    (libcuda.so.1, libamdhip64.so[.6], libze_loader.so.1). A case module puts it first on
    LD_LIBRARY_PATH (its child_env hook) so that any implementation that loads the runtimes at
    run time by their standard names finds the doubles. Their control functions (fake_count,
    fake_fail, fake_register_pointer, ...) are documented at the top of each source."""
    libs = {
        "libcuda.so.1": build("fake_cuda", [FAKES / "fake_cuda.c"], ["-Wno-error", "-w"]),
        "libamdhip64.so": build("fake_hip", [FAKES / "fake_hip.c"], ["-Wno-error", "-w"]),
        "libze_loader.so.1": build("fake_ze", [FAKES / "fake_ze.c"], ["-Wno-error", "-w"]),
    }
    d = cache_dir() / ("fakes-" + hashlib.sha256("".join(str(p) for p in libs.values()).encode()).hexdigest()[:12])
    d.mkdir(parents=True, exist_ok=True)
    names = {"libcuda.so.1": ["libcuda.so.1", "libcuda.so"],
             "libamdhip64.so": ["libamdhip64.so", "libamdhip64.so.6"],
             "libze_loader.so.1": ["libze_loader.so.1", "libze_loader.so"]}
    for key, path in libs.items():
        for n in names[key]:
            link = d / n
            if not link.exists():
                try:
                    link.symlink_to(path)
                except FileExistsError:
                    pass
    return str(d)
