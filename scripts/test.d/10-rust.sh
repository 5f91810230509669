# Rust unit and integration tests (including the header freshness check).
# needs: none
source "$(dirname "$0")/../common.sh"
cargo test --locked --quiet
