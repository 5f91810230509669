"""Where the C/C++ SDK of an installed ``dlpack_helpers`` wheel is: for extension authors who
build against the library (as ``numpy.get_include()`` or ``pybind11.get_cmake_dir()``).

The wheel lays the SDK out inside the package directory::

    dlpack_helpers/include/dlpack_helpers.h, dlpack_helpers.hpp
    dlpack_helpers/lib/libdlpack_helpers.so*            (the shared C library)
    dlpack_helpers/lib/cmake/dlpack_helpers/*.cmake     (find_package(dlpack_helpers CONFIG))
    dlpack_helpers/lib/pkgconfig/dlpack_helpers.pc

Each locator returns an absolute path (a ``str``) to a directory that holds the file it is for,
and raises :class:`SDKNotFoundError` (a ``FileNotFoundError``) naming what is missing and how to
get it when the package has no SDK, for example a source checkout that was not installed with
``pip install .``. Nothing here loads the C library. Thread-safe (reads the file system only).
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["get_include", "get_library_dir", "get_cmake_dir", "get_pkgconfig_dir", "SDKNotFoundError"]

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


def cflags() -> list[str]:
    """Compiler flags for the header: ``["-I<include dir>"]``."""
    return [f"-I{get_include()}"]


def libs() -> list[str]:
    """Linker flags for the shared library: ``-L<dir>``, a run-time search path to the same
    directory (the library lives in the package, not on the system's search path) and
    ``-ldlpack_helpers``."""
    d = get_library_dir()
    return [f"-L{d}", f"-Wl,-rpath,{d}", "-ldlpack_helpers"]
