"""Every producer into every consumer, directly and through ``dh.import_tensor`` (issue 25).

For each producer (frameworks.PRODUCERS), dtype (bool .. complex128, bfloat16), layout
(contiguous, transpose, strided slice, 0-d, empty, read-only) and consumer
(frameworks.CONSUMERS), two jobs run: ``C(x)`` (direct) and ``C(dh.import_tensor(x))`` (bridged),
each on a fresh producer object. A pair is

- same: both work, with the same dtype, shape and values (byte for byte, and equal to the
  producer's), the same strides where both are views, zero-copy through the package wherever the
  direct path is zero-copy, and writability never more than direct;
- lost: the direct path works and the bridged one fails or differs (values, dtype, shape,
  strides, a copy where direct shares memory);
- bridged: only the bridged path works (values equal to the producer's);
- both-fail: neither works (the exception types are listed).

Also counted, and failing the run: invented writability (the bridged result is writable while the
direct one is not, or shares the memory of a producer that stated read-only or could not state
writability), and a producer kept alive by the bridged path after every view is gone while the
direct path released it.

Jobs run in worker processes that report each result as it finishes; a worker that dies (an
abort inside a framework, say TensorFlow on input it cannot take) has that one job recorded as
failed with "Abort", and a new worker continues after it. Prints the producer x consumer table
and exits 1 on any lost case, invented writability or kept producer.
"""
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
PATHS = ("direct", "bridged")


def _only(names, var):
    """DH_MATRIX_PRODUCERS / _CONSUMERS / _DTYPES / _LAYOUTS (comma-separated) narrow a run; a
    "-selftest" entry runs only when named."""
    want = os.environ.get(var)
    if not want:
        return [n for n in names if not n.endswith("-selftest")]
    return [n for n in names if n in want.split(",")]


def _product(producers, dtypes, layouts, consumers):
    return [(p, dt, lay, c, path) for p in _only(producers, "DH_MATRIX_PRODUCERS")
            for dt in _only(dtypes, "DH_MATRIX_DTYPES") for lay in _only(layouts, "DH_MATRIX_LAYOUTS")
            for c in _only(consumers, "DH_MATRIX_CONSUMERS") for path in PATHS]


def jobs(fw):
    return _product(list(fw.PRODUCERS), fw.DTYPES, fw.LAYOUTS, list(fw.CONSUMERS))


def run_job(fw, job, unsupported, shared):
    """One path of one pair. The direct job leaves its producer object in `shared` and the
    bridged job of the same pair (the next job) takes it: both paths see the same memory (a
    consumer's zero-copy decision may depend on the address's alignment, so two objects would
    not compare). Each path records how many references to the producer it left behind; the
    bridged job then drops everything and checks that the producer is released."""
    p, dt, lay, c, path = job
    key = (p, dt, lay)
    if key in unsupported:
        return {"status": "unsupported", "why": unsupported[key]}
    st = shared.pop((p, dt, lay, c), None)
    if st is None:
        try:
            x = fw.PRODUCERS[p](dt, lay)
        except fw.Unsupported as e:
            unsupported[key] = str(e)
            return {"status": "unsupported", "why": str(e)}
        held = None
        try:  # the producer's facts, read from the object the paths use
            pf, held = fw.producer_facts(x)
        except Exception as e:  # the producer cannot export this case at all
            pf = {"error": type(e).__name__}
        try:
            ref = weakref.ref(x)
        except TypeError:
            ref = None
        st = {"x": x, "held": held, "pf": pf, "ref": ref}
        del x, held
    x = st["x"]
    res = {"producer": st["pf"]}
    before = sys.getrefcount(x)
    try:
        stage = "import"
        inp = x if path == "direct" else fw.dh.import_tensor(x)
        stage = "consume"
        r = fw.CONSUMERS[c](inp)
        stage = "measure"
        res["facts"] = fw.measure(r)
        res["status"] = "ok"
        del r
    except Exception as e:
        res.update(status="error", stage=stage, exc=type(e).__name__, msg=str(e)[:300])
    inp = None
    res["refs_left"] = sys.getrefcount(x) - before
    del x
    if path == "direct":
        shared[(p, dt, lay, c)] = st
        return res
    if st["held"] is not None:
        st["held"].release()
    ref = st["ref"]
    st.clear()
    if ref is not None:
        if ref() is None:
            res["released"] = True
        else:  # maybe only a cycle: decided at the next collection (one gc.collect per batch)
            res["_pending"] = ref
    return res


