# Documentation that is true (issue 14): every code block of README.md and docs/*.md is extracted
# and compiled/run (C with -Wall -Wextra -Werror, C++11 and C++17, Python, shell) against the tree
# scripts/build lays out; a block that is not a complete program or command is marked
# `<!-- doc-test: skip: <reason> -->`. Rules: tests/docs/run_doc_blocks.py.
source "$(dirname "$0")/../common.sh"
"$ROOT/scripts/build" >"$ROOT/target/docs-build.log" 2>&1 || { cat "$ROOT/target/docs-build.log"; exit 1; }
PY="$PY" "$PY" tests/docs/run_doc_blocks.py

# The runner fails when it must: a C block that does not compile, a program that exits 1, a
# Python block that raises, a skip without a reason.
BAD="$ROOT/target/doc-blocks-bad"
rm -rf "$BAD"; mkdir -p "$BAD"
for case in c-undeclared c-exit python-raise skip-no-reason; do
  case "$case" in
    c-undeclared)   printf '```c\nint f(void) { return t; }\n```\n' ;;
    c-exit)         printf '```c\nint main(void) { return 1; }\n```\n' ;;
    python-raise)   printf '```python\nraise SystemExit(3)\n```\n' ;;
    skip-no-reason) printf '<!-- doc-test: skip -->\n```c\nint x;\n```\n' ;;
  esac >"$BAD/$case.md"
  if PY="$PY" "$PY" tests/docs/run_doc_blocks.py "$BAD/$case.md" >"$BAD/$case.log" 2>&1; then
    cat "$BAD/$case.log"; echo "FAIL: the doc-block runner accepted $case" >&2; exit 1
  fi
done
echo "-- the runner refuses a block that does not compile, exits non-zero or raises, and a skip without a reason"
