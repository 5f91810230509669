"""conformance/run: the command line, discovery, child processes, coverage and the report.

Usage (conformance/README.md has the whole story):
  conformance/run --lib PATH [--profile NAME]... [--report FILE.json] [--statement FILE.md]
                  [--case GLOB]... [--list] [--coverage-only] [--name TEXT]
  conformance/run --exchange MODULE:TYPE [--report FILE.json]
  conformance/run --pair LIB_A LIB_B       (tensors made by A, released/validated/converted by B)

Exit status: 0 exactly when every selected case of every requested profile passed (a skip is
not a failure; a crash, hang or abort is), and, with --coverage (the default when every case is
selected), every testable requirement of the requested profiles is covered by at least one case.
"""
from __future__ import annotations

import argparse
import fnmatch
import hashlib
import importlib
import json
import os
import pkgutil
import platform
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import registry, spec as specmod
from harness.manifest import Manifest

ROOT = Path(__file__).resolve().parent.parent  # conformance/
SUITE_VERSION = "2026.12.1"
GROUP_TIMEOUT_FLOOR = 5.0


def case_modules(kind: str) -> list[str]:
    pkg = "cases" if kind != "exchange" else "exchange_cases"
    base = ROOT / pkg
    return sorted(f"{pkg}.{m.name}" for m in pkgutil.iter_modules([str(base)]))


def load_cases(modules):
    sys.path.insert(0, str(ROOT))
    for m in modules:
        importlib.import_module(m)
    return registry.CASES


