"""Benchmark: the README's first command, timed as a user meets it.

    python benchmarks/quickstart.py --json benchmarks/results/cpu-quickstart.json
    python benchmarks/quickstart.py --base /tmp/base --rounds 2 --json out.json   # against another tree
    python benchmarks/quickstart.py --layer vgg16:12 --full --samples 60 --states variants warm \
        --extra "--profile benchmarks/results/h100-profile.json" --base .whl/base --json ...   # on a GPU

Runs ``liftpy explore conv --layer vgg16:7 --reduced --samples 24`` (the quick start's exploration, on the
default device; ``--layer``, ``--full``, ``--samples`` and ``--extra`` change it) in a new process, in three
states of liftpy's disk cache (``LIFTPY_CACHE_DIR``; ``--states`` picks some):

- ``fresh``: an empty cache, as on a fresh machine: the variants are derived, then screened;
- ``variants``: the variants cached (copied from the ``fresh`` run's cache), the screening not: what any
  new problem of a program already explored meets;
- ``warm``: the cache the ``variants`` run left, a new store: the same exploration run again.

Every run has its own empty OpenCL compiler caches (pyopencl's and the NVIDIA driver's): a run after another
of the same search would otherwise find most of its kernels built.

With ``--base DIR`` each state runs for this tree and for the liftpy package under ``DIR`` (a copy of another
commit: ``git archive REF liftpy | tar -x -C DIR``), alternating, ``--rounds`` times.  Each run writes its
own store.

JSON: one record per run with ``tree``, ``state``, ``round``, ``seconds`` (the whole command),
``derive_s`` (what the command printed for deriving or loading the variants), ``first_result_s`` and
``last_result_s`` (from the command's start to the first and last point stored), ``points``, ``statuses``,
``best_ms``, ``points_sha1`` (a digest of the points measured: two runs of the same search measure the same
points), ``device``; and ``python`` and ``cpu``.  Times are of this machine's CPU: the exploration's
own work (deriving, screening, code generation) and PoCL's builds and runs share its cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from codegen import _cpu  # (this script's folder is first on the path; importing it puts the repository there too)

from liftpy.explore.devices import cores
from liftpy.results.store import Status, Store, canonical_json

ROOT = Path(__file__).resolve().parents[1]
STATES = ("fresh", "variants", "warm")
VARIANT_KINDS = ("variants", "variant-ids", "selected")  # the cache's derivation entries


def run_once(command: list, tree: Path, cache: Path, db: Path) -> dict:
    """One exploration with ``tree``'s liftpy and the cache ``cache``, storing into ``db``."""
    # Each run with its own compiler caches too (pyopencl's under XDG_CACHE_HOME, the NVIDIA driver's), empty at
    # its start: a run after another of the same search would find its kernels built.
    compiled = db.parent / f"{db.stem}-compiler-caches"
    env = {**os.environ, "LIFTPY_CACHE_DIR": str(cache), "PYTHONPATH": _path(tree), "XDG_CACHE_HOME": str(compiled / "xdg"),
           "CUDA_CACHE_PATH": str(compiled / "nv")}
    t0 = time.time()
    # Run beside the store, not in a tree: ``python -m`` puts its working directory first on the path.
    proc = subprocess.run([sys.executable, *command, "--db", str(db)], cwd=db.parent, env=env,
                          capture_output=True, text=True)
    seconds = time.time() - t0
    if proc.returncode != 0:
        raise SystemExit(f"the exploration failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    derive = re.search(r"variants from the rewrite rules \(([\d.]+) s\)", proc.stdout)
    with Store(db) as store:
        rows = sorted((r for r in store.records() if not r.is_reference), key=lambda r: r.finished_at or 0.0)
    points = sorted((r.variant, canonical_json(dict(r.config))) for r in rows)
    statuses: dict = {}
    for r in rows:
        statuses[r.status.value] = statuses.get(r.status.value, 0) + 1
    ok = [r.time_ms for r in rows if r.status is Status.OK and r.time_ms is not None]
    return {
        "seconds": round(seconds, 1),
        "derive_s": float(derive.group(1)) if derive else None,
        "first_result_s": round(rows[0].finished_at - t0, 1) if rows else None,
        "last_result_s": round(rows[-1].finished_at - t0, 1) if rows else None,
        "points": len(rows),
        "statuses": statuses,
        "best_ms": min(ok) if ok else None,
        "points_sha1": hashlib.sha1(repr(points).encode()).hexdigest()[:12],  # which points: equal for equal searches
        "device": rows[0].device if rows else None,
    }


def _rooted(arg: str) -> str:
    """An argument naming a file of the repository (``benchmarks/results/h100-profile.json``), made absolute:
    the runs start beside their stores."""
    return str(ROOT / arg) if not arg.startswith("-") and (ROOT / arg).exists() else arg


def _path(tree: Path) -> str:
    """``PYTHONPATH`` with ``tree`` first (its liftpy package before any other)."""
    rest = os.environ.get("PYTHONPATH")
    return str(tree) + (os.pathsep + rest if rest else "")


def _only_variants(source: Path, cache: Path) -> None:
    """``cache`` holding only the derived variants of the cache ``source`` (which may be ``cache`` itself)."""
    kept = cache.with_name("kept")
    for kind in VARIANT_KINDS:
        if (source / kind).exists():
            shutil.copytree(source / kind, kept / kind)
    if cache.exists():
        shutil.rmtree(cache)
    kept.mkdir(parents=True, exist_ok=True)
    kept.rename(cache)


def _derive(tree: Path, cache: Path, command: list) -> None:
    """The variants of the exploration's operator derived into ``cache`` (the operator made from the
    exploration's own command line), and nothing else."""
    code = ("import sys\nfrom liftpy.cli import build_parser\n"
            "try:\n    from liftpy.explore.cli import _operator\n    from liftpy.results.cache import cached_variants\n"
            "except ImportError:  # a tree from before liftpy.tuning was split by job\n"
            "    from liftpy.tuning.cli import _operator\n    from liftpy.tuning.cache import cached_variants\n"
            "cached_variants(_operator(build_parser().parse_args(sys.argv[1:])))")
    env = {**os.environ, "LIFTPY_CACHE_DIR": str(cache), "PYTHONPATH": _path(tree)}
    subprocess.run([sys.executable, "-c", code, *command[2:]], cwd=cache.parent, env=env, check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, default=None, help="another tree's copy, holding its liftpy package")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--layer", default="vgg16:7")
    ap.add_argument("--full", action="store_true", help="the whole layer, not the README's reduced one")
    ap.add_argument("--samples", type=int, default=24)
    ap.add_argument("--extra", default="", help="more arguments of liftpy explore, as one string (paths in it "
                    "relative to the repository's root)")
    ap.add_argument("--states", nargs="+", choices=STATES, default=list(STATES))
    ap.add_argument("--variants-from", type=Path, default=None,
                    help="a cache directory whose derived variants the 'variants' state starts from (without 'fresh')")
    ap.add_argument("--keep", type=Path, default=None, help="a folder to copy each run's store into")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    command = ["-m", "liftpy", "explore", "conv", "--layer", args.layer, *([] if args.full else ["--reduced"]),
               "--samples", str(args.samples), *[_rooted(a) for a in args.extra.split()]]
    if args.base is not None and not (args.base / "liftpy" / "__init__.py").exists():
        raise SystemExit(f"--base {args.base}: no liftpy package there")
    trees = [("this", ROOT)] + ([("base", args.base.resolve())] if args.base is not None else [])
    records = []
    with tempfile.TemporaryDirectory(prefix="liftpy-quickstart-") as tmp:
        for rnd in range(args.rounds):
            for name, tree in trees:
                where = Path(tmp) / f"{name}-{rnd}"
                where.mkdir()
                cache = where / "cache"
                for state in args.states:
                    if state == "variants":  # the derived variants cached, nothing screened
                        if cache.exists() or args.variants_from is not None:  # the fresh run's, or given
                            _only_variants(cache if cache.exists() else args.variants_from, cache)
                        else:
                            _derive(tree, cache, command)
                    out = run_once(command, tree, cache, where / f"{state}.sqlite")
                    if args.keep is not None:
                        args.keep.mkdir(parents=True, exist_ok=True)
                        shutil.copy(where / f"{state}.sqlite", args.keep / f"{name}-{state}-{rnd}.sqlite")
                    rec = {"tree": name, "state": state, "round": rnd, **out}
                    records.append(rec)
                    print(f"{name:5} {state:8} round {rnd}: {out['seconds']:6.1f} s, variants {out['derive_s']} s, "
                          f"first point at {out['first_result_s']} s, last at {out['last_result_s']} s, "
                          f"best {out['best_ms']} ms, {out['statuses']}", flush=True)
    result = {"command": " ".join(["python", *command]), "python": platform.python_version(), "cpu": _cpu(),
              "cores": cores(),
              "records": records}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
