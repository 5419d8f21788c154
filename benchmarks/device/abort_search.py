"""A uniform search of SGEMM 1024 with an abort factor, for benchmarks/device/abort_ab.sh:

    python abort_search.py DB [FACTOR] [POINTS]

Prints one JSON line: seconds, statuses, the best time, and the measuring worker's run step summed over the
points measured in full."""
import json
import sys
import time

sys.path.insert(0, "benchmarks")
from search import workload  # noqa: E402

from liftpy.explore import explore_operator  # noqa: E402
from liftpy.search import UniformSearch


def main():
    op, rules = workload("sgemm:1024")
    t = time.time()
    ex = explore_operator(op, samples=int(sys.argv[3]) if len(sys.argv) > 3 else 1000, db=sys.argv[1], search=UniformSearch,
                          profile_path="benchmarks/results/h100-profile.json",
                          seed=0, repeat=5, warmup=2, references=False, progress=False, rules=rules, jobs=15,
                          abort_factor=float(sys.argv[2]) if len(sys.argv) > 2 else 2.0)
    el = time.time() - t
    st = {}
    for r in ex.records:
        st[r.status.name] = st.get(r.status.name, 0) + 1
    ok = [r.time_ms for r in ex.records if r.status.name == "OK" and not r.is_reference]
    print(json.dumps({"seconds": round(el, 1), "statuses": st, "best_ms": min(ok),
                      "run_s": round(sum(r.metrics.get("run_s", 0) for r in ex.records if r.metrics), 2)}))


if __name__ == '__main__':
    main()
