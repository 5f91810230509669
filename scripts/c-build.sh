# The one way to compile a C test (tests-c/), sourced by the test parts after common.sh:
#   c_test_build <source.c> <output> shared|static [extra compiler flags, e.g. -fsanitize=...]
# Flags come from tests-c/cflags (CMakeLists.txt reads the same file for CTest); the static
# library's system libraries from scripts/native-static-libs (rustc's own answer).
CC="${CC:-cc}"
mapfile -t _c_flag_lines < <(grep -v '^[[:space:]]*#' "$ROOT/tests-c/cflags")
# shellcheck disable=SC2206
C_TEST_FLAGS=(${_c_flag_lines[*]} -I"$ROOT/include" -I"$ROOT/tests-c")
# shellcheck disable=SC2207
NATIVE_STATIC_LIBS=($("$ROOT/scripts/native-static-libs"))

c_test_build() {
  local src="$1" out="$2" kind="$3"; shift 3
  case "$kind" in
    shared) "$CC" "${C_TEST_FLAGS[@]}" "$@" "$src" -o "$out" \
              -L"$LIBDIR" -ldlpack_helpers -Wl,-rpath,"$LIBDIR" -lpthread -ldl ;;
    static) "$CC" "${C_TEST_FLAGS[@]}" "$@" "$src" -o "$out" \
              "$LIBDIR/libdlpack_helpers.a" "${NATIVE_STATIC_LIBS[@]}" ;;
    *) echo "c_test_build: kind must be shared or static, not '$kind'" >&2; return 2 ;;
  esac
}
