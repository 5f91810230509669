"""The requirements of the specification, read from its Markdown (spec/FORMAT.md's syntax).

A requirement is defined on one line: `- **ID** [impl] text`, `[impl, untestable: reason]` or
`[caller] text`. Only `[impl]` requirements are testable; the suite must cover each of them.
The profile of a requirement follows its ID: CORE-/ABI-/OWN-/VER-/CONF- core, STREAMS- streams,
PY- python, EXCH- exchange.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

LINE = re.compile(r"^\s*[-*]\s+\*\*([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+-[0-9]+)\*\*\s+\[([^\]]+)\]\s*(.*)$")
PREFIX_PROFILE = {"CORE": "core", "ABI": "core", "OWN": "core", "VER": "core", "CONF": "core",
                  "STREAMS": "streams", "PY": "python", "EXCH": "exchange"}


@dataclass
class Requirement:
    id: str
    tag: str
    text: str
    file: str
    profile: str

    @property
    def testable(self) -> bool:
        return self.tag.strip() == "impl"


def requirements(spec_dir: Path) -> dict[str, Requirement]:
    out: dict[str, Requirement] = {}
    for path in sorted(spec_dir.rglob("*.md")):
        if path.name == "FORMAT.md":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            m = LINE.match(line)
            if not m:
                continue
            rid, tag, text = m.groups()
            prof = PREFIX_PROFILE.get(rid.split("-", 1)[0], "core")
            if rid.startswith("EXCH-TABLE-"):
                prof = "table"
            out.setdefault(rid, Requirement(rid, tag, text, str(path.relative_to(spec_dir)), prof))
    return out
