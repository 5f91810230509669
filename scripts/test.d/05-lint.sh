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
echo "-- layers: capi -> host -> rules -> abi, no upward import (tests/layers.rs)"
cargo test --locked --quiet --test layers
echo "lint: clean"
