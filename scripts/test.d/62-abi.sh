# A locked ABI (issue 14): symbol versions and the checked-in baseline.
# 1. scripts/build lays out sdk/ (the shipped, versioned library); every exported function is in
#    a version node of abi/dlpack_helpers.map and nothing else is exported.
# 2. scripts/abi check: the library and header against abi/baseline.txt (own dump: functions with
#    version node and prototype, struct sizes and offsets, typedefs, constants) and, when
#    libabigail is installed (Debian: abigail-tools), abidiff against abi/dlpack_helpers.abi.
# 3. The check itself: an additive difference passes and is printed; an incompatible one fails
#    with the same SONAME and passes with another; a header whose struct changed fails.
# Refresh the baseline on purpose: scripts/build && scripts/abi update (docs/linking.md).
source "$(dirname "$0")/../common.sh"
need python3 "CPython 3.10 or newer"
need readelf "binutils"
OUT="$ROOT/target/abi-check"
rm -rf "$OUT"; mkdir -p "$OUT"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$ROOT/scripts/build" >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; fail "scripts/build"; }
SO="$ROOT/sdk/lib/libdlpack_helpers.so"

echo "-- symbol versions"
nodes="$(sed -n 's/^\(DLPACK_HELPERS_[0-9.]*\) *{.*/\1/p' abi/dlpack_helpers.map | sort -u)"
[ -n "$nodes" ] || fail "no version node in abi/dlpack_helpers.map"
readelf --dyn-syms -W "$SO" | awk '$4 == "FUNC" && $5 == "GLOBAL" && $7 != "UND" { print $8 }' >"$OUT/exports.txt"
[ -s "$OUT/exports.txt" ] || fail "no exported function"
while read -r sym; do
  name="${sym%%@*}"; node="${sym##*@}"
  case "$name" in dlpack_*) ;; *) fail "$name is exported but is not a dlpack_* function" ;; esac
  [ "$node" != "$sym" ] || fail "$name has no symbol version"
  grep -qx "$node" <<<"$nodes" || fail "$name is in node $node, which abi/dlpack_helpers.map does not define"
done <"$OUT/exports.txt"
echo "   $(wc -l <"$OUT/exports.txt") functions, each in a node of abi/dlpack_helpers.map ($(echo $nodes)); nothing else exported"

echo "-- scripts/abi check (the library and header against abi/)"
"$ROOT/scripts/abi" check | tee "$OUT/check.log"

echo "-- the check fails when it must"
python3 scripts/abi.py dump >"$OUT/current.txt"
# An additive difference (a function the baseline lacks) passes, and is printed.
grep -v '^function dlpack_tensor_create ' "$OUT/current.txt" >"$OUT/base-additive.txt"
scripts/abi check --baseline "$OUT/base-additive.txt" >"$OUT/additive.log" 2>&1 \
  || { cat "$OUT/additive.log"; fail "an additive difference failed the check"; }
grep -q 'ADDITIVE + function dlpack_tensor_create' "$OUT/additive.log" || { cat "$OUT/additive.log"; fail "additive difference not printed"; }
echo "   a new function: passes, printed as ADDITIVE"
# A whole new struct (here dlpack_helpers_layout, struct_size-less, and its fields) is additive:
# nothing could allocate it before.
grep -v -e '^struct dlpack_helpers_layout ' -e '^field dlpack_helpers_layout\.' "$OUT/current.txt" >"$OUT/base-newstruct.txt"
cmp -s "$OUT/base-newstruct.txt" "$OUT/current.txt" && fail "removing dlpack_helpers_layout from the baseline changed nothing"
scripts/abi check --baseline "$OUT/base-newstruct.txt" >"$OUT/newstruct.log" 2>&1 \
  || { cat "$OUT/newstruct.log"; fail "a new struct failed the check"; }
