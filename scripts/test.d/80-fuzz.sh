# Fuzzing: a bounded, fixed-seed libFuzzer run of every target in fuzz/ plus a replay of
# every past finding in fuzz/regressions/. Long runs: scripts/fuzz run <target> (docs/reliability.md).
# needs: none
source "$(dirname "$0")/../common.sh"
bash scripts/fuzz smoke
