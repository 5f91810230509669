"""The child process that runs one group of cases (python -m harness.child SPEC.json).

The parent (harness/runner.py) starts it with the library under test, the case modules of one
group and the cases to skip (those already run before a crash). Results go to the file
descriptor named in SPEC as protocol lines, one JSON object per line, flushed at once:
  {"start": CASE_ID}                       before a case runs
  {"end": CASE_ID, "outcome": ..., "detail": ...}   after it (pass, fail, skip)
A case that kills the process (a signal, abort, _exit) leaves a start without an end: the
parent reports it as a crash and starts a new child for the cases after it.
"""
from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback


def main() -> int:
    spec = json.loads(open(sys.argv[1], encoding="utf-8").read())
    out = os.fdopen(spec["fd"], "w", buffering=1)
    sys.path.insert(0, spec["root"])
    from harness import registry
    from harness.context import Context

    for mod in spec["modules"]:
        importlib.import_module(mod)
    ctx = Context.load(spec)
    skip = set(spec["skip"])
    for cid in spec["cases"]:
        if cid in skip:
            continue
        c = registry.CASES[cid]
        out.write(json.dumps({"start": cid}) + "\n")
        out.flush()
        t0 = time.monotonic()
        try:
            ctx.begin_case(c)
            c.fn(ctx)
            ctx.end_case()
            outcome, detail = "pass", ""
        except registry.Skip as e:
            outcome, detail = "skip", str(e)
        except registry.Fail as e:
            outcome, detail = "fail", str(e)
        except Exception as e:  # an unexpected exception in a case is a failure, with its trace
            tb = traceback.extract_tb(e.__traceback__)
            where = f"{tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else "?"
            outcome, detail = "fail", f"{type(e).__name__}: {e} (at {where})"
        out.write(json.dumps({"end": cid, "outcome": outcome, "detail": detail,
                              "seconds": round(time.monotonic() - t0, 4)}) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
