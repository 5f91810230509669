"""Issue 34 items 3 and 5: a failing call through the package's fast entries (the vectorcall entries of
`import_tensor` and `Tensor.__dlpack__`) frees its exception's objects when it returns. They
were queued in PyO3's deferred reference pool, drained only by some later package call, so a
retry or probing loop of 300,000 failing calls held 50 MB."""
import tracemalloc

import numpy as np
import pytest

import dlpack_helpers as dh


class NotACapsule:
    def __dlpack__(self, **kw):
        return 42

    def __dlpack_device__(self):
        return (1, 0)


T = dh.import_tensor(np.arange(3.0))
CALLS = {
    "import_tensor_bad_result": lambda: dh.import_tensor(NotACapsule()),
    "import_tensor_keywords": lambda: dh.import_tensor(NotACapsule(), copy=False),
    "dunder_bad_stream": lambda: T.__dlpack__(stream=5),
    "dunder_max_version_dl_device": lambda: T.__dlpack__(max_version=(1, 3), dl_device=(2, 0)),
    "dunder_bad_max_version": lambda: T.__dlpack__(max_version=(1,)),
}


def growth(call, n):
    """Bytes traced by tracemalloc after n failing calls, nothing else of the package between."""
    for _ in range(100):  # warm caches and free lists
        with pytest.raises(Exception):
            call()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(n):
            try:
                call()
            except (BufferError, TypeError, ValueError):
                pass
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_failing_fast_calls_hold_nothing(name):
    # 20,000 failing calls: each exception's message is about 150 bytes, so a queue would hold
    # about 3 MB; what is freed at once stays at the allocator's noise.
    grown = growth(CALLS[name], 20_000)
    assert grown < 200_000, f"{name}: {grown} bytes still held after 20,000 failing calls"


# Issue 34 item 5: a re-import of our own Tensor shares its view owner instead of nesting, so a
# chain `x = import_tensor(x)` releases in one step (100,000 links overflowed the C stack: each
# link's release ran the next one's from inside its deleter). In a child process: a library that
# nests dies of SIGSEGV, and only this test fails.
_CHAIN_CHILD = r"""
import json, sys
sys.path[:0] = json.loads(sys.argv[1])
from producers import Counter
import numpy as np
import dlpack_helpers as dh
c = Counter()
x = dh.import_tensor(c.capsule())
first = x.data_ptr
for i in range(100_000):
    x = dh.import_tensor(x, use_exchange_api=(i % 2 == 0))
assert x.data_ptr == first and np.from_dlpack(x).tolist() == [0.0, 1.0, 2.0, 3.0]
a = np.from_dlpack(x)
del x
assert c.calls == 0, c.calls  # the array still holds the memory
del a
assert c.calls == 1, c.calls
print("ok")
"""


def test_deep_re_import_chain_releases_flat():
    import json
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", _CHAIN_CHILD, json.dumps(sys.path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr[-2000:])
