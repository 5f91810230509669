"""Where the C/C++ SDK of an installed ``dlpack_helpers`` wheel is: for extension authors who
build against the library (as ``numpy.get_include()`` or ``pybind11.get_cmake_dir()``).

The wheel lays the SDK out inside the package directory::

    dlpack_helpers/include/dlpack_helpers.h, dlpack_helpers.hpp
    dlpack_helpers/lib/libdlpack_helpers.so.0.1         (the shared C library, one file, named
                                                         by its SONAME)
    dlpack_helpers/lib/libdlpack_helpers.so             (a linker script naming it, for -l)
    dlpack_helpers/lib/cmake/dlpack_helpers/*.cmake     (find_package(dlpack_helpers CONFIG))
    dlpack_helpers/lib/pkgconfig/dlpack_helpers.pc
    dlpack_helpers/share/dlpack_helpers/abi.toml        (the specification's manifest: every
                                                         function, parameter, status, struct and
                                                         constant, for binding generators)

Each locator returns an absolute path (a ``str``) to a directory that holds the file it is for,
and raises :class:`SDKNotFoundError` (a ``FileNotFoundError``) naming what is missing and how to
get it when the package has no SDK, for example a source checkout that was not installed with
``pip install .``. Nothing here loads the C library. Thread-safe (reads the file system only).
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["get_include", "get_library_dir", "get_library_path", "get_cmake_dir", "get_pkgconfig_dir",
           "get_manifest_path", "SDKNotFoundError"]

_PACKAGE = Path(__file__).resolve().parent

# The shared library's link-time name (the wheels are built for Linux; macOS for completeness).
_LIBRARY_NAMES = ("libdlpack_helpers.dylib",) if sys.platform == "darwin" else ("libdlpack_helpers.so",)


class SDKNotFoundError(FileNotFoundError):
    """The installed ``dlpack_helpers`` package carries no C/C++ SDK (header, library or CMake
    package): it was not installed from a wheel built by ``pip install``/``pip wheel`` of the
    repository root (a source checkout on ``sys.path``, or a copy of the Python files alone)."""


def _missing(what: str, looked_for: list[Path]) -> SDKNotFoundError:
    tried = ", ".join(str(p) for p in looked_for)
    checkout = (_PACKAGE.parent.parent / "Cargo.toml").is_file()
    where = ("a source checkout, not an installed wheel" if checkout
             else "an installed copy without the SDK")
    return SDKNotFoundError(
        f"dlpack_helpers has no C/C++ SDK: {what} not found (looked for {tried}). The package at "
        f"{_PACKAGE} is {where}; the SDK ships in the wheel: run `pip install .` (or `pip wheel .`) "
        "in the dlpack-helpers repository root and use that installation")


def _dir_with(sub: str, names: tuple, what: str) -> str:
    d = _PACKAGE / sub
    candidates = [d / n for n in names]
    if not any(p.is_file() for p in candidates):
        raise _missing(what, candidates)
    return str(d)


def get_include() -> str:
    """The directory holding ``dlpack_helpers.h`` (and ``dlpack_helpers.hpp``): pass it as
    ``-I`` so that ``#include <dlpack_helpers.h>`` works. ``SDKNotFoundError`` when the package
    has no SDK."""
    return _dir_with("include", ("dlpack_helpers.h",), "the header dlpack_helpers.h")


def get_library_dir() -> str:
    """The directory holding the shared C library (``libdlpack_helpers.so`` and its versioned
    names on Linux): pass it as ``-L`` (and as the run-time search path, ``-Wl,-rpath``, unless
    your extension finds the library another way). ``SDKNotFoundError`` when the package has no
    SDK."""
    return _dir_with("lib", _LIBRARY_NAMES, "the C library " + " or ".join(_LIBRARY_NAMES))


def get_library_path() -> str:
    """The shared C library file itself, the one to load with ``ctypes.CDLL``/``dlopen``: the
    file named by its SONAME (``lib/libdlpack_helpers.so.0.1``), the only copy in the wheel. It is
    the file ``dlpack_helpers._native`` and every extension linked through the SDK load, so a
    process maps it once and all of them share its state (last error, stream backends, exchange
    API cache). ``lib/libdlpack_helpers.so`` is a linker script for ``-ldlpack_helpers``, not a
    library: ``dlopen`` refuses it ("invalid ELF header"). ``SDKNotFoundError`` when the package
    has no SDK."""
    d = Path(get_library_dir())
    # The one file that is an ELF object among the library's names (lib/ holds the SONAME file
    # and the linker script; a build tree or a distribution's layout may hold more links).
    found = sorted(p for p in d.glob(_LIBRARY_NAMES[0] + "*") if p.is_file() and _is_elf(p))
    if not found:
        raise _missing("the shared library file (an ELF object named " + _LIBRARY_NAMES[0] + ".*)",
                       [d / (_LIBRARY_NAMES[0] + ".*")])
    # Links resolve to one real file; distinct real files would be distinct copies.
    real = {p.resolve() for p in found}
    if len(real) > 1:
        raise SDKNotFoundError(f"dlpack_helpers: {d} holds {len(real)} different copies of the "
                               f"library ({', '.join(sorted(str(p) for p in real))}): reinstall")
    return str(found[0].resolve())


def _is_elf(p: Path) -> bool:
    with open(p, "rb") as f:
        return f.read(4) == b"\x7fELF"


def get_cmake_dir() -> str:
    """The directory holding ``dlpack_helpersConfig.cmake``: pass it as ``-Ddlpack_helpers_DIR=…``
    (or add it to ``CMAKE_PREFIX_PATH``) so that ``find_package(dlpack_helpers CONFIG REQUIRED)``
    finds the imported targets ``dlpack_helpers::shared`` / ``::dlpack_helpers``.
    ``SDKNotFoundError`` when the package has no SDK."""
    return _dir_with(str(Path("lib", "cmake", "dlpack_helpers")),
                     ("dlpack_helpersConfig.cmake", "dlpack_helpers-config.cmake"),
                     "the CMake package file dlpack_helpersConfig.cmake")


def get_pkgconfig_dir() -> str:
    """The directory holding ``dlpack_helpers.pc``: add it to ``PKG_CONFIG_PATH``.
    ``SDKNotFoundError`` when the package has no SDK."""
    return _dir_with(str(Path("lib", "pkgconfig")), ("dlpack_helpers.pc",),
                     "the pkg-config file dlpack_helpers.pc")


def get_manifest_path() -> str:
    """The specification's manifest file, ``abi.toml`` (TOML; read it with ``tomllib``): every
    exported function with its profile, prototype, parameters (direction, nullability,
    ownership), statuses, requirement IDs and thread-safety level, every struct layout, typedef,
    callback and constant, for generators of bindings in other languages. It describes the
    library of this wheel. ``SDKNotFoundError`` when the package has no SDK."""
    d = Path(_dir_with(str(Path("share", "dlpack_helpers")), ("abi.toml",),
                       "the specification's manifest share/dlpack_helpers/abi.toml"))
    return str(d / "abi.toml")


def cflags() -> list[str]:
    """Compiler flags for the header: ``["-I<include dir>"]``."""
    return [f"-I{get_include()}"]


def libs() -> list[str]:
    """Linker flags for the shared library: ``-L<dir>``, a run-time search path to the same
    directory (the library lives in the package, not on the system's search path) and
    ``-ldlpack_helpers``."""
    d = get_library_dir()
    return [f"-L{d}", f"-Wl,-rpath,{d}", "-ldlpack_helpers"]