def worker(start, out_path):
    sys.path.insert(0, HERE)
    import frameworks as fw
    unsupported, shared = {}, {}
    todo = jobs(fw)
    pending = []

    def flush():
        # A full collection costs about a second with every framework loaded: once per batch.
        gc.collect()
        for i, ref in pending:
            out.write(json.dumps(["released", i, ref() is None]) + "\n")
        pending.clear()

    with open(out_path, "a", buffering=1) as out:
        for i in range(start, len(todo)):
            try:
                r = run_job(fw, todo[i], unsupported, shared)
            except BaseException as e:  # never lose the job's record
                r = {"status": "error", "stage": "harness", "exc": type(e).__name__,
                     "msg": traceback.format_exc()[-300:]}
            ref = r.pop("_pending", None)
            if ref is not None:
                pending.append((i, ref))
            out.write(json.dumps([i, r]) + "\n")
            if len(pending) >= 200:
                flush()
        flush()
    return 0


def classify(d, b):
    """(class, problems) of one pair: class in same/lost/bridged/both-fail."""
    problems = []
    # each path ran on its own producer object: addresses compare within a path only
    pf = b.get("producer") or {}
    pd = d.get("producer") or {}
    dok, bok = d["status"] == "ok", b["status"] == "ok"
    if bok:
        bf = b["facts"]
        # writability never more than direct, never more than the producer stated
        shares = "address" in bf and bf.get("address") is not None and bf["address"] == pf.get("address")
        if bf.get("writable"):
            if dok and d["facts"].get("writable") is False:
                problems.append("invented writability (direct is read-only)")
            elif shares and (pf.get("stated_read_only") or pf.get("legacy")):
                problems.append("invented writability (producer memory it did not say is writable)")
        if "values" in bf and "values" in pf and bf.get("dtype") == pf.get("dtype") \
                and bf["values"] != pf["values"]:
            # the consumer misreads the producer's tensor; a fault of ours only when the direct
            # path reads it right (then "values" differ below as well)
            problems.append("note: the consumer reads other values than the producer's")
        if b.get("refs_left", 0) > 0 and d.get("refs_left", 0) <= 0:
            problems.append(f"producer kept alive by the bridged path ({b['refs_left']} references left)")
        elif b.get("released") is False:
            problems.append("note: the producer outlives every view (direct path too)")
    if dok and bok:
        df, bf = d["facts"], b["facts"]
        for k in ("dtype", "shape", "values", "describe", "sum"):
            if df.get(k) != bf.get(k):
                problems.append(f"{k}: direct {df.get(k)!r}, bridged {bf.get(k)!r}")
        da, ba = df.get("address"), bf.get("address")
        direct_shares = da is not None and da == pd.get("address")
        bridged_shares = ba is not None and ba == pf.get("address")
        if direct_shares and not bridged_shares:
            if pf.get("stated_read_only"):
                # the copy rule: a stated READ_ONLY never reaches a legacy consumer in place
                problems.append("note: copied (stated read-only toward the legacy struct)")
            else:
                problems.append("a copy where the direct path is zero-copy")
        if direct_shares and bridged_shares and df.get("strides") != bf.get("strides"):
            problems.append(f"strides: direct {df.get('strides')}, bridged {bf.get('strides')}")
        lost = any(not p.startswith(("invented", "producer kept", "note:")) for p in problems)
        return ("lost" if lost else "same"), problems
    if dok:
        return "lost", problems + [f"bridged fails: {b['exc']} at {b['stage']}: {b['msg'][:160]}"]
    if bok:
        return "bridged", problems
    return "both-fail", problems


