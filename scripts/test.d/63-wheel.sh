# The wheel and the sdist as published (issue 23): the repaired wheel's tag and `auditwheel show`
# (manylinux_2_17: linked with Zig against glibc 2.17); its files (one C library file plus a
# linker script, a stripped extension whose debug file is kept apart, nothing else binary); the
# size of every shipped binary against the limits in docs/python.md; the checkout mounted
# read-only, installed with `pip install` and packed with `python -m build --sdist`, then
# byte-for-byte unchanged; the sdist's file list (what a build needs, nothing else), and the
# sdist installed into a fresh virtual environment, where the package's tests pass.
# The wheel installed without Rust and used is scripts/test.d/55-python-sdk.sh.
# needs: venv
source "$(dirname "$0")/../common.sh"
setup_venv
need readelf "binutils"
need objdump "binutils"
fail() { echo "FAIL: $*" >&2; exit 1; }
WORK="$ROOT/target/wheel-check"
rm -rf "$WORK/run"
mkdir -p "$WORK/run"
RUN="$WORK/run"

# ---- limits (bytes), documented in docs/python.md "The wheel" -----------------------------------
MAX_LIBRARY=$((1024 * 1024))          # dlpack_helpers/lib/libdlpack_helpers.so.0.1 (0.58 MB today)
MAX_EXTENSION=$((1024 * 1024))        # dlpack_helpers/_native.abi3.so (0.60 MB today)
MAX_WHEEL=$((1536 * 1024))            # the .whl file (0.62 MB today)
MAX_SDIST=$((1024 * 1024))            # the .tar.gz (0.32 MB today)

shopt -s nullglob
wheels=("$WHEEL_DIR"/dlpack_helpers-*.whl)
built=("$WHEEL_DIR"/built/dlpack_helpers-*.whl)
shopt -u nullglob
[ "${#wheels[@]}" = 1 ] && [ "${#built[@]}" = 1 ] || fail "expected one built and one repaired wheel in $WHEEL_DIR"
WHEEL="${wheels[0]}"

# ---- 1. tag and auditwheel show ------------------------------------------------------------------
echo "== $(basename "$WHEEL")"
case "$(basename "$WHEEL")" in
  *-cp311-abi3-*"$WHEEL_PLAT"*.whl) ;;
  *) fail "the repaired wheel is not tagged cp311-abi3-$WHEEL_PLAT: $(basename "$WHEEL")" ;;
esac
for w in "${built[0]}" "$WHEEL"; do
  show="$("$VENV/bin/auditwheel" show "$w" 2>&1 | tr -s ' \n' '  ')" || fail "auditwheel show $(basename "$w"): $show"
  case "$show" in
    *"consistent with the following platform tag: \"$WHEEL_PLAT\""*) ;;
    *) fail "auditwheel show $(basename "$w") does not report $WHEEL_PLAT: $show" ;;
  esac
done
echo "ok: tagged $WHEEL_PLAT; auditwheel show: consistent with \"$WHEEL_PLAT\" (the wheel as built and repaired)"

# ---- 2. the files in the wheel ---------------------------------------------------------------------
X="$RUN/wheel"
"$PY" -m zipfile -e "$WHEEL" "$X"
mapfile -t elves < <(cd "$X" && find . -type f -exec sh -c 'head -c4 "$1" | grep -q "ELF" && echo "${1#./}"' _ {} \; | sort)
want=("dlpack_helpers/_native.abi3.so" "dlpack_helpers/lib/libdlpack_helpers.so.0.1")
[ "${elves[*]}" = "${want[*]}" ] || fail "the wheel's binaries are [${elves[*]}], expected [${want[*]}] (one copy of the library)"
grep -qx 'INPUT(-l:libdlpack_helpers.so.0.1)' "$X/dlpack_helpers/lib/libdlpack_helpers.so" \
  || fail "lib/libdlpack_helpers.so is not the linker script naming libdlpack_helpers.so.0.1"
