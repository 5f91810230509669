# The conformance suite (issue 33; conformance/README.md): the specification's requirements
# tested on any implementation of the helper ABI, from spec/abi.toml and spec/ alone.
# 1. conformance/results: this project's library (every profile it claims), the second
#    implementation written from the spec alone (conformance/cimpl, C99: core), pair runs
#    between them both ways, and the DLPackExchangeAPI tables of dlpack_helpers.Tensor (must
#    pass every requirement), PyTorch, PaddlePaddle and tvm-ffi (recorded, evidence for
#    upstream); written to target/conformance/results.md and compared with the committed
#    spec/conformance-results.md (a difference is printed, not a failure: regenerate with
#    `conformance/results --python-for-tables .cache/frameworks/venv/bin/python`).
# 2. conformance/variants/check: every deliberately broken variant (one fault each) must be
#    caught by a case covering the requirement it breaks, on the Rust library and, for the
#    core variants, on the C99 implementation; the covering cases must pass on the unbroken base.
# needs: venv release
source "$(dirname "$0")/../common.sh"
setup_venv
need cc "a C compiler"
need readelf "binutils"
fail() { echo "FAIL: $*" >&2; exit 1; }
OUT="$ROOT/target/conformance"
rm -rf "$OUT"; mkdir -p "$OUT"
export DLPACK_CONFORMANCE_CACHE="$ROOT/target/conformance-cache"
SO="$LIBDIR/libdlpack_helpers.so"
TABLES=()
if (setup_frameworks_venv) >"$OUT/frameworks-venv.log" 2>&1; then
  TABLES=(--python-for-tables "$ROOT/.cache/frameworks/venv/bin/python")
else
  cat "$OUT/frameworks-venv.log"
  echo "SKIP the frameworks' exchange tables: their environment could not be set up (above)"
fi

echo "-- conformance/results (Rust library, conformance/cimpl, pairs, exchange tables)"
HOME="$ROOT/.cache/frameworks/home" "$PY" conformance/results --lib "$SO" --python "$PY" \
  --package-python "$PY" "${TABLES[@]}" --reports "$OUT" --out "$OUT/results.md" \
  || fail "conformance/results (the lines above name what does not conform)"
if ! diff -q "$OUT/results.md" spec/conformance-results.md >/dev/null 2>&1; then
  echo "note: spec/conformance-results.md differs from this run's results (target/conformance/results.md):"
  diff "$OUT/results.md" spec/conformance-results.md | head -20 || true
fi

echo "-- conformance/variants/check (each broken variant caught)"
"$PY" conformance/variants/check --lib "$SO" --report "$OUT/variants-rust.json" >"$OUT/variants-rust.log" 2>&1 \
  || { cat "$OUT/variants-rust.log"; fail "a broken variant of the Rust library was not caught"; }
tail -n 1 "$OUT/variants-rust.log"
CDIR="$OUT/cimpl"
sh conformance/cimpl/build "$CDIR" >"$OUT/cimpl-build.log" 2>&1 || { cat "$OUT/cimpl-build.log"; fail "conformance/cimpl/build"; }
CSO="$(ls "$CDIR"/*.so | head -n 1)"
"$PY" conformance/variants/check --lib "$CSO" --base-profiles core --report "$OUT/variants-cimpl.json" \
  >"$OUT/variants-cimpl.log" 2>&1 \
  || { cat "$OUT/variants-cimpl.log"; fail "a broken variant of the C99 implementation was not caught"; }
tail -n 1 "$OUT/variants-cimpl.log"
echo "conformance: passed"
