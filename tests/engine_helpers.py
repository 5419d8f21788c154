"""What the tests of the exploration engine (tests/test_engine_*.py) share: the high-level matrix product, a
program with a user function of its own, a GPU's profile without a GPU, a run_all that computes in this
process, and readers of a store's saved batches."""

from pathlib import Path

from liftpy import Array, Float, make_program, map, reduce, sizes, transpose
from liftpy import zip as lzip
from liftpy.ir.userfun import userfun_from_expression

ROOT = Path(__file__).resolve().parents[1]
MATMUL = ROOT / "examples" / "programs" / "matmul_highlevel.lift"
M, N, K = sizes("M N K")
SMALL = {"M": 32, "N": 32, "K": 16}

# A user function written as an expression: it travels to worker processes with the program.
MAD2 = userfun_from_expression("mad2", [("acc", Float), ("x", Float), ("y", Float)], Float, "acc + 2.0f * x * y")


def gpu_profile():
    """A GPU's profile without a GPU: what the model and the search rank points for."""
    from liftpy.host.profile import DeviceProfile

    return DeviceProfile("test GPU", "test", max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64), device_type="GPU")


def twice_matmul():
    return make_program("twice", [("A", Array(Float, M, K)), ("B", Array(Float, K, N))], lambda A, B: map(
        lambda row: map(lambda col: reduce(lambda acc, p: MAD2(acc, p[0], p[1]), 0.0, lzip(row, col)), transpose(B)), A))


def _saved_batches(db):
    import json
    import sqlite3

    con = sqlite3.connect(db)
    try:
        return [(seed_rules, state, json.loads(points))
                for seed_rules, state, points in con.execute("SELECT settings, state, points FROM next_batches")]
    finally:
        con.close()


def _new_points(before, after):
    """The points of ``after`` not in ``before``, in the order they were stored."""
    old = {(r.variant, tuple(sorted(r.config.items()))) for r in before}
    return [(r.variant, r.config) for r in after if not r.is_reference and (r.variant, tuple(sorted(r.config.items()))) not in old]


def _workers_here(task, pick, seen: list, inside: list):
    """A ``run_all`` for ``Spaces.use_workers`` that computes each call in this process: ``inside[0]`` is True
    meanwhile, and ``pick`` of each argument of a call of the function ``task`` is added to ``seen``."""

    def run_all(fn, args):
        inside[0] = True
        try:
            if fn is task:
                seen.extend(pick(a) for a in args)
            return [(True, fn(a)) for a in args]
        finally:
            inside[0] = False

    return run_all


def pid_of_a_slow_leaver(_):
    """A worker task: this process's id; the process takes two seconds to exit (an interpreter tearing
    down large caches)."""
    import atexit
    import os
    import time

    global _LEAVES_SLOWLY
    if not globals().get("_LEAVES_SLOWLY"):
        atexit.register(time.sleep, 2.0)
        _LEAVES_SLOWLY = True
    return os.getpid()