(cd "$X" && find . -name '*.a' -o -name '*.debug' -o -name '.debug' | grep .) && fail "the wheel carries an archive or debug files"
build_id() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }
for f in "${elves[@]}"; do
  b="$X/$f"
  readelf -S -W "$b" | grep -q '\.debug_info' && fail "$f carries debug information"
  link="$(readelf --string-dump=.gnu_debuglink "$b" | sed -n 's/.*\]  *\([^ ]*\.debug\)$/\1/p' | head -n1)"
  [ -n "$link" ] && [ -f "$WHEEL_DIR/debug/$link" ] || fail "$f: no .gnu_debuglink, or its debug file '$link' is not in target/wheels/debug"
  [ -n "$(build_id "$b")" ] && [ "$(build_id "$b")" = "$(build_id "$WHEEL_DIR/debug/$link")" ] \
    || fail "$f: build id '$(build_id "$b")' does not match its debug file's"
  # The glibc floor: the newest GLIBC_ symbol version each file needs, and which symbols need it.
  newest="$(objdump -T "$b" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n1)"
  echo "   $f: $(stat -c %s "$b") bytes, stripped, debug file $link; newest glibc symbol version $newest" \
       "($(objdump -T "$b" | awk -v v="$newest" '$0 ~ v"[ )]" {print $NF}' | sort -u | paste -sd, -))"
done
# The specification's manifest travels with the SDK, as committed.
cmp -s "$X/dlpack_helpers/share/dlpack_helpers/abi.toml" "$ROOT/spec/abi.toml" \
  || fail "the wheel does not carry share/dlpack_helpers/abi.toml as spec/abi.toml"
echo "ok: dlpack_helpers/share/dlpack_helpers/abi.toml is spec/abi.toml"
# The license travels with the package: LICENSE, as committed, in the wheel's .dist-info.
lic="$(cd "$X" && find . -path './*.dist-info/*' -name 'LICENSE' | head -n1)"
[ -n "$lic" ] && cmp -s "$X/$lic" "$ROOT/LICENSE" || fail "the wheel's .dist-info does not carry LICENSE as committed"
echo "ok: ${lic#./} is the repository's LICENSE"
readelf -d "$X/dlpack_helpers/_native.abi3.so" | grep -q 'NEEDED.*\[libdlpack_helpers.so.0.1\]' \
  || fail "_native.abi3.so does not need libdlpack_helpers.so.0.1"

# ---- 3. sizes --------------------------------------------------------------------------------------
check_size() {  # check_size <file> <limit> <what>
  local n; n="$(stat -c %s "$1")"
  [ "$n" -le "$2" ] || fail "$3 is $n bytes, over its limit of $2 (docs/python.md)"
  printf '   %-46s %9s bytes (limit %s)\n' "$3" "$n" "$2"
}
echo "== sizes"
check_size "$X/dlpack_helpers/lib/libdlpack_helpers.so.0.1" "$MAX_LIBRARY" "lib/libdlpack_helpers.so.0.1"
check_size "$X/dlpack_helpers/_native.abi3.so" "$MAX_EXTENSION" "_native.abi3.so"
check_size "$WHEEL" "$MAX_WHEEL" "the wheel"

# ---- 4. a read-only checkout: pip install and the sdist; the tree byte-for-byte unchanged ----------
# The checkout is mounted read-only in a private mount namespace (as root, which ignores file
# modes; a non-root user gets a copy without write permission instead). target/ stays writable:
# the builds use its cargo folders (-Ccmake.define...CARGO_TARGET_DIR, as a developer would), while
# scikit-build-core builds in its default temporary folder.
snapshot() {  # every file and link outside target/, .venv/ and .git/, with its content hash
  (cd "$1" && find . \( -path ./target -o -path ./.venv -o -path ./.git \) -prune -o \( -type f -o -type l -o -type d \) -printf '%y %m %p\n' \
     | sort && find . \( -path ./target -o -path ./.venv -o -path ./.git \) -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)
}
ro_build() {  # ro_build <checkout>: what runs against the read-only checkout
  local src="$1"
  "$PY" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation --target "$RUN/ro-install" "$src" \
    -Ccmake.define.DLPACK_HELPERS_CARGO_TARGET_DIR="$CARGO_DIR" \
    -Ccmake.define.DLPACK_HELPERS_PYTHON_CARGO_TARGET_DIR="$CARGO_DIR/python-native" >"$RUN/ro-install.log" 2>&1 \
    || { tail -n 40 "$RUN/ro-install.log"; echo "pip install of the read-only checkout failed"; return 1; }
  "$PY" -m build --sdist --no-isolation --outdir "$RUN/dist" "$src" >"$RUN/sdist.log" 2>&1 \
    || { tail -n 40 "$RUN/sdist.log"; echo "python -m build --sdist of the read-only checkout failed"; return 1; }
}
export -f ro_build
export PY RUN
echo "== the checkout read-only: pip install (temporary build folder) and python -m build --sdist"
t0=$SECONDS
if [ "$(id -u)" = 0 ]; then
  SRC="$ROOT"; CARGO_DIR="$ROOT/target"
  before="$(snapshot "$SRC")"
  export CARGO_DIR
  unshare -m bash -euo pipefail -c '
    mount --make-rprivate / 
    mount --bind "$1" "$1"
    mount --bind "$1/target" "$1/target"
    mount -o remount,bind,ro "$1"
    touch "$1/.ro-probe" 2>/dev/null && { echo "the checkout is still writable"; exit 1; }
    ro_build "$1"' _ "$SRC" || fail "read-only checkout (see above)"
