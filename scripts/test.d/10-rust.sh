# Rust unit and integration tests (including the header freshness check).
source "$(dirname "$0")/../common.sh"
cargo test --locked --quiet
