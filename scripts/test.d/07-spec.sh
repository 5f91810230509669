# The specification (issue 32): spec/abi.toml, the manifest, against the library, the header and
# the pages of spec/ (scripts/spec check; what it checks: scripts/spec.py).
# 1. scripts/spec check --manifest-only: every export in the manifest and every manifest function
#    exported; prototypes, struct layouts, typedefs, callbacks and constants (unsigned values) as
#    the header and the C compiler give them; dlpack_get_info reports the manifest's spec version
#    and every profile.
# 2. scripts/spec check: in addition every function's page with its ten headings, parseable
#    requirement lines, each ID defined once and listed in spec/requirement-ids.txt, retired IDs
#    never reused, the manifest's semantic fields equal to the pages', FORMAT.md's profile lists.
# 3. The check itself fails when it must: on copies with a removed page heading, a duplicated ID,
#    a reused retired ID, a changed struct offset, a missing export (both ways), a constant
#    written negative, a changed ownership, a widened header field.
# Refresh the manifest on purpose: scripts/spec sync (review the diff, commit spec/).
# needs: release
source "$(dirname "$0")/../common.sh"
need python3 "CPython 3.11 or newer (tomllib), or 3.10 with the tomli package"
need readelf "binutils"
need cc "a C compiler"
OUT="$ROOT/target/spec-check"
rm -rf "$OUT"; mkdir -p "$OUT"
fail() { echo "FAIL: $*" >&2; exit 1; }
LIB="$LIBDIR/libdlpack_helpers.so"
spec() { python3 scripts/spec.py "$@" --lib "$LIB"; }

echo "-- scripts/spec check --manifest-only (library and header against spec/abi.toml)"
spec check --manifest-only | tee "$OUT/manifest.log" | sed 's/^/   /'
echo "-- scripts/spec check (and every page of spec/)"
spec check >"$OUT/full.log" 2>&1 || { cat "$OUT/full.log"; fail "scripts/spec check (run scripts/spec sync if a page changed, then review and commit spec/)"; }
sed 's/^/   /' "$OUT/full.log"

echo "-- the check fails when it must"
# copy <label>: a copy of spec/ to mutate; expect <label> <message>: the check on it fails and
# prints the message (each message is one the real tree's check does not print).
copy() { rm -rf "$OUT/$1"; cp -r spec "$OUT/$1"; }
expect() {
  local label="$1" msg="$2"; shift 2
  if spec check --spec "$OUT/$label" "$@" >"$OUT/$label.log" 2>&1; then
    cat "$OUT/$label.log"; fail "mutation $label passed the check"
  fi
  grep -qF -- "$msg" "$OUT/$label.log" || { cat "$OUT/$label.log"; fail "mutation $label: no '$msg'"; }
  grep -qF -- "$msg" "$OUT/full.log" && fail "mutation $label: '$msg' is printed for the real tree too"
  echo "   $label: fails ($(grep -m1 -F -- "$msg" "$OUT/$label.log" | sed 's/^ *FAIL //' | cut -c1-110))"
}
changed() { cmp -s "spec/$2" "$OUT/$1/$2" && fail "mutation $1 changed nothing in $2"; return 0; }

copy heading
sed -i '/^## Side effects$/d' "$OUT/heading/functions/dlpack_tensor_delete.md"; changed heading functions/dlpack_tensor_delete.md
expect heading "dlpack_tensor_delete.md: headings"

copy duplicate
sed -i 's/^\(- \*\*CORE-LEGACY-TENSOR-DELETE-\)1\*\*/\1X**/; s/^- \*\*CORE-LEGACY-TENSOR-DELETE-X\*\*/- **CORE-TENSOR-DELETE-1**/' \
  "$OUT/duplicate/functions/dlpack_legacy_tensor_delete.md"; changed duplicate functions/dlpack_legacy_tensor_delete.md
expect duplicate "requirement ID CORE-TENSOR-DELETE-1 is defined 2 times"

copy retired
sed -i 's/^CORE-TENSOR-DELETE-2 active$/CORE-TENSOR-DELETE-2 retired 2026.12/' "$OUT/retired/requirement-ids.txt"; changed retired requirement-ids.txt
expect retired "CORE-TENSOR-DELETE-2 is retired in"

copy unregistered
sed -i '/^CORE-TENSOR-DELETE-2 active$/d' "$OUT/unregistered/requirement-ids.txt"; changed unregistered requirement-ids.txt
expect unregistered "CORE-TENSOR-DELETE-2 is defined"

copy bad-line
sed -i 's/^- \*\*CORE-TENSOR-DELETE-3\*\* \[impl\]/- **CORE-TENSOR-DELETE-3** [implementation]/' "$OUT/bad-line/functions/dlpack_tensor_delete.md"
changed bad-line functions/dlpack_tensor_delete.md
expect bad-line "a requirement line that does not parse"

copy offset
sed -i '/^\[structs.DLTensor\]/,/^$/ s/\(name = "ndim", type = "int32_t", offset = \)[0-9]*/\199/' "$OUT/offset/abi.toml"; changed offset abi.toml
expect offset "struct DLTensor: fields"

copy export
sed -i 's/^\[functions.dlpack_tensor_delete\]$/[functions.dlpack_retired_function]\nprofile = "core"\nreturns = "void"\nparams = []\n\n&/' "$OUT/export/abi.toml"
changed export abi.toml
expect export "dlpack_retired_function is in the manifest but not exported" --manifest-only

copy unlisted
python3 - "$OUT/unlisted/abi.toml" <<'EOF'
import re, sys
p = sys.argv[1]
t = open(p).read()
t = re.sub(r"\[functions\.dlpack_get_info\]\n(?:[^\[]|\[(?!functions\.|structs\.))*?\n\n", "", t, count=1, flags=re.S)
open(p, "w").write(t)
EOF
changed unlisted abi.toml
expect unlisted "dlpack_get_info is exported by" --manifest-only

copy negative
sed -i 's/^\(DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE = { type = "uint64_t", value = \)[0-9]*/\1-9223372036854775808/' "$OUT/negative/abi.toml"
changed negative abi.toml
expect negative "constant DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE: 9223372036854775808 in the header" --manifest-only

copy ownership
python3 - "$OUT/ownership/abi.toml" <<'EOF'
import sys
p = sys.argv[1]
t = open(p).read()
i = t.index("[functions.dlpack_tensor_delete]")
j = t.index('ownership = "consumed"', i)
open(p, "w").write(t[:j] + 'ownership = "borrowed"' + t[j + len('ownership = "consumed"'):])
EOF
changed ownership abi.toml
expect ownership "dlpack_tensor_delete: parameters (name, direction, nullable, ownership)"

copy header
mkdir -p "$OUT/header-h"
sed 's/^\(  \)uint32_t properties;/\1uint64_t properties;/' include/dlpack_helpers.h >"$OUT/header-h/dlpack_helpers.h"
cmp -s include/dlpack_helpers.h "$OUT/header-h/dlpack_helpers.h" && fail "header mutation changed nothing"
expect header "struct dlpack_helpers_layout: fields" --manifest-only --header "$OUT/header-h/dlpack_helpers.h"

echo "spec: all checks passed"
