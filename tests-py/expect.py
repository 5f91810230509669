"""Expected failures while issue 11's pieces land: the tests say the right behaviour; these
markers record, strictly (an unexpected pass fails too), which of them the code under test still
misses, by what that code has:

- INTEGRITY: the library of the data-integrity issue (its header has
  ``DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR``): legacy imports read-only and reported as legacy
  for raw capsules too, exceptions that do not derive from ``Exception`` never caught.
- NATIVE: the package is the native extension (``dlpack_helpers._native``), which passes
  producer exceptions through unchanged (the ctypes package re-creates them).

Once both have landed every marker is inert and the tests must pass."""
from pathlib import Path

import pytest

import dlpack_helpers as dh

ROOT = Path(__file__).resolve().parent.parent
NATIVE = hasattr(dh, "_native")
INTEGRITY = "DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR" in (ROOT / "include" / "dlpack_helpers.h").read_text()


def until_integrity(reason: str):
    """xfail (strict) while the library lacks the data-integrity changes."""
    return pytest.mark.xfail(not INTEGRITY, reason=f"library before the integrity issue: {reason}", strict=True)


def until_native_or_integrity(reason: str):
    """xfail (strict) until either has landed (each fixes it on its own)."""
    return pytest.mark.xfail(not (NATIVE or INTEGRITY), reason=f"ctypes package and library before "
                             f"the integrity issue: {reason}", strict=True)


def until_native(reason: str):
    """xfail (strict) until the package is native and the library has the integrity changes."""
    return pytest.mark.xfail(not (NATIVE and INTEGRITY), reason=f"ctypes package or library before "
                             f"the integrity issue: {reason}", strict=True)