grep -q 'ADDITIVE + field dlpack_helpers_layout.numel' "$OUT/newstruct.log" || { cat "$OUT/newstruct.log"; fail "new struct's fields not printed as ADDITIVE"; }
echo "   a new struct: passes, its fields printed as ADDITIVE"
# An incompatible difference with the same SONAME fails: a moved field, a changed prototype, a
# removed function, a changed constant, a moved symbol version.
mutate() {  # mutate <label> <sed expression>
  sed "$2" "$OUT/current.txt" >"$OUT/base-$1.txt"
  cmp -s "$OUT/base-$1.txt" "$OUT/current.txt" && fail "mutation $1 changed nothing"
  if scripts/abi check --baseline "$OUT/base-$1.txt" >"$OUT/$1.log" 2>&1; then
    cat "$OUT/$1.log"; fail "incompatible difference ($1) passed the check"
  fi
  grep -q INCOMPATIBLE "$OUT/$1.log" || { cat "$OUT/$1.log"; fail "($1) not reported as INCOMPATIBLE"; }
  echo "   $1: fails ($(grep -m1 INCOMPATIBLE "$OUT/$1.log" | sed 's/^ *//'))"
}
mutate field-offset 's/^\(field DLTensor.ndim offset \)[0-9]*/\199/'
mutate prototype 's/^\(function dlpack_get_device [^ ]* \).*/\1dlpack_helpers_status(const DLManagedTensorVersioned*)/'
mutate removed-function '$a function dlpack_retired_function DLPACK_HELPERS_0.1 void(void)'
mutate constant 's/^const DLPACK_HELPERS_STATUS_PANIC .*/const DLPACK_HELPERS_STATUS_PANIC 77/'
mutate version-node 's/^\(function dlpack_tensor_delete \)DLPACK_HELPERS_0.1/\1DLPACK_HELPERS_0.0/'
# The same incompatible difference with another SONAME in the baseline passes (deliberate break).
sed 's/^soname .*/soname libdlpack_helpers.so.0.0/' "$OUT/base-field-offset.txt" >"$OUT/base-soname.txt"
scripts/abi check --baseline "$OUT/base-soname.txt" --abigail /nonexistent.abi >"$OUT/soname.log" 2>&1 || true
grep -q 'the SONAME changed' "$OUT/soname.log" || { cat "$OUT/soname.log"; fail "a SONAME change did not allow the incompatible difference"; }
grep -q 'FAIL: .* incompatible change' "$OUT/soname.log" && fail "incompatible difference failed despite the SONAME change"
echo "   incompatible with another SONAME: accepted, printed"
# A header whose struct changed (a field widened): both the own dump and abidiff see it.
mkdir -p "$OUT/header"
sed 's/^\(  \)uint32_t properties;/\1uint64_t properties;/' include/dlpack_helpers.h >"$OUT/header/dlpack_helpers.h"
cmp -s include/dlpack_helpers.h "$OUT/header/dlpack_helpers.h" && fail "header mutation changed nothing"
if scripts/abi check --header "$OUT/header/dlpack_helpers.h" >"$OUT/header.log" 2>&1; then
  cat "$OUT/header.log"; fail "a widened struct field passed the check"
fi
grep -q 'INCOMPATIBLE ~ field dlpack_helpers_layout.properties' "$OUT/header.log" || { cat "$OUT/header.log"; fail "widened field not reported"; }
# A field appended to a struct_size-versioned struct is additive (both checks): it passes.
sed 's/^} dlpack_helpers_validate_options;$/  uint64_t appended_field;\n} dlpack_helpers_validate_options;/' include/dlpack_helpers.h >"$OUT/header/appended.h"
grep -q appended_field "$OUT/header/appended.h" || fail "header mutation (appended field) changed nothing"
mkdir -p "$OUT/appended"; cp "$OUT/header/appended.h" "$OUT/appended/dlpack_helpers.h"
scripts/abi check --header "$OUT/appended/dlpack_helpers.h" >"$OUT/appended.log" 2>&1 \
  || { cat "$OUT/appended.log"; fail "a field appended to a struct_size struct failed the check"; }
grep -q 'ADDITIVE + field dlpack_helpers_validate_options.appended_field' "$OUT/appended.log" \
  || { cat "$OUT/appended.log"; fail "appended field not printed as ADDITIVE"; }
echo "   a field appended to dlpack_helpers_validate_options (struct_size): passes, printed as ADDITIVE"
if command -v abidiff >/dev/null 2>&1; then
  grep -q 'abidiff reports a change other than added symbols' "$OUT/header.log" || { cat "$OUT/header.log"; fail "abidiff did not report the widened field"; }
  echo "   widened struct field: fails (own dump and abidiff)"
  # abidiff against a description that lacks one function: additive, passes, printed.
  grep -v '^void dlpack_capsule_destructor(void \*capsule);$' include/dlpack_helpers.h >"$OUT/header/dlpack_helpers.h"
  scripts/abi abidw --header "$OUT/header/dlpack_helpers.h" >"$OUT/older.abi"
  scripts/abi check --abigail "$OUT/older.abi" >"$OUT/abidiff-additive.log" 2>&1 \
    || { cat "$OUT/abidiff-additive.log"; fail "abidiff: an added function failed the check"; }
  grep -q 'additive changes only' "$OUT/abidiff-additive.log" && grep -q 'dlpack_capsule_destructor' "$OUT/abidiff-additive.log" \
    || { cat "$OUT/abidiff-additive.log"; fail "abidiff: the added function was not printed"; }
  echo "   abidiff, a new function: passes, printed"
else
  echo "   widened struct field: fails (own dump; abidiff not installed)"
fi
echo "ABI: all checks passed"
