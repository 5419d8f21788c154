"""Benchmark: a researcher's own operators, written as a newcomer writes them from the README (issue 55).

    python benchmarks/newcomer.py --json benchmarks/results/cpu-newcomer.json
    python benchmarks/newcomer.py --only softmax heat --samples 4      # some operators, fewer points

First the README's own path: its program block saved as ``normalize.py`` and run, ``normalize`` (and
``row_sums``) explored with the README's command into ``results.sqlite``, then the README's ``liftpy pareto``,
``liftpy show --best`` and its Python block reading the store.  Then five operators of
``examples/newcomer/``, each a Python DSL function with its numpy reference in the same file: a naive row
softmax, a layer norm, a batched small matrix product, a triangular update using the element index and a heat
stencil step keeping its border.  Each is explored as a user runs it, in a new process on the default device
(PoCL here), with the model search::

    liftpy explore examples/newcomer/softmax.py:softmax -s N=128,M=128 --samples 16 \
        --reference examples/newcomer/softmax.py:softmax_ref --db ...

Every line the command prints is shown (indented), and the records are filled from the results store and
from that output.  Liftpy's disk cache starts empty (a temporary ``LIFTPY_CACHE_DIR``, as on a new machine;
``--cache`` keeps one), so ``explore_s`` includes deriving the variants.

JSON: ``command``, ``device``, ``cpu``, ``cores``, ``python``, ``samples``, ``readme`` (each README step:
``ok`` or its error), and ``records``, one per operator, with exactly ``operator``, ``variants`` (the lowered
variants explore derived, its printed count), ``dropped`` (derived variants that cannot run here: refused by
code generation at every size, ``liftpy variants --dropped``, or with no valid configuration at these sizes on
this device, ``liftpy variants -s``), ``ok``, ``failed`` (failed points by status: status -> count), ``best_ms``
(the fastest correct point), ``reference_ms`` (the ``--reference`` function timed in the same run),
``ratio`` (reference_ms / best_ms: above 1, liftpy's best point is faster), ``frontier_points``,
``explore_s`` (the command's wall time).  The file is written again after each operator, so an interrupted
run keeps what it had.

Target (issue 55): every operator has at least one ok point and a ratio; the reason of every failed status
appears in the command's own output (its ``failed points, by reason:`` section).  The script exits with 1
when an operator misses it, after saying which and why.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this tree's liftpy; the README's blocks as its test reads them

from codegen import _cpu  # noqa: E402 (this script's folder is first on the path)
from test_readme import _blocks  # noqa: E402 - one reading of the README's code blocks, shared with its test

from liftpy.explore.devices import cores as _cores  # noqa: E402
from liftpy.results.store import Status, Store  # noqa: E402

FIELDS = ("operator", "variants", "dropped", "ok", "failed", "best_ms", "reference_ms", "ratio", "frontier_points",
          "explore_s")
EXAMPLES = "examples/newcomer"


@dataclass(frozen=True)
class Case:
    name: str
    program: str  # file.py:function, relative to the command's folder
    sizes: str
    reference: str
    readme: bool = False  # the README's own program, run in the folder where its block was saved


def cases(readme_refs: str) -> list[Case]:
    ex = EXAMPLES
    return [
        Case("normalize", "normalize.py:normalize", "N=256,M=256", f"{readme_refs}:normalize_ref", readme=True),
        Case("row_sums", "normalize.py:row_sums", "N=256,M=256", f"{readme_refs}:row_sums_ref", readme=True),
        Case("softmax", f"{ex}/softmax.py:softmax", "N=128,M=128", f"{ex}/softmax.py:softmax_ref"),
        Case("layernorm", f"{ex}/layernorm.py:layernorm", "N=128,M=128", f"{ex}/layernorm.py:layernorm_ref"),
        Case("batched_matmul", f"{ex}/batched_matmul.py:batched_matmul", "B=64,N=16,K=16,M=16",
             f"{ex}/batched_matmul.py:batched_matmul_ref"),
        Case("triangular", f"{ex}/triangular.py:lower_update", "N=256", f"{ex}/triangular.py:lower_update_ref"),
        Case("heat", f"{ex}/heat.py:heat_step", "H=256,W=256", f"{ex}/heat.py:heat_step_ref"),
    ]


def run(command: list[str], cwd: Path, env: dict, show: bool = True) -> tuple[int, str, float]:
    """Run ``python -m liftpy ...`` (or another command) as a user would, each line shown as it comes."""
    t0 = time.time()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if show:
            print("    | " + line, end="", flush=True)
    return proc.wait(), "".join(lines), time.time() - t0


def derived(case: Case, cwd: Path) -> tuple[int, int]:
    """(variants code generation accepts, variants that cannot run here), as ``liftpy variants`` counts them."""
    from liftpy.cli_args import parse_sizes, read_program
    from liftpy.constraints import solve
    from liftpy.constraints.infer import variant_space
    from liftpy.host.profile import resolve_profile
    from liftpy.rewrite.explore import ExploreOptions, explore_all

    here = os.getcwd()
    os.chdir(cwd)  # the program's path is relative to the command's folder
    try:
        program = read_program(case.program)
    finally:
        os.chdir(here)
    sizes = parse_sizes(case.sizes)
    kept, refused = explore_all(program, ExploreOptions())
    profile = resolve_profile(None, None)
    empty = sum(1 for v in kept if solve(variant_space(v, sizes, profile)).size.valid == 0)
    return len(kept), len(refused) + empty


def reasons_shown(failed: dict[str, int], output: str) -> list[str]:
    """The failed statuses whose reason the command's output does not give (its grouped failures section:
    ``N failed points, by reason:`` then ``  COUNT STATUS: first line of the error``)."""
    head = re.search(r"^(\d+) failed points?, by reason:$", output, re.M)
    if head is None:
        return sorted(failed)
    section = output[head.end():]
    shown = set(re.findall(r"^  \d+ (\w+): \S", section, re.M))
    return sorted(s for s in failed if s not in shown)


def record(case: Case, db: Path, output: str, seconds: float, variants: int, dropped: int) -> dict:
    """The operator's record from its store (points, times, the reference) and the command's output."""
    points, reference_ms = [], None
    if db.exists():
        with Store(db, create=False) as store:
            for r in store.records():
                if r.is_reference:
                    if case.reference in r.variant and r.status is Status.OK:
                        reference_ms = r.time_ms
                else:
                    points.append(r)
    ok = [r.time_ms for r in points if r.status is Status.OK and r.time_ms is not None]
    failed: dict[str, int] = {}
    for r in points:
        if r.status.failed:
            failed[r.status.value] = failed.get(r.status.value, 0) + 1
    front = re.search(r"Pareto frontier \((\d+) points?\)", output)
    printed = re.search(r": (\d+) variants from the rewrite rules", output)
    best = min(ok) if ok else None
    rec = {
        "operator": case.name,
        "variants": int(printed.group(1)) if printed else variants,
        "dropped": dropped,
        "ok": len(ok),
        "failed": dict(sorted(failed.items())),
        "best_ms": best,
        "reference_ms": reference_ms,
        "ratio": reference_ms / best if best and reference_ms else None,
        "frontier_points": int(front.group(1)) if front else 0,
        "explore_s": round(seconds, 1),
    }
    assert tuple(rec) == FIELDS
    return rec


def readme_steps(folder: Path, env: dict, python: str) -> dict:
    """The README's program block saved as ``normalize.py`` and run as a script: its own checks against numpy."""
    blocks = _blocks((ROOT / "README.md").read_text(), "python")
    (folder / "normalize.py").write_text(blocks[0])
    rc, out, _ = run([python, "normalize.py"], folder, env, show=False)
    return {"program block": "ok" if rc == 0 else _last_line(out)}


