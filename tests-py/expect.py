"""Expected failures against the ctypes package (before issue 11's native module): the tests say
the right behaviour; this marker records, strictly, which of them today's package still misses.
Once the package is the native extension (``dlpack_helpers._native``) the marker is inert and
the tests must pass."""
import pytest

import dlpack_helpers as dh

CTYPES_PACKAGE = not hasattr(dh, "_native")


def until_native(reason: str):
    """xfail (strict: an unexpected pass fails too) while the package is the ctypes one."""
    return pytest.mark.xfail(CTYPES_PACKAGE, reason=f"ctypes package: {reason}", strict=True)
