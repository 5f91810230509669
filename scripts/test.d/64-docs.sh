# Documentation that is true (issue 14): every code block of README.md and docs/*.md is extracted
# and compiled/run (C with -Wall -Wextra -Werror, C++11 and C++17, Python, shell) against the tree
# scripts/build lays out; a block that is not a complete program or command is marked
# `<!-- doc-test: skip: <reason> -->`. Rules: tests/docs/run_doc_blocks.py.
source "$(dirname "$0")/../common.sh"
"$ROOT/scripts/build" >"$ROOT/target/docs-build.log" 2>&1 || { cat "$ROOT/target/docs-build.log"; exit 1; }
PY="$PY" "$PY" tests/docs/run_doc_blocks.py