def readme_reading(folder: Path, env: dict, python: str) -> dict:
    """After ``normalize`` was explored into ``results.sqlite``: the README's reading commands and block."""
    steps = {}
    for name, command in (("liftpy pareto --db results.sqlite", ["pareto", "--db", "results.sqlite"]),
                          ("liftpy show --db results.sqlite --best", ["show", "--db", "results.sqlite", "--best"])):
        rc, out, _ = run([python, "-m", "liftpy", *command], folder, env, show=False)
        steps[name] = "ok" if rc == 0 else _last_line(out)
    blocks = _blocks((ROOT / "README.md").read_text(), "python")
    for i, code in enumerate(blocks[1:], 2):
        (folder / f"readme_block_{i}.py").write_text(code)
        rc, out, _ = run([python, f"readme_block_{i}.py"], folder, env, show=False)
        steps[f"python block {i} (reading the store)"] = "ok" if rc == 0 else _last_line(out)
    return steps


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "(no output)"


def _fmt(v, spec: str) -> str:
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None, help="where to write the records (again after each operator)")
    ap.add_argument("--samples", type=int, default=16, help="points per operator (default 16)")
    ap.add_argument("--only", nargs="+", default=None, help="these operators only (the README's steps run with "
                    "normalize)")
    ap.add_argument("--cache", type=Path, default=None, help="liftpy's disk cache to use (default: a new empty one)")
    ap.add_argument("--keep", type=Path, default=None, help="a folder for the stores and plots (default: temporary)")
    ap.add_argument("--quiet", action="store_true", help="do not show the commands' output as it comes")
    args = ap.parse_args(argv)
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="liftpy-newcomer-") as tmp:
        work = (args.keep or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        readme_dir = work / "readme"
        readme_dir.mkdir(exist_ok=True)
        cache = args.cache.resolve() if args.cache else Path(tmp) / "cache"
        rest = os.environ.get("PYTHONPATH")
        env = {**os.environ, "LIFTPY_CACHE_DIR": str(cache),
               "PYTHONPATH": str(ROOT) + (os.pathsep + rest if rest else "")}
        chosen = [c for c in cases(str(ROOT / EXAMPLES / "readme_refs.py")) if args.only is None or c.name in args.only]
        unknown = set(args.only or ()) - {c.name for c in cases("")}
        if unknown:
            ap.error(f"unknown operators {sorted(unknown)}; choose from {[c.name for c in cases('')]}")
        from liftpy.host.device import device_info

        result = {"command": " ".join(["python", "benchmarks/newcomer.py", *(argv if argv is not None else sys.argv[1:])]),
                  "device": device_info(None).name, "cpu": _cpu(), "cores": _cores(), "python": platform.python_version(),
                  "samples": args.samples, "readme": {}, "records": []}

        def save():
            if args.json:
                Path(args.json).parent.mkdir(parents=True, exist_ok=True)
                Path(args.json).write_text(json.dumps(result, indent=1) + "\n")

        if any(c.readme for c in chosen):
            result["readme"].update(readme_steps(readme_dir, env, python))
            print(f"README program block, saved as normalize.py and run: {result['readme']['program block']}", flush=True)
        misses = []
        for case in chosen:
            cwd = readme_dir if case.readme else ROOT
            db = readme_dir / "results.sqlite" if case.name == "normalize" else work / f"{case.name}.sqlite"
            command = [python, "-m", "liftpy", "explore", case.program, "-s", case.sizes, "--samples", str(args.samples),
                       "--reference", case.reference, "--db", str(db)]
            print(f"\n== {case.name}: liftpy {' '.join(command[3:])}", flush=True)
            variants, dropped = derived(case, cwd)
            rc, output, seconds = run(command, cwd, env, show=not args.quiet)
            rec = record(case, db, output, seconds, variants, dropped)
            result["records"].append(rec)
            if case.name == "normalize":
                result["readme"].update(readme_reading(readme_dir, env, python))
            save()
            hidden = reasons_shown(rec["failed"], output)
            problems = []
            if rec["ok"] == 0:
                problems.append(f"no ok point (liftpy explore exited with {rc}: {_last_line(output)})")
            if rec["ratio"] is None:
                problems.append("no ratio (no ok point or no reference time)")
            if hidden:
                problems.append(f"the output gives no reason for the failed statuses {hidden}")
            print(f"== {case.name}: {rec['ok']} ok, failed {rec['failed'] or 'none'}, reasons in the output: "
                  f"{'yes' if not hidden else 'MISSING for ' + ', '.join(hidden)}; explore exited with {rc}", flush=True)
            misses += [f"{case.name}: {p}" for p in problems]
        bad_readme = {k: v for k, v in result["readme"].items() if v != "ok"}
        misses += [f"README {k}: {v}" for k, v in bad_readme.items()]
    print(f"\nREADME steps: {', '.join(f'{k}: {v}' for k, v in result['readme'].items()) or 'not run'}")
    print(f"\n{'operator':<15}{'variants':>9}{'dropped':>8}{'ok':>4}  {'failed':<24}{'best ms':>9}{'ref ms':>9}{'ratio':>7}"
          f"{'front':>6}{'explore s':>10}")
    for r in result["records"]:
        failed = ",".join(f"{k} {v}" for k, v in r["failed"].items()) or "-"
        print(f"{r['operator']:<15}{r['variants']:>9}{r['dropped']:>8}{r['ok']:>4}  {failed:<24}{_fmt(r['best_ms'], '9.4g')}"
              f"{_fmt(r['reference_ms'], '9.4g')}{_fmt(r['ratio'], '7.3f')}{r['frontier_points']:>6}{r['explore_s']:>10.1f}")
    if args.json:
        print(f"wrote {args.json}")
    if misses:
        print("\ntarget missed:\n  " + "\n  ".join(misses))
        return 1
    print("\ntarget met: every operator has an ok point and a ratio, and every failure's reason is in its output")
    return 0


if __name__ == "__main__":
    sys.exit(main())
