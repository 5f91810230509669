"""Issue 34 item 9: `scripts/test --list` cuts a long description at a word boundary and marks
the cut (it cut mid-word: "The GPU run itself h")."""
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "scripts", "test")),
                    reason="needs the source checkout's scripts/test (the sdist's test run has none)")
def test_list_cuts_descriptions_at_word_boundaries():
    out = subprocess.run([os.path.join(ROOT, "scripts", "test"), "--list"], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    parts = {}
    for line in out.splitlines():
        m = re.match(r"\s+(\d+)\s+(\S+)\s+needs: .{13} (.*)$", line)
        if m:
            parts[m.group(2)] = m.group(3)
    assert len(parts) >= 20, out
    for name, summary in parts.items():
        first = open(os.path.join(ROOT, "scripts", "test.d", f"{m_num(name, out)}-{name}.sh")).readline()
        full = re.sub(r"^#\s*", "", first).split(":")[0].strip()
        if summary.endswith("..."):
            kept = summary[:-3]
            assert full.startswith(kept) and full[len(kept)] == " ", (name, summary, full)
        else:
            assert summary == full, (name, summary, full)


def m_num(name, out):
    return re.search(rf"(\d+)\s+{re.escape(name)}\s", out).group(1)
