"""Build hook of the dlpack_helpers package: bundle the built C library next to the package.

``pip install ./python`` (after ``cargo build --release``) copies ``$DLPACK_HELPERS_LIBRARY`` if
set, else ``../target/release/libdlpack_helpers.so``, into the package, where ``_lib.py`` looks
first; the wheel is then tagged for this platform. Without a built library the package installs
alone and finds the library at run time through ``$DLPACK_HELPERS_LIBRARY``.
"""
import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
NAME = {"darwin": "libdlpack_helpers.dylib", "win32": "dlpack_helpers.dll"}.get(sys.platform, "libdlpack_helpers.so")


def built_library():
    env = os.environ.get("DLPACK_HELPERS_LIBRARY")
    for path in ([Path(env)] if env else []) + [HERE.parent / "target" / "release" / NAME]:
        if path.is_file():
            return path
    return None


class BuildPy(build_py):
    def run(self):
        super().run()
        dest = Path(self.build_lib) / "dlpack_helpers" / NAME
        lib = built_library()
        if lib is None:
            if dest.exists():
                dest.unlink()  # never ship a stale copy from an earlier build
            print(f"dlpack_helpers: no built {NAME} (run `cargo build --release` first, or set "
                  "DLPACK_HELPERS_LIBRARY); installing without it: set DLPACK_HELPERS_LIBRARY at run time",
                  file=sys.stderr)
            return
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lib, dest)


class PlatformDistribution(Distribution):
    """A bundled shared library makes the wheel platform-specific."""

    def has_ext_modules(self):
        return built_library() is not None


setup(cmdclass={"build_py": BuildPy}, distclass=PlatformDistribution)
