"""NumPy's own DLPack tests (``numpy/_core/tests/test_dlpack.py``, read from the installed NumPy at
test time, never copied into this repository), run twice in a subprocess: as shipped, and with
every consumer call ``np.from_dlpack(x, ...)`` rewritten (on the syntax tree) to
``np.from_dlpack(dh.import_tensor(x), ...)``, so that NumPy consumes what the package re-exports.
Every test that passes as shipped must pass through the package too."""
import ast
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import dlpack_helpers as dh
from expect import until_integrity

SUITE = Path(np.__file__).resolve().parent / "_core" / "tests" / "test_dlpack.py"
PACKAGE_PARENT = Path(dh.__file__).resolve().parent.parent


class _ThroughImportTensor(ast.NodeTransformer):
    """``np.from_dlpack(x, ...)`` -> ``np.from_dlpack(dh.import_tensor(x), ...)``."""

    def __init__(self):
        self.count = 0

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr == "from_dlpack" and isinstance(f.value, ast.Name)
                and f.value.id == "np" and node.args):
            wrap = ast.Attribute(value=ast.Name(id="_dh", ctx=ast.Load()), attr="import_tensor", ctx=ast.Load())
            node.args[0] = ast.Call(func=wrap, args=[node.args[0]], keywords=[])
            self.count += 1
        return node


def rewritten(source: str) -> tuple:
    tree = ast.parse(source)
    t = _ThroughImportTensor()
    tree = t.visit(tree)
    tree.body.insert(0, ast.parse("import dlpack_helpers as _dh").body[0])
    return ast.unparse(ast.fix_missing_locations(tree)), t.count


def _run(path: Path, tmp_path: Path) -> dict:
    """Run one copy of the suite in a fresh interpreter; {test id: outcome}."""
    report = tmp_path / (path.stem + ".xml")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PACKAGE_PARENT), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                        "--rootdir", str(path.parent), str(path)],
                       capture_output=True, text=True, env=env, cwd=path.parent, timeout=600)
    assert report.exists(), r.stdout + r.stderr
    out = {}
    for case in ET.parse(report).iter("testcase"):
        name = f"{case.get('classname').split('.')[-1]}::{case.get('name')}"
        kinds = {child.tag for child in case}
        out[name] = ("failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "passed")
    return out


def _counts(outcomes: dict) -> dict:
    c = {}
    for v in outcomes.values():
        c[v] = c.get(v, 0) + 1
    return c


@until_integrity("legacy imports are re-exported writable (test_writeable)")
@pytest.mark.skipif(not SUITE.is_file(), reason="this NumPy does not ship numpy/_core/tests/test_dlpack.py")
def test_numpy_dlpack_suite_passes_through_import_tensor(tmp_path):
    source = SUITE.read_text()
    shipped = tmp_path / "shipped" / "test_dlpack.py"
    routed = tmp_path / "routed" / "test_dlpack.py"
    shipped.parent.mkdir()
    routed.parent.mkdir()
    shipped.write_text(source)
    text, calls = rewritten(source)
    assert calls >= 20, f"only {calls} np.from_dlpack calls rewritten: has the suite changed shape?"
    routed.write_text(text)
    base, ours = _run(shipped, tmp_path), _run(routed, tmp_path)
    print(f"\nNumPy {np.__version__} test_dlpack.py: {calls} consumer calls rewritten; "
          f"as shipped {_counts(base)}, through dh.import_tensor {_counts(ours)}")
    assert set(base) == set(ours)
    assert _counts(base).get("passed", 0) >= 50
    lost = sorted(k for k, v in base.items() if v == "passed" and ours[k] != "passed")
    assert not lost, f"pass as shipped but not through dh.import_tensor: {lost}"
