"""Run the tests against the package in python/ (or an installed one) and the release library."""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
try:
    import dlpack_helpers  # noqa: F401  (pip install . at the root; setup_venv does it)
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))
os.environ.setdefault("DLPACK_HELPERS_LIBRARY", str(ROOT / "target" / "release" / "libdlpack_helpers.so"))


# The free-threaded part of scripts/test (issue 36) sets DLPACK_HELPERS_EXPECT_GIL_OFF=1: importing
# the package must leave the GIL off, and nothing in the session may turn it back on.
EXPECT_GIL_OFF = os.environ.get("DLPACK_HELPERS_EXPECT_GIL_OFF") == "1"
if EXPECT_GIL_OFF:
    import dlpack_helpers  # noqa: F401,E402
    assert not sys._is_gil_enabled(), "importing dlpack_helpers turned the GIL on"


def pytest_sessionfinish(session, exitstatus):
    if EXPECT_GIL_OFF and sys._is_gil_enabled():
        print("\nerror: the GIL was turned on during the test session (DLPACK_HELPERS_EXPECT_GIL_OFF)")
        session.exitstatus = 1