def run_group(spec: dict, case_ids: list[str], timeouts: dict[str, float]) -> dict[str, dict]:
    """Run `case_ids` (one module) in child processes; a crash or hang fails the case in
    progress and the next child goes on after it."""
    results: dict[str, dict] = {}
    remaining = list(case_ids)
    while remaining:
        r, w = os.pipe()
        child_spec = dict(spec, cases=remaining, skip=[], fd=w)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(child_spec, f)
            spec_path = f.name
        env = dict(os.environ, **spec.get("env", {}))
        proc = subprocess.Popen([sys.executable, "-m", "harness.child", spec_path], cwd=str(ROOT),
                                pass_fds=(w,), env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        os.close(w)
        current, started, buf = None, time.monotonic(), b""
        output = bytearray()
        reader = os.fdopen(r, "rb", buffering=0)
        killed_for_time = False
        while True:
            limit = timeouts.get(current, 30.0) if current else 60.0
            left = started + limit - time.monotonic()
            if left <= 0:
                proc.kill()
                killed_for_time = True
                break
            ready, _, _ = select.select([reader, proc.stdout], [], [], min(left, 1.0))
            if proc.stdout in ready:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if chunk:
                    output += chunk[-65536:]
            if reader in ready:
                chunk = os.read(reader.fileno(), 65536)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    msg = json.loads(line)
                    if "start" in msg:
                        current, started = msg["start"], time.monotonic()
                    else:
                        results[msg["end"]] = {"outcome": msg["outcome"], "detail": msg["detail"],
                                               "seconds": msg.get("seconds")}
                        current, started = None, time.monotonic()
        reader.close()
        try:
            rest = proc.stdout.read() if not killed_for_time else b""
        except Exception:
            rest = b""
        output += rest or b""
        rc = proc.wait()
        os.unlink(spec_path)
        tail = output.decode("utf-8", "replace").strip().splitlines()[-6:]
        if current is not None:
            if killed_for_time:
                results[current] = {"outcome": "fail",
                                    "detail": f"hang: no result after {timeouts.get(current, 30.0):.0f} s (killed)"}
            else:
                how = (f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}")
                results[current] = {"outcome": "fail",
                                    "detail": f"crash: the process ended with {how} during the case"
                                              + (f"; last output: {' | '.join(tail)}" if tail else "")}
        elif rc != 0 or killed_for_time:
            # The child died between cases (while importing or loading): every remaining case fails.
            for c in remaining:
                if c not in results:
                    results[c] = {"outcome": "fail",
                                  "detail": f"the case's child process ended (status {rc}) before it ran; "
                                            f"output: {' | '.join(tail)}"}
        remaining = [c for c in remaining if c not in results]
    return results


def discover(lib: str, manifest: Manifest, env: dict) -> dict:
    """What the library says of itself through the info entry point (in a child process, since
    a broken library can crash)."""
    code = ("import json,sys; sys.path.insert(0, sys.argv[1]);"
            "from harness.context import discover_info; print(json.dumps(discover_info(sys.argv[2], sys.argv[3])))")
    p = subprocess.run([sys.executable, "-c", code, str(ROOT), lib, str(manifest.path)],
                       capture_output=True, text=True, env=dict(os.environ, **env), timeout=60)
    if p.returncode != 0:
        return {"error": f"the info entry point could not be read (status {p.returncode}): "
                         f"{p.stderr.strip()[-400:]}"}
    return json.loads(p.stdout.strip().splitlines()[-1])


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="conformance/run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", help="the shared library under test")
    ap.add_argument("--profile", action="append", default=[],
                    help="a profile to test (core, streams, python, exchange); repeatable; default: "
                         "the profiles the library claims")
    ap.add_argument("--exchange", metavar="MODULE:TYPE",
                    help="test the __dlpack_c_exchange_api__ table of a Python type")
    ap.add_argument("--pair", nargs=2, metavar=("LIB_A", "LIB_B"),
                    help="pair mode: A makes tensors, B releases, validates and converts them")
    ap.add_argument("--report", help="write the JSON report here")
    ap.add_argument("--statement", help="write the Markdown conformance statement here")
    ap.add_argument("--case", action="append", default=[], help="only cases matching this glob")
    ap.add_argument("--covers", action="append", default=[],
                    help="only cases covering this requirement ID (repeatable)")
    ap.add_argument("--name", help="the implementation's name in the report")
    ap.add_argument("--manifest", default=str(ROOT.parent / "spec" / "abi.toml"))
    ap.add_argument("--spec", default=str(ROOT.parent / "spec"))
    ap.add_argument("--list", action="store_true", help="list the cases and what they cover")
    ap.add_argument("--no-coverage", action="store_true", help="do not fail on uncovered requirements")
    ap.add_argument("-q", "--quiet", action="store_true", help="print failures and the summary only")
    a = ap.parse_args(argv)

    manifest = Manifest.load(a.manifest)
    requirements = specmod.requirements(Path(a.spec))
    if a.pair:
        from harness import pair as pairmod
        return pairmod.main(a, manifest)

    kind = "exchange" if a.exchange else "lib"
    modules = case_modules("exchange" if a.exchange else "lib")
    cases = load_cases(modules)
    if a.list:
        for c in sorted(cases.values(), key=lambda c: c.id):
            print(f"{c.id:60s} {c.profile:9s} {' '.join(c.covers)}")
        return 0

    from harness import build
    fixture_paths = build.fixtures()
    env = {"LD_PRELOAD": fixture_paths["alloc"]}
    info = {}
    if kind == "lib":
        if not a.lib:
            ap.error("--lib PATH (or --exchange MODULE:TYPE, or --pair A B) is required")
        lib = str(Path(a.lib).resolve())
        if not os.path.exists(lib):
            ap.error(f"--lib {a.lib}: no such file")
        info = discover(lib, manifest, env)
        claimed = [p for p, bit in manifest.profile_bits.items() if info.get("profiles", 0) & bit]
        profiles = a.profile or claimed
        if not profiles:
            print(f"error: the library claims no profile ({info.get('error', 'its info reports none')}) "
                  "and --profile names none", file=sys.stderr)
            return 2
    else:
        lib = None
        profiles = ["table"]
        claimed = profiles
        # The type must be importable and publish a table: otherwise every case would fail on
        # the same missing object, which is no test of anything.
        probe = ("import importlib, sys\n"
                 "mod, _, name = sys.argv[1].partition(':')\n"
                 "obj = importlib.import_module(mod)\n"
                 "for part in name.split('.'):\n    obj = getattr(obj, part)\n"
                 "sys.exit(0 if hasattr(obj, '__dlpack_c_exchange_api__') else 3)\n")
        if ":" not in a.exchange:
            ap.error(f"--exchange {a.exchange!r}: expected MODULE:TYPE")
        p = subprocess.run([sys.executable, "-c", probe, a.exchange], capture_output=True, text=True)
        if p.returncode == 3:
            print(f"error: {a.exchange} has no __dlpack_c_exchange_api__: no table to test", file=sys.stderr)
            return 2
        if p.returncode != 0:
            tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
            print(f"error: --exchange {a.exchange}: the type could not be loaded: {tail}", file=sys.stderr)
            return 2
    for p in profiles:
        if p not in registry.PROFILES:
            ap.error(f"unknown profile {p!r}")

    selected = [c for c in cases.values() if c.profile in profiles
                and (not a.case or any(fnmatch.fnmatch(c.id, g) for g in a.case))
                and (not a.covers or set(a.covers) & set(c.covers))]
    selected.sort(key=lambda c: (c.module, c.id))
    spec = {"root": str(ROOT), "lib": lib, "manifest": str(manifest.path), "exchange": a.exchange,
            "claimed": info.get("profiles", 0) if kind == "lib" else None, "modules": [],
            "tested_profiles": profiles, "env": env}

    results: dict[str, dict] = {}
    by_module: dict[str, list] = {}
    for c in selected:
        by_module.setdefault(c.module, []).append(c)
    t0 = time.monotonic()
    for mod, group in by_module.items():
        gspec = dict(spec, modules=[mod])
        hook = getattr(sys.modules[mod], "child_env", None)
        if hook is not None:  # a module's own environment (e.g. fake drivers on LD_LIBRARY_PATH)
            gspec["env"] = dict(env, **hook(fixture_paths))
        res = run_group(gspec, [c.id for c in group], {c.id: c.timeout for c in group})
        for c in group:
            r = res.get(c.id, {"outcome": "fail", "detail": "no result"})
            if c.advisory and r["outcome"] == "fail":
                r = dict(r, outcome="warn")
            results[c.id] = r
            if r["outcome"] == "fail" or not a.quiet:
                mark = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP", "warn": "WARN"}[r["outcome"]]
                extra = f"  ({r['detail']})" if r["detail"] else ""
                print(f"{mark} {c.id}{extra}", flush=True)

    # Coverage: every testable requirement of the tested profiles has a case (only when the whole
    # suite ran: a --case selection covers what it covers).
    testable = {rid: r for rid, r in requirements.items()
                if r.testable and r.profile in profiles}
    covered: dict[str, list] = {}
    for c in cases.values():
        for rid in c.covers:
            covered.setdefault(rid, []).append(c.id)
    unknown_ids = sorted({rid for c in selected for rid in c.covers if rid not in requirements})
    uncovered = sorted(rid for rid in testable if rid not in covered)
    per_req = {}
    for rid in sorted(testable):
        outs = [results[cid]["outcome"] for cid in covered.get(rid, []) if cid in results]
        if not outs:
            per_req[rid] = "uncovered" if rid in uncovered else "not run"
        elif "fail" in outs:
            per_req[rid] = "fail"
        elif "warn" in outs:
            per_req[rid] = "warn (SHOULD not met)"
        elif "pass" in outs:
            per_req[rid] = "pass"
        else:
            per_req[rid] = "skip"

    n = {k: sum(1 for r in results.values() if r["outcome"] == k) for k in ("pass", "fail", "skip", "warn")}
    elapsed = time.monotonic() - t0
    name = a.name or (info.get("version") and f"{Path(lib).name} {info.get('version')}") or \
        (a.exchange or Path(lib).name)
    report = {
        "schema": "dlpack-helpers-conformance-report/1",
        "suite_version": SUITE_VERSION,
        "spec_version": manifest.spec_version,
        "implementation": {"name": name, "library": lib and os.path.basename(lib),
                           "sha256": lib and sha256(lib), "info": info, "exchange": a.exchange},
        "environment": {"os": platform.system(), "machine": platform.machine(),
                        "python": platform.python_version()},
        "profiles": {"claimed": [p for p, b in manifest.profile_bits.items()
                                 if kind == "lib" and info.get("profiles", 0) & b],
                     "tested": profiles},
        "summary": {**n, "cases": len(results), "seconds": round(elapsed, 2),
                    "requirements_testable": len(testable),
                    "requirements_covered": len(testable) - len(uncovered),
                    "uncovered": uncovered, "unknown_ids": unknown_ids,
                    "partial": bool(a.case or a.covers),
                    "selection": {"case": a.case or [], "covers": a.covers or []},
                    "requirements_run": sum(1 for r in per_req.values() if r not in ("not run", "uncovered"))},
        "cases": {cid: {**results[cid], "covers": list(cases[cid].covers),
                        "profile": cases[cid].profile} for cid in sorted(results)},
        "requirements": per_req,
    }
    if a.report:
        Path(a.report).write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    if a.statement:
        Path(a.statement).write_text(statement(report, requirements))
    whole = not a.case and not a.covers
    # A profile named by --profile that the library does not claim: its missing functions were
    # skipped, so passing its cases states no conformance to it (CONF-CLAIM-2).
    unclaimed = [p for p in profiles if p not in claimed]
    ok = n["fail"] == 0 and not unknown_ids and (a.no_coverage or not whole or not uncovered) \
        and not (whole and unclaimed)
    print(f"\n{name}: {n['pass']} passed, {n['fail']} failed, {n['skip']} skipped, {n['warn']} warnings "
          f"({len(results)} cases, profiles {', '.join(profiles)}, {elapsed:.1f} s); "
          f"requirements covered {len(testable) - len(uncovered)}/{len(testable)}")
    if unknown_ids:
        print(f"cases cite IDs the spec does not define: {' '.join(unknown_ids)}")
    if whole and uncovered and not a.no_coverage:
        print(f"uncovered testable requirements ({len(uncovered)}): {' '.join(uncovered)}")
    if unclaimed:
        print(f"not claimed by the library (dlpack_get_info profiles): {', '.join(unclaimed)}; "
              "its cases ran with missing functions skipped, and no conformance to it is stated")
    if not whole:
        # A --case/--covers selection is no conformance claim: the cases left out were not run
        # (the coverage figure above is the whole suite's, not this run's).
        print(f"SELECTED CASES PASSED ({len(results)} of {len(cases)} cases run; not a conformance verdict)"
              if ok else "SELECTED CASES FAILED (not a conformance verdict)")
    else:
        print("CONFORMS" if ok else "DOES NOT CONFORM")
    return 0 if ok else 1


def statement(report: dict, requirements) -> str:
    s = report["summary"]
    lines = [f"# Conformance statement: {report['implementation']['name']}", "",
             f"- Specification: dlpack-helpers spec {report['spec_version']}",
             f"- Suite: {report['suite_version']}",
             f"- Profiles claimed: {', '.join(report['profiles']['claimed']) or 'none'}; tested: "
             f"{', '.join(report['profiles']['tested'])}",
             f"- Cases: {s['pass']} passed, {s['fail']} failed, {s['skip']} skipped, "
             f"{s['warn']} warnings (a SHOULD not met)",
             f"- Testable requirements covered by the suite's cases: "
             f"{s['requirements_covered']}/{s['requirements_testable']}; tested in this run: "
             f"{s.get('requirements_run', s['requirements_covered'])}"]
    if s.get("partial"):
        sel = s.get("selection", {})
        lines.append("- **Partial run** (only the cases selected by "
                     + "; ".join(f"--{k} {' '.join(v)}" for k, v in sel.items() if v)
                     + "): not a conformance statement")
    lines += ["", "| requirement | result |", "|---|---|"]
    for rid, res in report["requirements"].items():
        lines.append(f"| {rid} | {res} |")
    return "\n".join(lines) + "\n"
