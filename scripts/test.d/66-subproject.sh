# This repository as a CMake subproject (issue 14): tests/cmake-subproject pulls the checkout in
# with add_subdirectory (dlpack_helpers::dlpack_helpers shared, the default) and with FetchContent
# (SOURCE_DIR, a local path; DLPACK_HELPERS_USE_STATIC=ON: static), and
# builds C and C++ consumers of dlpack_helpers::{dlpack_helpers,shared,static}. Checked: the
# subproject adds no tests or install rules of its own, each program needs the right library
# (the SONAME with its symbol version, or none), and every program runs.
source "$(dirname "$0")/../common.sh"
setup_venv
need cmake "installed into .venv from scripts/requirements.txt (cmake>=3.20)"
need readelf "binutils"
WORK="$ROOT/target/subproject"
rm -rf "$WORK"; mkdir -p "$WORK"
JOBS="${DLPACK_HELPERS_JOBS:-2}"
fail() { echo "FAIL: $*" >&2; exit 1; }
SONAME="$(readelf -d "$LIBDIR/libdlpack_helpers.so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')"
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(libdlpack_helpers[^]]*\)\].*/\1/p'; }

# Two configurations cover both ways in and both modes of the default target (each one also
# links dlpack_helpers::shared and dlpack_helpers::static explicitly).
for config in add_subdirectory:shared FetchContent:static; do
  how="${config%%:*}"
  for kind in "${config##*:}"; do
    B="$WORK/$how-$kind"
    use_static=OFF; [ "$kind" = static ] && use_static=ON
    # CARGO_TARGET_DIR: reuse this checkout's target/ (same sources, so cargo has nothing to do).
    cmake -S tests/cmake-subproject -B "$B" -DDLPACK_HELPERS_SOURCE="$ROOT" -DHOW="$how" \
      -DDLPACK_HELPERS_USE_STATIC="$use_static" -DDLPACK_HELPERS_CARGO_TARGET_DIR="$ROOT/target" \
      >"$B.log" 2>&1 || { cat "$B.log"; fail "configure ($how, $kind)"; }
    grep -q "subproject: dlpack_helpers .* through $how, DLPACK_HELPERS_USE_STATIC=$use_static" "$B.log" \
      || { cat "$B.log"; fail "the subproject's version or option did not reach the parent ($how)"; }
    cmake --build "$B" -j "$JOBS" >>"$B.log" 2>&1 || { cat "$B.log"; fail "build ($how, $kind)"; }
    [ "$(cd "$B" && ctest -N 2>/dev/null | sed -n 's/^Total Tests: //p')" = 0 ] \
      || fail "the subproject added its own tests to the parent ($how)"
    cmake --install "$B" --prefix "$B/installed" >>"$B.log" 2>&1 || { cat "$B.log"; fail "cmake --install ($how)"; }
    [ -z "$(find "$B/installed" -name 'libdlpack_helpers*' -o -name 'dlpack_helpers.h' 2>/dev/null)" ] \
      || fail "the subproject added install rules to the parent ($how)"
    want_default="$SONAME"; [ "$kind" = static ] && want_default=""
    [ "$(needed "$B/app_default")" = "$want_default" ] || fail "app_default ($how, $kind) needs '$(needed "$B/app_default")'"
    [ "$(needed "$B/app_shared")" = "$SONAME" ] || fail "app_shared ($how) does not need $SONAME"
    [ -z "$(needed "$B/app_static")" ] || fail "app_static ($how) needs the shared library"
    readelf -V "$B/app_shared" | grep -q 'DLPACK_HELPERS_0\.1' || fail "app_shared ($how) binds no DLPACK_HELPERS_0.1 symbol version"
    for exe in app_default app_shared app_static app_cxx; do
      "$B/$exe" >/dev/null || fail "$exe ($how, $kind)"
    done
    echo "ok: $how, dlpack_helpers::dlpack_helpers $kind: app_default needs '${want_default:-nothing}', 4 programs ran"
  done
done
echo "subproject: all checks passed"
