"""Where an installed package finds its library: the native extension needs the lib/ folder of
its wheel; ctypes (dh.lib) loads the very file the extension uses, then the package's lib/,
$DLPACK_HELPERS_LIBRARY, the checkout's target/release only inside a source checkout.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dlpack_helpers as dh

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(dh.__file__).resolve().parent


def _import_in_subprocess(site, cwd, env_lib):
    env = {k: v for k, v in os.environ.items() if k not in ("DLPACK_HELPERS_LIBRARY", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    if env_lib is not None:
        env["DLPACK_HELPERS_LIBRARY"] = str(env_lib)
    return subprocess.run([sys.executable, "-c", "import dlpack_helpers as dh; print(dh.__file__, dh.info()['version'])"],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


def test_installed_copy_without_library_explains_what_was_tried(tmp_path):
    # Issue 11: the package is a native extension linked against lib/libdlpack_helpers.so.*; a copy
    # without its lib/ folder fails at import, and the loader's message names the library.
    site = tmp_path / "site-packages"
    shutil.copytree(PACKAGE, site / "dlpack_helpers", ignore=shutil.ignore_patterns("lib", "__pycache__"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = _import_in_subprocess(site, elsewhere, None)
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "libdlpack_helpers.so" in r.stderr, r.stderr
    # with its lib/ folder the copy imports from anywhere, without the variable
    shutil.copytree(PACKAGE / "lib", site / "dlpack_helpers" / "lib", symlinks=True)
    r = _import_in_subprocess(site, elsewhere, None)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(str(site)), r.stdout


def test_checkout_fallback_only_inside_a_checkout(tmp_path):
    from dlpack_helpers import _lib
    inside = [where for _, where in _lib.candidates(here=ROOT / "python" / "dlpack_helpers", env="")]
    assert inside == ["the package's lib/ folder", "the source checkout's target/release"]
    outside = _lib.candidates(here=tmp_path / "lib" / "python3.11" / "site-packages" / "dlpack_helpers", env="/x.so")
    assert [str(p) for p, _ in outside] == [str(tmp_path / "lib/python3.11/site-packages/dlpack_helpers/lib/libdlpack_helpers.so"),
                                            "/x.so"]
    # the installed package: first the very file the extension is linked against
    installed = _lib.candidates(env="")
    assert installed[0][1] == "the library dlpack_helpers._native is linked against"
