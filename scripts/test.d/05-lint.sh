# Lint: formatting and clippy (warnings are errors) on every target: library, tests, benches, examples.
# needs: none
# Cargo.toml's [lints.clippy] adds undocumented_unsafe_blocks: every `unsafe { }` block carries a
# `// SAFETY:` comment saying why it is sound. Fix a finding rather than allowing it.
source "$(dirname "$0")/../common.sh"
echo "-- cargo fmt --check"
cargo fmt --all --check || { echo "FAIL: run 'cargo fmt --all'" >&2; exit 1; }
echo "-- cargo clippy --all-targets -- -D warnings"
cargo clippy --locked --quiet --all-targets -- -D warnings
echo "-- cargo clippy --all-targets --features test-panic -- -D warnings"
cargo clippy --locked --quiet --all-targets --features test-panic -- -D warnings
echo "-- cargo clippy --all-targets --features pyo3 -- -D warnings (the PyO3 face, src/safe/python.rs)"
cargo clippy --locked --quiet --all-targets --features pyo3 -- -D warnings
echo "-- cargo doc (as docs.rs builds it: --features pyo3), warnings are errors"
RUSTDOCFLAGS="-D warnings" cargo doc --locked --quiet --no-deps -p dlpack-helpers --features pyo3
echo "-- layers: safe -> capi -> host -> rules -> abi, no upward import (tests/layers.rs)"
cargo test --locked --quiet --test layers
echo "lint: clean"