def main():
    sys.path.insert(0, HERE)
    t0 = time.monotonic()
    # the job list without importing the frameworks here (the workers import them)
    names = _job_names()
    total = len(names)
    results = {}
    tmp = tempfile.mkdtemp(prefix="dh-matrix-")
    out_path = os.path.join(tmp, "results.jsonl")
    log_path = os.path.join(tmp, "worker.log")
    start, aborts = 0, []
    while start < total:
        with open(log_path, "w") as log:
            rc = subprocess.call([sys.executable, __file__, "--worker", str(start), out_path],
                                 stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        done = set()
        with open(out_path) as f:
            for line in f:
                rec = json.loads(line)
                if rec[0] == "released":
                    results[rec[1]]["released"] = rec[2]
                    continue
                i, r = rec
                results[i] = r
                done.add(i)
        nxt = start
        while nxt in results:
            nxt += 1
        if nxt >= total:
            break
        # the worker died at job `nxt`: record it and continue after it
        with open(log_path) as f:
            tail = f.read()[-600:]
        results[nxt] = {"status": "error", "stage": "abort", "exc": "Abort",
                        "msg": f"worker exit {rc}: {tail.strip()[-240:]}"}
        aborts.append((names[nxt], rc))
        with open(out_path, "a") as f:
            f.write(json.dumps([nxt, results[nxt]]) + "\n")
        start = nxt + 1
    report(names, results, aborts, time.monotonic() - t0)


def _job_names():
    """The job list, computed in a worker-free way: the same nested loops over the names."""
    out = subprocess.run([sys.executable, "-c", (
        "import ast, json, sys\n"
        f"src = open({os.path.join(HERE, 'frameworks.py')!r}).read()\n"
        "mod = ast.parse(src)\n"
        "names = {}\n"
        "for node in mod.body:\n"
        "    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):\n"
        "        n = node.targets[0].id\n"
        "        if n in ('DTYPES', 'LAYOUTS'):\n"
        "            names[n] = ast.literal_eval(node.value)\n"
        "        if n in ('PRODUCERS', 'CONSUMERS'):\n"
        "            names[n] = [ast.literal_eval(k) for k in node.value.keys]\n"
        "print(json.dumps(names))\n")], capture_output=True, text=True, check=True)
    n = json.loads(out.stdout)
    return _product(n["PRODUCERS"], n["DTYPES"], n["LAYOUTS"], n["CONSUMERS"])


def report(names, results, aborts, seconds):
    producers = list(dict.fromkeys(j[0] for j in names))
    consumers = list(dict.fromkeys(j[3] for j in names))
    idx = {j: i for i, j in enumerate(names)}
    table = {(p, c): {"same": 0, "lost": 0, "bridged": 0, "both-fail": 0} for p in producers for c in consumers}
    failures, both_fail_exc, unsupported, notes = [], {}, 0, {}
    for j, i in idx.items():
        p, dt, lay, c, path = j
        if path != "direct":
            continue
        d, b = results[i], results[idx[(p, dt, lay, c, "bridged")]]
        if d["status"] == "unsupported":
            unsupported += 1
            continue
        cls, problems = classify(d, b)
        table[(p, c)][cls] += 1
        if cls == "lost" or any(p_.startswith(("invented", "producer kept")) for p_ in problems):
            failures.append((f"{p} -> {c} [{dt}, {lay}]", cls, problems))
        for n in problems:
            if n.startswith("note:"):
                notes[n] = notes.get(n, []) + [f"{p} -> {c} [{dt}, {lay}]"]
        if os.environ.get("DH_MATRIX_VERBOSE") and cls in ("both-fail", "bridged"):
            print(f"{cls}: {p} -> {c} [{dt}, {lay}]: direct {d.get('exc')}: {d.get('msg', '')[:150]!r}; "
                  f"bridged {b.get('exc')}: {b.get('msg', '')[:150]!r}")
        if cls == "both-fail":
            key = (d.get("exc"), b.get("exc"))
            both_fail_exc[key] = both_fail_exc.get(key, 0) + 1
    counts = {k: sum(v[k] for v in table.values()) for k in ("same", "lost", "bridged", "both-fail")}
    w = max(len(p) for p in producers) + 1
    print(f"\nproducer x consumer: same/lost/bridged/both-fail pairs "
          f"({len(names) // 2} pairs, {unsupported} not made by their producer, {seconds:.0f} s)")
    print(" " * w + " ".join(f"{c[:11]:>11}" for c in consumers))
    for p in producers:
        cells = []
        for c in consumers:
            v = table[(p, c)]
            cells.append(f"{v['same']}/{v['lost']}/{v['bridged']}/{v['both-fail']}".rjust(11))
        print(f"{p:<{w}}" + " ".join(cells))
    print(f"\ntotal: same {counts['same']}, lost {counts['lost']}, bridged {counts['bridged']}, "
          f"both-fail {counts['both-fail']}")
    if both_fail_exc:
        print("both-fail exception types (direct, bridged): " + ", ".join(
            f"{d}/{b} x{n}" for (d, b), n in sorted(both_fail_exc.items(), key=lambda kv: -kv[1])))
    if aborts:
        print(f"worker aborts (isolated, counted as failures of that one call): {len(aborts)}")
        for j, rc in aborts[:20]:
            print(f"  {j} exit {rc}")
    for n, where in notes.items():
        pairs = sorted({w.split(" [")[0] for w in where})
        print(f"{n[6:]}: {len(where)} cases ({', '.join(pairs[:8])}{' ...' if len(pairs) > 8 else ''})")
    invented = [f for f in failures if any(p.startswith("invented") for p in f[2])]
    kept = [f for f in failures if any(p.startswith("producer kept") for p in f[2])]
    print(f"invented writability: {len(invented)}; producers kept alive: {len(kept)}")
    for name, cls, problems in failures[:60]:
        print(f"  {cls}: {name}: {'; '.join(problems)}")
    if len(failures) > 60:
        print(f"  ... and {len(failures) - 60} more")
    ok = not failures
    print(f"\n{counts['same'] + counts['bridged'] + counts['both-fail']} passed, {len(failures)} failed")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        sys.exit(worker(int(sys.argv[2]), sys.argv[3]))
    main()
