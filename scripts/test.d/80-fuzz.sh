# Fuzzing (issue 8): a bounded, fixed-seed libFuzzer run of every target in fuzz/ plus a replay of
# every past finding in fuzz/regressions/. Long runs: scripts/fuzz run <target> (docs/reliability.md).
source "$(dirname "$0")/../common.sh"
bash scripts/fuzz smoke
