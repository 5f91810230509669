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
OPTIONS = ["--includedir", "--libdir", "--library", "--cmakedir", "--pkgconfigdir", "--manifest", "--cflags",
           "--libs"]


def _cli(*args, path=None):
    env = dict(os.environ, PYTHONPATH=str(path or PACKAGE.parent))
    return subprocess.run([sys.executable, "-m", "dlpack_helpers", *args], capture_output=True, text=True,
                          env=env, cwd=path or None, timeout=600)


def _has_sdk() -> bool:
    return (PACKAGE / "include" / "dlpack_helpers.h").is_file()


def test_locators_are_exported_from_the_package():
    assert dh.get_include is _sdk.get_include
    assert dh.get_library_dir is _sdk.get_library_dir
    assert dh.get_library_path is _sdk.get_library_path
    assert dh.get_cmake_dir is _sdk.get_cmake_dir
    assert dh.get_manifest_path is _sdk.get_manifest_path
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


@pytest.mark.skipif(not _has_sdk(), reason="this package has no SDK (a source checkout)")
def test_installed_sdk_carries_the_specification_manifest():
    """share/dlpack_helpers/abi.toml: the manifest of spec/, describing this wheel's library."""
    path = Path(dh.get_manifest_path())
    assert path.name == "abi.toml" and path.is_file()
    r = _cli("--manifest")
    assert r.returncode == 0 and r.stdout.strip() == str(path), r.stderr
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        pytest.skip("tomllib is Python 3.11+")
    m = tomllib.loads(path.read_text())
    assert m["spec"]["version"] == "2026.12" and m["spec"]["version_number"] == 202612
    assert dh.info()["spec_version"] == m["spec"]["version_number"]
    assert dh.info()["profiles"] == sum(p["bit"] for p in m["profiles"].values())
    assert set(m["profiles"]) == {"core", "streams", "python", "exchange"}
    assert m["functions"]["dlpack_get_info"]["profile"] == "core"
    # Every function of the manifest is exported by the wheel's library.
    import ctypes
    so = ctypes.CDLL(dh.get_library_path())
    missing = [f for f in m["functions"] if not hasattr(so, f)]
    assert not missing, missing


# Counts the distinct files mapped into the running process whose name starts with the library's
# name (device and inode from /proc/self/maps): two copies of the library are two files.
_COUNT_MAPPINGS = """
import sys
def library_files():
    files = {}
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].strip().rsplit("/", 1)[-1].startswith("libdlpack_helpers.so"):
                files[(parts[3], parts[4])] = parts[5].strip()
    return files
"""


def _mapped_files(code: str) -> list[str]:
    r = subprocess.run([sys.executable, "-c", _COUNT_MAPPINGS + code + "\nprint('\\n'.join(library_files().values()))"],
                       capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(PACKAGE.parent)))
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


@pytest.mark.skipif(not _has_sdk(), reason="this package has no SDK (a source checkout)")
def test_the_wheel_holds_one_library_file_and_a_linker_script():
    lib = Path(dh.get_library_dir())
    elf = [p for p in lib.iterdir() if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]
    assert [p.name for p in elf] == [Path(dh.get_library_path()).name], sorted(p.name for p in lib.iterdir())
    script = (lib / "libdlpack_helpers.so").read_text()
    assert f"INPUT(-l:{elf[0].name})" in script, script
    # The file the extension is linked against is that one file.
    assert os.path.realpath(dh._native._library_path()) == dh.get_library_path()
    assert _cli("--library").stdout.strip() == dh.get_library_path()


@pytest.mark.skipif(not _has_sdk(), reason="this package has no SDK (a source checkout)")
def test_one_process_maps_one_library_whichever_way_it_is_loaded():
    """The extension, ctypes by the documented name (get_library_path()), dh.lib and a dlopen by
    the bare SONAME: one file mapped. The control loads a copy of the
    same library, which the same probe sees as a second file."""
    one = _mapped_files(
        "import ctypes, dlpack_helpers as dh\n"
        "ctypes.CDLL(dh.get_library_path()); dh.lib.dlpack_get_info\n"
        "ctypes.CDLL(dh.get_library_path().rsplit('/', 1)[1])  # by SONAME: the loaded one\n")
    assert one == [dh.get_library_path()], one


@pytest.mark.skipif(not _has_sdk(), reason="this package has no SDK (a source checkout)")
def test_the_mapping_probe_sees_a_second_copy(tmp_path):
    copy = tmp_path / Path(dh.get_library_path()).name
    shutil.copy(dh.get_library_path(), copy)
    two = _mapped_files(f"import ctypes, dlpack_helpers as dh\nctypes.CDLL({str(copy)!r})\n")
    assert sorted(two) == sorted([dh.get_library_path(), str(copy)]), two


@pytest.fixture
def bare_copy(tmp_path):
    """The package without its SDK files (the Python files, and any native module or library)."""
    dest = tmp_path / "dlpack_helpers"
    shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("__pycache__", "include", "cmake", "pkgconfig", "share"))
    return tmp_path


@pytest.mark.parametrize("option", ["--includedir", "--cmakedir", "--pkgconfigdir", "--manifest", "--cflags"])
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
    manifest = pkg / "share" / "dlpack_helpers" / "abi.toml"
    assert _cli("--manifest", path=bare_copy).returncode == 1
    manifest.parent.mkdir(parents=True)
    manifest.write_text("")
    r = _cli("--manifest", path=bare_copy)
    assert r.returncode == 0 and r.stdout.strip() == str(manifest), (r.stdout, r.stderr)
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
