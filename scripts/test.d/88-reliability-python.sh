# Python-side reliability, in tests-reliability/: the bad-input matrix over every export
# the header declares (test_matrix.py), leak checks over many round trips (test_leaks.py:
# weakrefs, tracemalloc, RSS), 8 Python threads importing/exporting/releasing (test_threads.py)
# and the seeded capsule state-machine run (test_capsule_fuzz.py). The panic matrix is 84-panic.sh.
# needs: venv release
source "$(dirname "$0")/../common.sh"
"$PY" -c 'import numpy, pyarrow, pytest' 2>/dev/null || { echo "error: numpy, pyarrow and pytest are needed in .venv (scripts/requirements.txt)" >&2; exit 1; }
"$PY" -m pytest -q -s -p no:cacheprovider tests-reliability 2>"$ROOT/target/reliability-python.stderr" \
  || { tail -n 30 "$ROOT/target/reliability-python.stderr"; exit 1; }
