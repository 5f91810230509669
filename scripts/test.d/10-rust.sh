# Rust unit and integration tests, the header freshness check included.
# needs: none
source "$(dirname "$0")/../common.sh"
cargo test --locked --quiet
