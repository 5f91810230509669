"""Every code block of README.md and docs/*.md, extracted and run (issue 14), so a document cannot
drift from the code. Driven by scripts/test.d/64-docs.sh after scripts/build (sdk/ must exist).

What runs, by the fence's language:
  c         compiled as C11 with -Wall -Wextra -Werror against sdk/include (plus Python's include
            folder when it includes Python.h); a block with main() is linked against sdk/lib and
            run (exit status 0), any other block is compiled (-c) as a translation unit
  cpp, c++  the same as C++11 and as C++17
  python    run by the project's .venv Python, with the package installed there by `pip install .`
  sh, bash  run by bash -euo pipefail in a scratch folder that mirrors the checkout (links to each
            top-level entry), so files a block writes (app.c, a.out) stay out of the checkout;
            PREFIX is that folder's sdk/ (what scripts/build lays out)
Other fences (cmake, none) are not programs and are listed as such.

Markers, an HTML comment on the line right before the fence:
  <!-- doc-test: skip: <reason> -->   not run; the reason is printed (every skip needs one)
  <!-- doc-test: save <file> -->      also written to <file> in the scratch folder, for the shell
                                      blocks that follow (blocks run in document order, README.md
                                      first)
Exit status 1 when any block fails; every block is reported with its file and line.
Usage: run_doc_blocks.py [FILE.md ...]   (default: README.md and docs/*.md)
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "target" / "doc-blocks"
SDK = ROOT / "sdk"
PY = os.environ.get("PY", sys.executable)
MARK = re.compile(r"<!--\s*doc-test:\s*(skip|save)\s*:?\s*(.*?)\s*-->")
RUN_LANGS = {"c", "cpp", "c++", "python", "sh", "bash", "shell"}


def blocks(path):
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^```\s*([\w+-]*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1).lower(), i + 1
        j = start
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        mark = MARK.search(lines[i - 1]) if i > 0 else None
        yield lang, start, "\n".join(lines[start:j]) + "\n", (mark.group(1), mark.group(2)) if mark else None
        i = j + 1


def run(cmd, cwd, env=None, timeout=600, stdin=None):
    r = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=timeout)
    return r.returncode, (r.stdout + r.stderr).strip()


def mirror():
    """A scratch folder with a link to each top-level entry of the checkout."""
    tree = WORK / "tree"
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    for entry in ROOT.iterdir():
        if entry.name not in (".git",):
            (tree / entry.name).symlink_to(entry)
    return tree


def main():
    files = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    if len(sys.argv) > 1:  # other documents (64-docs.sh's check that a wrong block fails)
        files = [Path(a).resolve() for a in sys.argv[1:]]
    tree = mirror()
    # Python blocks import the package `pip install .` put into the project's .venv (setup_venv),
    # as a reader would: the native extension is not importable from the source tree.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PREFIX=str(tree / "sdk"), DLPACK_HELPERS_LIBRARY=str(SDK / "lib" / "libdlpack_helpers.so"))
    py_inc = sysconfig.get_paths()["include"]
    inc = [f"-I{SDK / 'include'}"]
    link = [f"-L{SDK / 'lib'}", "-ldlpack_helpers", f"-Wl,-rpath,{SDK / 'lib'}"]
    failed, counts = [], {"run": 0, "compiled": 0, "skipped": 0, "not code": 0}
    n = 0
    for f in files:
        rel = f.relative_to(ROOT) if f.is_relative_to(ROOT) else f
        for lang, line, code, mark in blocks(f):
            n += 1
            where = f"{rel}:{line}"
            if mark and mark[0] == "skip":
                if not mark[1]:
                    failed.append(f"{where}: a skip marker needs a reason")
                print(f"   skip      {where} ({lang or 'text'}): {mark[1]}")
                counts["skipped"] += 1
                continue
            if mark and mark[0] == "save":
                (tree / mark[1]).write_text(code)
            if lang not in RUN_LANGS:
                print(f"   not code  {where} ({lang or 'text'})")
                counts["not code"] += 1
                continue
            src_dir = WORK / f"block{n:02d}"
            src_dir.mkdir(parents=True, exist_ok=True)
            rc, out, what = 0, "", ""
            if lang in ("c", "cpp", "c++"):
                cxx = lang != "c"
                src = src_dir / ("block.cpp" if cxx else "block.c")
                src.write_text(code)
                extra = [f"-I{py_inc}"] if "Python.h" in code else []
                has_main = re.search(r"\bint\s+main\s*\(", code) is not None
                stds = ["c++11", "c++17"] if cxx else ["c11"]
                for std in stds:
                    compiler = "c++" if cxx else "cc"
                    exe = src_dir / f"block-{std}"
                    cmd = [compiler, f"-std={std}", "-Wall", "-Wextra", "-Werror", *inc, *extra, str(src)]
                    cmd += ["-o", str(exe), *link] if has_main else ["-c", "-o", str(exe) + ".o"]
                    rc, out = run(cmd, src_dir)
                    if rc == 0 and has_main:
                        rc, out = run([str(exe)], src_dir, env=env, timeout=120)
                    if rc != 0:
                        break
                what = ("compiled and ran" if has_main else "compiled") + f" ({', '.join(stds)})"
                counts["run" if has_main else "compiled"] += 1
            elif lang == "python":
                rc, out = run([PY, "-"], tree, env=env, stdin=code, timeout=300)
                what = "ran (python)"
                counts["run"] += 1
            else:
                rc, out = run(["bash", "-euo", "pipefail", "-c", code], tree, env=env, timeout=600)
                what = "ran (sh)"
                counts["run"] += 1
            if rc != 0:
                failed.append(where)
                print(f"   FAIL      {where} ({lang}): exit {rc}\n" + "\n".join("      | " + l for l in out.splitlines()[-40:]))
            else:
                print(f"   ok        {where}: {what}")
    print(f"-- {n} code blocks in {len(files)} files: {counts['run']} run, {counts['compiled']} compiled, "
          f"{counts['skipped']} skipped with a reason, {counts['not code']} not code")
    if failed:
        sys.exit("FAIL: documentation blocks: " + ", ".join(failed))


if __name__ == "__main__":
    main()
