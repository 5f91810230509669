"""The package's C/C++ SDK locators (``get_include``, ``get_library_dir``, ``get_cmake_dir`` and
``python -m dlpack_helpers``): directories that hold what they name when the package carries the
SDK (an installed wheel), and a clear SDKNotFoundError / exit status 1 naming the fix when it
does not (a source checkout, or a copy of the Python files alone). The wheel itself, a CMake
consumer and the example extension are checked by scripts/test.d/55-python-sdk.sh."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dlpack_helpers as dh
from dlpack_helpers import _sdk

PACKAGE = Path(dh.__file__).resolve().parent
OPTIONS = ["--includedir", "--libdir", "--cmakedir", "--pkgconfigdir", "--cflags", "--libs"]


def _cli(*args, path=None):
    env = dict(os.environ, PYTHONPATH=str(path or PACKAGE.parent))
    return subprocess.run([sys.executable, "-m", "dlpack_helpers", *args], capture_output=True, text=True,
                          env=env, cwd=path or None, timeout=600)


def _has_sdk() -> bool:
    return (PACKAGE / "include" / "dlpack_helpers.h").is_file()


def test_locators_are_exported_from_the_package():
    assert dh.get_include is _sdk.get_include
    assert dh.get_library_dir is _sdk.get_library_dir
    assert dh.get_cmake_dir is _sdk.get_cmake_dir
    assert issubclass(_sdk.SDKNotFoundError, FileNotFoundError)


@pytest.mark.skipif(not _has_sdk(), reason="this package has no SDK (a source checkout): see the next tests")
def test_installed_sdk_directories_hold_what_they_name():
    assert (Path(dh.get_include()) / "dlpack_helpers.h").is_file()
    assert (Path(dh.get_include()) / "dlpack_helpers.hpp").is_file()
    assert (Path(dh.get_library_dir()) / "libdlpack_helpers.so").exists()
    assert (Path(dh.get_cmake_dir()) / "dlpack_helpersConfig.cmake").is_file()
    assert (Path(_sdk.get_pkgconfig_dir()) / "dlpack_helpers.pc").is_file()
    r = _cli("--includedir", "--cmakedir")
    assert r.returncode == 0 and r.stdout.split() == [dh.get_include(), dh.get_cmake_dir()], r.stderr


@pytest.fixture
def bare_copy(tmp_path):
    """The package without its SDK files (the Python files, and any native module or library)."""
    dest = tmp_path / "dlpack_helpers"
    shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("__pycache__", "include", "cmake", "pkgconfig"))
    return tmp_path


@pytest.mark.parametrize("option", ["--includedir", "--cmakedir", "--pkgconfigdir", "--cflags"])
def test_a_package_without_the_sdk_says_what_is_missing_and_how_to_get_it(bare_copy, option):
    r = _cli(option, path=bare_copy)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stdout == ""
    err = r.stderr
    assert "has no C/C++ SDK" in err and "pip install ." in err and str(bare_copy / "dlpack_helpers") in err, err
    assert "Traceback" not in err, err


def test_the_source_checkout_is_named_as_such():
    if _has_sdk():
        pytest.skip("the package under test is an installed wheel")
    with pytest.raises(_sdk.SDKNotFoundError, match="source checkout") as e:
        dh.get_include()
    assert str(PACKAGE / "include" / "dlpack_helpers.h") in str(e.value)


def test_a_fake_sdk_layout_is_found(bare_copy):
    """Each locator needs exactly its file: created one by one in a bare copy."""
    pkg = bare_copy / "dlpack_helpers"
    files = {"--includedir": pkg / "include" / "dlpack_helpers.h",
             "--libdir": pkg / "lib" / "libdlpack_helpers.so",
             "--cmakedir": pkg / "lib" / "cmake" / "dlpack_helpers" / "dlpack_helpersConfig.cmake",
             "--pkgconfigdir": pkg / "lib" / "pkgconfig" / "dlpack_helpers.pc"}
    for option, f in files.items():
        if option != "--libdir":
            assert _cli(option, path=bare_copy).returncode == 1, option
        f.parent.mkdir(parents=True, exist_ok=True)
        if not f.exists():
            f.write_text("")
        r = _cli(option, path=bare_copy)
        assert r.returncode == 0 and r.stdout.strip() == str(f.parent), (option, r.stdout, r.stderr)
    r = _cli("--cflags", "--libs", path=bare_copy)
    inc, lib = files["--includedir"].parent, files["--libdir"].parent
    assert r.stdout.split() == [f"-I{inc}", f"-L{lib}", f"-Wl,-rpath,{lib}", "-ldlpack_helpers"], r.stdout


def test_usage_errors():
    r = _cli()
    assert r.returncode == 2 and "give at least one of" in r.stderr
    r = _cli("--nonsense")
    assert r.returncode == 2
    r = _cli("--help")
    assert r.returncode == 0 and all(o in r.stdout for o in OPTIONS)