else
  # A copy (git's files only) without write permission; its own cargo folder, since cargo's
  # fingerprints name the source path.
  SRC="$WORK/ro-checkout"; CARGO_DIR="$WORK/ro-cargo"
  rm -rf "$SRC"; mkdir -p "$SRC"
  git -C "$ROOT" ls-files -z --cached --others --exclude-standard | (cd "$ROOT" && xargs -0 cp --parents -p -t "$SRC")
  chmod -R a-w "$SRC"
  before="$(snapshot "$SRC")"
  export CARGO_DIR
  ro_build "$SRC" || fail "read-only checkout (see above)"
fi
after="$(snapshot "$SRC")"
[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") | head -n 20; fail "building changed the checkout"; }
echo "ok: installed and packed from the read-only checkout in $((SECONDS - t0)) s; the tree is byte-for-byte unchanged ($(echo "$before" | grep -c '^f ') files)"
(cd / && env -u DLPACK_HELPERS_LIBRARY PYTHONPATH="$RUN/ro-install" "$PY" -c '
import sys, numpy as np, dlpack_helpers as dh
assert dh.__file__.startswith(sys.argv[1]), dh.__file__
with dh.import_tensor(np.arange(3.0)) as t:
    assert (t.device, t.dtype) == ("cpu:0", "float64"), (t.device, t.dtype)
print("   the read-only build imports:", dh.get_library_path())' "$RUN/ro-install") || fail "the install from the read-only checkout does not work"

# ---- 5. the sdist: its files, then installed into a fresh venv, and the package tests ----------------
shopt -s nullglob; sdists=("$RUN"/dist/dlpack_helpers-*.tar.gz); shopt -u nullglob
[ "${#sdists[@]}" = 1 ] || fail "expected one sdist in $RUN/dist"
SDIST="${sdists[0]}"
check_size "$SDIST" "$MAX_SDIST" "the sdist"
"$PY" - "$SDIST" "$ROOT" <<'PY' || fail "the sdist's file list"
import subprocess, sys, tarfile
sdist, root = sys.argv[1:]
names = {n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n}
files = {n for n in names if not any(m.startswith(n + "/") for m in names)}
tracked = set(subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard"], capture_output=True, text=True, check=True).stdout.split())
extra = sorted(files - tracked - {"PKG-INFO"})
assert not extra, f"the sdist holds files that are not the project's sources: {extra[:10]}"
need = {"pyproject.toml", "LICENSE", "CMakeLists.txt", "Cargo.toml", "Cargo.lock", "clib/Cargo.toml", "clib/build.rs", "scripts/build",
        "scripts/native-static-libs", "abi/dlpack_helpers.map", "include/dlpack_helpers.h", "spec/abi.toml",
        "python/native/Cargo.lock", "python/native/Cargo.toml", "python/dlpack_helpers/_sdk.py",
        "src/lib.rs", "cmake/dlpack_helpersConfig.cmake.in", "tests-py/conftest.py"}
assert need <= files, f"the sdist lacks {sorted(need - files)}"
bad = [n for n in files if n.split("/")[0] in ("target", "build", ".venv", "fuzz", "sdk", "tests-c", "benches")]
assert not bad, bad
print(f"   the sdist holds {len(files)} files, all of them tracked sources; none from target/, build/, .venv")
PY

echo "== pip install of the sdist's sources into a fresh venv (its declared build requirements, pinned)"
t0=$SECONDS
"$PY" -m venv "$RUN/sdist-venv" || fail "python -m venv"
SPY="$RUN/sdist-venv/bin/python"
# The sdist is unpacked (as pip does) into a folder whose path stays the same from run to run,
# and only files whose content changed are rewritten there: cargo's fingerprints name the source
# path and compare times, so its folders (target/wheel-check/cargo-sdist) rebuild exactly what
# the sdist changed.
SDIST_SRC="$WORK/sdist-src"
SDIST_CARGO="$WORK/cargo-sdist"
mkdir -p "$RUN/sdist-unpacked"
tar -xzf "$SDIST" -C "$RUN/sdist-unpacked" --strip-components=1
"$PY" - "$RUN/sdist-unpacked" "$SDIST_SRC" <<'PY'
import filecmp, os, shutil, sys
src, dst = sys.argv[1:]
want = {os.path.relpath(os.path.join(d, f), src) for d, _, fs in os.walk(src) for f in fs}
for d, _, fs in os.walk(dst, topdown=False):
    for f in fs:
        rel = os.path.relpath(os.path.join(d, f), dst)
        if rel not in want:
            os.remove(os.path.join(dst, rel))
    if d != dst and not os.listdir(d):
        os.rmdir(d)
for rel in sorted(want):
    s, t = os.path.join(src, rel), os.path.join(dst, rel)
    if not (os.path.isfile(t) and filecmp.cmp(s, t, shallow=False)):
        os.makedirs(os.path.dirname(t), exist_ok=True)
        shutil.copyfile(s, t)
        shutil.copymode(s, t)
PY
# The build requirements the sdist declares (its pyproject.toml), at the pinned versions, into the
# fresh venv, which then builds without isolation: pip's isolated environment has a new path each
# time, and cargo rebuilds every dependency when the linker's path (Zig's) changes.
"$SPY" -c 'import sys, tomllib; print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["build-system"]["requires"]))' \
  "$SDIST_SRC/pyproject.toml" >"$RUN/build-requires.txt" || fail "reading the sdist's build requirements"
"$SPY" -m pip install --disable-pip-version-check --quiet -r "$RUN/build-requires.txt" -c "$ROOT/scripts/constraints.txt" \
  || fail "pip install of the sdist's build requirements ($(paste -sd' ' "$RUN/build-requires.txt"))"
"$SPY" -m pip install --disable-pip-version-check --quiet --no-build-isolation "$SDIST_SRC" \
  -Ccmake.define.DLPACK_HELPERS_CARGO_TARGET_DIR="$SDIST_CARGO" \
  -Ccmake.define.DLPACK_HELPERS_PYTHON_CARGO_TARGET_DIR="$SDIST_CARGO/python-native" >"$RUN/sdist-install.log" 2>&1 \
  || { tail -n 40 "$RUN/sdist-install.log"; fail "pip install of the sdist in a fresh venv"; }
echo "   built and installed in $((SECONDS - t0)) s"
# The package's tests, from the sdist, against the installed package (and its library, for the
# tests that use ctypes). NumPy, PyArrow and pytest come from the project venv through a .pth
# line (after the venv's own site-packages).
SSITE="$("$SPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$PY" -c 'import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))' > "$SSITE/project-venv.pth"
SLIB="$(cd / && "$SPY" -m dlpack_helpers --library)" || fail "python -m dlpack_helpers --library in the sdist's venv"
# Left out, each for its reason: test_prototypes.py reads include/dlpack_helpers.h and
# test_install.py / test_lifetime.py run scripts or builds of the checkout, test_exchange_streams.py
# compiles the checkout's driver test doubles (tests-c/fake/) (50-python.sh runs them all).
(cd "$SDIST_SRC" && DLPACK_HELPERS_LIBRARY="$SLIB" PYTHONDONTWRITEBYTECODE=1 "$SPY" -m pytest -q -p no:cacheprovider tests-py \
   --ignore=tests-py/test_prototypes.py --ignore=tests-py/test_install.py --ignore=tests-py/test_lifetime.py \
   --ignore=tests-py/test_exchange_streams.py 2>&1 | tail -n 3
 exit "${PIPESTATUS[0]}") || fail "the package's tests against the sdist install"
case "$SLIB" in "$SSITE"/*) ;; *) fail "the sdist's venv loads $SLIB, not its own library" ;; esac
echo "wheel: all checks passed"
