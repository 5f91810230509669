"""Where an installed package finds its library: next to the package first, then
$DLPACK_HELPERS_LIBRARY, the checkout's target/release only inside a source checkout; a failed
search says what it tried and how to fix it.
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
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


def test_installed_copy_without_library_explains_what_was_tried(tmp_path):
    site = tmp_path / "site-packages"
    shutil.copytree(PACKAGE, site / "dlpack_helpers", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = _import_in_subprocess(site, elsewhere, None)
    assert r.returncode != 0
    err = r.stderr
    assert "ImportError" in err and str(site / "dlpack_helpers" / "libdlpack_helpers.so") in err, err
    assert "DLPACK_HELPERS_LIBRARY" in err and "cargo build --release" in err and "pip install ./python" in err
    assert "source checkout" not in err, err  # an installed copy does not guess a checkout
    # a file that is not a library: the loader's reason is reported
    bogus = tmp_path / "libdlpack_helpers.so"
    bogus.write_text("not a library")
    r = _import_in_subprocess(site, elsewhere, bogus)
    assert r.returncode != 0 and str(bogus) in r.stderr and "$DLPACK_HELPERS_LIBRARY" in r.stderr, r.stderr
    # the variable names the built library: it loads
    built = ROOT / "target" / "release" / "libdlpack_helpers.so"
    r = _import_in_subprocess(site, elsewhere, built)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(str(site)), r.stdout
    # a library next to the package is found first, without the variable
    shutil.copyfile(built, site / "dlpack_helpers" / "libdlpack_helpers.so")
    r = _import_in_subprocess(site, elsewhere, None)
    assert r.returncode == 0, r.stderr


def test_checkout_fallback_only_inside_a_checkout(tmp_path):
    from dlpack_helpers import _lib
    inside = [where for _, where in _lib.candidates(here=ROOT / "python" / "dlpack_helpers", env="")]
    assert inside == ["next to the package", "the source checkout's target/release"]
    outside = _lib.candidates(here=tmp_path / "lib" / "python3.11" / "site-packages" / "dlpack_helpers", env="/x.so")
    assert [str(p) for p, _ in outside] == [str(tmp_path / "lib/python3.11/site-packages/dlpack_helpers/libdlpack_helpers.so"),
                                            "/x.so"]
