"""``python -m dlpack_helpers --includedir | --libdir | --library | --cmakedir | --pkgconfigdir |
--manifest | --cflags | --libs``: print where the installed wheel's C/C++ SDK is, for build scripts::

    cmake -S . -B build -Ddlpack_helpers_DIR="$(python -m dlpack_helpers --cmakedir)"
    cc -shared ext.c $(python -m dlpack_helpers --cflags --libs) ...

Several options print their answers on one line, in the order given, separated by spaces (as
``pkg-config --cflags --libs``). Exit status 0 on success; 1 with the reason on stderr when the
package carries no SDK (for example a source checkout: install it with ``pip install .``); 2 for
a usage error.
"""

from __future__ import annotations

import argparse
import sys

from . import _sdk

_OPTIONS = {
    "--includedir": ("the directory of dlpack_helpers.h (-I)", lambda: [_sdk.get_include()]),
    "--libdir": ("the directory of the shared C library (-L)", lambda: [_sdk.get_library_dir()]),
    "--library": ("the shared library file itself, for ctypes.CDLL or dlopen (one copy per process)",
                  lambda: [_sdk.get_library_path()]),
    "--cmakedir": ("the directory of dlpack_helpersConfig.cmake (-Ddlpack_helpers_DIR=)",
                   lambda: [_sdk.get_cmake_dir()]),
    "--pkgconfigdir": ("the directory of dlpack_helpers.pc (PKG_CONFIG_PATH; its --libs carry no run "
                       "path: add -Wl,-rpath,<libdir>, or use --libs here)",
                       lambda: [_sdk.get_pkgconfig_dir()]),
    "--manifest": ("the specification's manifest abi.toml (functions, parameters, statuses, structs, "
                   "constants), for binding generators", lambda: [_sdk.get_manifest_path()]),
    "--cflags": ("compiler flags: -I<includedir>", _sdk.cflags),
    "--libs": ("linker flags: -L<libdir> -Wl,-rpath,<libdir> -ldlpack_helpers", _sdk.libs),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dlpack_helpers",
        description="Print where the C/C++ SDK of the installed dlpack_helpers wheel is.")
    for opt, (help_text, _) in _OPTIONS.items():
        parser.add_argument(opt, dest="wanted", action="append_const", const=opt, help=help_text)
    args = parser.parse_args(argv)
    if not args.wanted:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: give at least one of {', '.join(_OPTIONS)}", file=sys.stderr)
        return 2
    try:
        words = [w for opt in args.wanted for w in _OPTIONS[opt][1]()]
    except _sdk.SDKNotFoundError as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 1
    print(" ".join(words))
    return 0


if __name__ == "__main__":
    sys.exit(main())
