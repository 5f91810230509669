"""dlpack_helpers: accept any DLPack-capable Python object, through the dlpack-helpers C library.

>>> import numpy as np, dlpack_helpers as dh
>>> with dh.import_tensor(np.arange(6.0).reshape(2, 3)) as t:
...     t.shape, str(t.dtype), str(t.device)
((2, 3), 'float64', 'cpu:0')

The package is a native extension module (``dlpack_helpers._native``) linked against the shared
C library installed with it (``dlpack_helpers/lib/``), so it shares the library, and its
process-wide state, with any C extension loaded in the same process. Every rule is the library's.

Errors are the exceptions the array API prescribes (``BufferError``, ``TypeError``,
``ValueError``, ``AttributeError``), carrying the library's message and status name;
``DLPackHelpersError`` (a ``RuntimeError``) for internal errors.

``lib`` is the C API through ``ctypes`` (``dlpack_helpers._lib``), for callers who want the raw
functions; it is loaded on first use and is the same library the extension uses
(``lib.loaded`` is the ``ctypes.PyDLL``).
"""

from __future__ import annotations

import sys as _sys

from ._native import (
    DLPackHelpersError,
    Device,
    DType,
    Tensor,
    __dlpack_info__,
    device,
    import_tensor,
    info,
    is_cpu_accessible,
    raise_status,
)
# the wheel's C/C++ SDK (see _sdk.py)
from ._sdk import get_cmake_dir, get_include, get_library_dir, get_library_path, get_manifest_path

__all__ = [
    "info", "device", "is_cpu_accessible", "import_tensor", "Tensor", "DType", "Device",
    "DLPackHelpersError", "raise_status", "lib", "__dlpack_info__",
    "get_include", "get_library_dir", "get_library_path", "get_cmake_dir", "get_manifest_path",
]
__version__ = "0.1.0"

_raise = raise_status


class _Lib:
    """``dlpack_helpers.lib``: the ctypes bindings of the C API (``dlpack_helpers._lib.lib``, a
    ``ctypes.PyDLL``), loaded on the first attribute or item read, so that importing the package
    does not import ctypes. Reads are forwarded: ``dh.lib.dlpack_get_info`` is the very function
    object ``_lib.lib.dlpack_get_info`` is; ``dh.lib.loaded`` is that ``PyDLL``.

    A forwarding object rather than a module-level ``__getattr__``: with one, CPython 3.11 read
    every ``dh.<name>`` (``dh.import_tensor``) through the generic module lookup instead of its
    specialized path (267 instructions per read in a profile: docs/performance.md, issue 26)."""

    __slots__ = ()

    @property
    def loaded(self):
        from ._lib import lib
        return lib

    def __getattr__(self, name: str):
        from ._lib import lib
        return getattr(lib, name)

    def __getitem__(self, name: str):
        from ._lib import lib
        return lib[name]

    def __setattr__(self, name: str, value) -> None:
        # Forwarded too, so that `dh.lib.f = g` and `unittest.mock.patch.object(dh.lib, "f")`
        # act on the bindings, as they did when `dh.lib` was the `PyDLL` itself.
        if name == "loaded":
            raise AttributeError("dlpack_helpers.lib.loaded is read-only (it is the PyDLL)")
        from ._lib import lib
        setattr(lib, name, value)

    def __delattr__(self, name: str) -> None:
        if name == "loaded":
            raise AttributeError("dlpack_helpers.lib.loaded is read-only (it is the PyDLL)")
        from ._lib import lib
        delattr(lib, name)

    def __reduce__(self):
        # Pickled by name: `dlpack_helpers.lib`, the one forwarding object.
        return "lib"

    def __dir__(self):
        from ._lib import lib
        return sorted(set(dir(lib)) | {"loaded"})

    def __repr__(self) -> str:
        import sys
        loaded = sys.modules.get("dlpack_helpers._lib")
        if loaded is None:
            return "<dlpack_helpers.lib: ctypes bindings of libdlpack_helpers, loaded on first use>"
        return f"<dlpack_helpers.lib: forwards to {loaded.lib!r}>"


lib = _Lib()
del _Lib
# The wheel's C SDK folder `dlpack_helpers/lib/` would otherwise be importable as the namespace
# package `dlpack_helpers.lib`: `import dlpack_helpers.lib`, `importlib.import_module` or
# `unittest.mock.patch("dlpack_helpers.lib.<name>")` imported the folder and replaced this
# object for the whole process (new-user run). Registered under that name, every import of it
# gives this object.
_sys.modules[__name__ + ".lib"] = lib
# A module spec (no loader: nothing to run), for `importlib.util.find_spec`, which raised
# ValueError for an entry of sys.modules without one. The class of this package's own spec.
type(lib).__spec__ = type(__spec__)(__name__ + ".lib", None)
