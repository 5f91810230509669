"""Artifact sizes and leanness checks (issue 14), standard library only.

Compares what cargo leaves in target/release (the files the CMake install copied as they were
before scripts/build existed: release profile with `debug = 1`) with the lean tree scripts/build
lays out (sdk/ by default), and links a static consumer that uses two helpers
(benches/c/two_helpers.c) with and without --gc-sections.

Checks (exit 1 on failure, every figure printed):
- the installed .so and .a carry no .debug_* section and no LLVM bitcode;
- the .so names its debug file in .gnu_debuglink with the right CRC-32, and both carry the same
  build id (what gdb and valgrind verify before they use it);
- the debug file has the debug information (.debug_info, .debug_line);
- every consumer runs; the --gc-sections static consumer defines exactly the two dlpack_*
  functions it calls (without it, the whole library comes along).

Usage: python3 benches/sizes.py [--sdk DIR] [--cargo DIR] [--work DIR] [--write-doc FILE]
--write-doc replaces section "## 6. Artifact sizes" of FILE (docs/performance.md) with the table.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## 6. Artifact sizes"
# The system libraries a Rust static library needs here: rustc's answer (one source for the list).
NATIVE = subprocess.run([str(ROOT / "scripts" / "native-static-libs")], check=True, capture_output=True,
                        text=True).stdout.split()
USED = {"dlpack_get_device", "dlpack_tensor_delete"}
failures = []


def run(*cmd, **kw):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True, **kw).stdout


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def sections(path):
    out = run("readelf", "-S", "-W", path)
    return set(re.findall(r"\]\s+(\.\S+)", out))


def build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", run("readelf", "-n", path))
    return m.group(1) if m else None


def debuglink(path, work):
    dump = Path(work) / "debuglink.bin"
    run("objcopy", "--dump-section", f".gnu_debuglink={dump}", path, Path(work) / "scratch.so")
    raw = dump.read_bytes()
    name = raw.split(b"\0", 1)[0].decode()
    crc = int.from_bytes(raw[-4:], "little")
    return name, crc


def dlpack_functions(binary):
    out = run("nm", "--defined-only", binary)
    return {l.split()[-1] for l in out.splitlines() if re.search(r" [Tt] dlpack_", l)}


def kib(n):
    return f"{n / 1024:,.0f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:,.1f} MiB"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sdk", default=str(ROOT / "sdk"))
    ap.add_argument("--cargo", default=str(ROOT / "target" / "release"))
    ap.add_argument("--work", default=None)
    ap.add_argument("--write-doc", default=None)
    a = ap.parse_args()
    sdk, cargo = Path(a.sdk), Path(a.cargo)
    work = Path(a.work or tempfile.mkdtemp())
    work.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", "cc")

    so = next((sdk / "lib").glob("libdlpack_helpers.so.*.*.*"))
    ar = sdk / "lib" / "libdlpack_helpers.a"
    dbg = sdk / "lib" / ".debug" / (so.name + ".debug")
    old_so, old_ar = cargo / "libdlpack_helpers.so", cargo / "libdlpack_helpers.a"
    for p in (so, ar, dbg, old_so, old_ar):
        if not p.exists():
            sys.exit(f"error: {p} is missing (run scripts/build first)")

    # ---- leanness of the installed files ----
    for p in (so, ar):
        s = sections(p)
        check(not any(x.startswith(".debug_") for x in s) and ".llvmbc" not in s,
              f"{p.name} has no .debug_* section and no .llvmbc ({len(s)} sections)")
    ds = sections(dbg)
    check({".debug_info", ".debug_line"} <= ds, f"{dbg.name} carries .debug_info and .debug_line")
    name, crc = debuglink(so, work)
    real_crc = zlib.crc32(dbg.read_bytes()) & 0xFFFFFFFF
    check(name == dbg.name and crc == real_crc,
          f".gnu_debuglink of {so.name} names {name} with CRC {crc:08x} (file: {real_crc:08x})")
    check(build_id(so) is not None and build_id(so) == build_id(dbg),
          f"build id of {so.name} and its debug file agree ({build_id(so)})")

    # ---- consumers ----
    src = ROOT / "benches" / "c" / "two_helpers.c"
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'include'}"]
    bins = {}
    for label, archive, gc in (("before", old_ar, False), ("before_gc", old_ar, True),
                               ("now", ar, False), ("now_gc", ar, True)):
        exe = work / f"two_helpers_static_{label}"
        run(cc, *flags, src, "-o", exe, archive, *NATIVE, *(["-Wl,--gc-sections"] if gc else []))
        bins[label] = exe
    shared = work / "two_helpers_shared"
    run(cc, *flags, src, "-o", shared, f"-L{sdk / 'lib'}", "-ldlpack_helpers", f"-Wl,-rpath,{sdk / 'lib'}")
    for exe in list(bins.values()) + [shared]:
        r = subprocess.run([str(exe)], capture_output=True, text=True)
        check(r.returncode == 0, f"{exe.name} runs: {r.stdout.strip()}")
    kept = dlpack_functions(bins["now_gc"])
    whole = dlpack_functions(bins["now"])
    check(kept == USED, f"with --gc-sections the static consumer defines {len(kept)} dlpack_* "
          f"functions ({', '.join(sorted(kept))}); without it {len(whole)}")
    exported = {l.split()[-1].split("@")[0] for l in run("nm", "-D", "--defined-only", so).splitlines()}
    check(whole <= exported and len(whole) == len({e for e in exported if e.startswith("dlpack_")}),
          "without --gc-sections the static consumer carries every export")

    size = lambda p: p.stat().st_size
    stripped_old = work / "cargo-stripped.so"
    run("strip", "-o", stripped_old, old_so)
    rows = [
        ("`libdlpack_helpers.so`", size(old_so), size(so)),
        ("`libdlpack_helpers.a`", size(old_ar), size(ar)),
        ("static consumer of two helpers", size(bins["before"]), size(bins["now"])),
        ("the same with `-Wl,--gc-sections`", size(bins["before_gc"]), size(bins["now_gc"])),
        ("debug file (`lib/.debug/*.debug`, optional)", None, size(dbg)),
    ]
    L = [SECTION, "",
         "Written by `python3 benches/sizes.py --write-doc docs/performance.md` after `scripts/build`; "
         "`scripts/test.d/61-artifacts.sh` runs the same checks on every test run. *Before*: the files "
         "cargo leaves in `target/release` (release profile with `debug = 1`), which the CMake install "
         "used to copy as they were. *Now*: what `scripts/build` and `cmake --install` ship.", "",
         "| artifact | before | now |", "|---|---:|---:|"]
    for what, before, now in rows:
        L.append(f"| {what} | {kib(before) if before is not None else '—'} | {kib(now)} |")
    L += ["",
          f"For scale: cargo's `.so` stripped by hand is {kib(size(stripped_old))}; the shipped one "
          f"is linked from the static library with the version script and `--gc-sections` "
          f"({kib(size(so))}). The static consumer (`benches/c/two_helpers.c`) calls "
          f"`dlpack_get_device` and `dlpack_tensor_delete`: with `--gc-sections` it defines exactly "
          f"those {len(kept)} of the library's {len(whole)} functions; the rest of its size is "
          "code of Rust's standard library that they reach (not itemized) and the symbol table. Without `--gc-sections` every function of the library "
          "comes along. Consumers that link the static library should pass `-Wl,--gc-sections` "
          "(docs/linking.md).", ""]
    text = "\n".join(L)
    print(text)
    if a.write_doc:
        doc = Path(a.write_doc)
        old = doc.read_text()
        i = old.find(SECTION)
        if i < 0:
            new = old.rstrip("\n") + "\n\n" + text
        else:
            j = old.find("\n## ", i + len(SECTION))
            new = old[:i] + text + ("" if j < 0 else old[j:])
        doc.write_text(new.rstrip("\n") + "\n")
        print(f"wrote {doc}")
    if a.work is None:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")


if __name__ == "__main__":
    main()
