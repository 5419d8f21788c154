"""``liftpy probe``: measure a device and write its profile, or draw the curves of a profile.

    liftpy probe [--device N] [--out FILE] [--quick] [--only NAMES]
    liftpy probe --plot FILE [--png OUT]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ..cli_args import nonnegative_int
from ..host.profile import DeviceProfile
from .runner import PROBES


def register(sub) -> None:
    p = sub.add_parser(
        "probe",
        help="measure a device's hardware limits with micro-benchmarks and write a profile",
        description="Measure registers, warp width, caches, bandwidths, fp32 throughput and launch overhead with "
                    "generated OpenCL micro-benchmarks, and write a liftpy-device-profile/1 JSON file that "
                    "liftpy's device profiles (DeviceProfile.load) read.  Probes: "
                    + "; ".join(f"{x.name} ({x.summary})" for x in PROBES) + ".",
    )
    p.add_argument("--device", "-d", default=None, help="device index or name fragment (see liftpy devices)")
    p.add_argument("--out", "-o", default=None, metavar="FILE", help="profile to write (default: profile-<device>.json)")
    p.add_argument("--quick", action="store_true", help="small sweeps (about a minute on a 2-core CPU; seconds on a GPU)")
    p.add_argument("--only", default=None, metavar="NAMES", help="comma-separated probes to run: " + ",".join(x.name for x in PROBES))
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the random pointer-chase cycles and data")
    p.add_argument("--plot", default=None, metavar="FILE", help="draw the curves of an existing profile instead of probing")
    p.add_argument("--png", default=None, metavar="OUT", help="image to write with --plot (default: FILE with .png)")
    p.set_defaults(func=cmd_probe)


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def summary_table(doc: dict) -> str:
    fields = {"registers_per_item", "warp_size"} | {f for f in DeviceProfile.__dataclass_fields__}
    rows = [("measured", "value", "unit", "conf", "probe")]
    for name, m in doc["measured"].items():
        mark = " *" if name in fields and m["value"] is not None else ""
        rows.append((name + mark, _fmt(m["value"]), m["unit"], f"{m['confidence']:.2f}", m.get("probe", "")))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i != 1 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("(* = overrides the DeviceProfile field of the same name when the profile is loaded)")
    return "\n".join(lines)


def _default_out(name: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-") or "device"
    return Path(f"profile-{slug}.json")


def cmd_probe(args) -> int:
    if args.plot:
        # imported when the command runs, not at start-up (liftpy/cli.py says why)
        from .plot import plot_profile

        out = plot_profile(args.plot, args.png)
        print(f"wrote {out}")
        return 0

    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..host.device import get_device
    from .document import profile_document, write
    from .runner import run_probes, select

    only = args.only.split(",") if args.only else None
    select(only)  # an unknown name fails before any device work
    dev = get_device(args.device)
    mode = "quick" if args.quick else "full"
    print(f"probing {dev.info} ({mode})", flush=True)

    def start(i, n, probe):
        print(f"[{i:2d}/{n}] {probe.name:<19s}", end=" ", flush=True)

    out_path = Path(args.out) if args.out else _default_out(dev.info.name)

    def done(i, n, result, run_so_far):
        write(profile_document(run_so_far), out_path)  # progress survives a crash or an interrupt
        if result.status == "ok":
            shown = ", ".join(f"{m.name}={_fmt(m.value)}" for m in result.measurements[:3])
            print(f"ok      {result.seconds:6.1f} s  {shown}", flush=True)
        else:
            print(f"{result.status:<7s} {result.seconds:6.1f} s  {result.reason}", flush=True)

    run = run_probes(dev, quick=args.quick, only=only, seed=args.seed, on_start=start, on_done=done)
    doc = profile_document(run)
    out = write(doc, out_path)
    print()
    print(summary_table(doc))
    failed = [r.probe for r in run.results if r.status == "failed"]
    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from .document import has_jsonschema

    checked = "validated against schema.json" if has_jsonschema() else "not validated against schema.json (jsonschema is not installed)"
    print(f"\nwrote {out}: {len(doc['measured'])} measured values, {len(doc['curves'])} curves, {run.seconds:.1f} s; {checked}"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    from .saved import covers_model, keep

    if covers_model(doc) and not dev.info.on_host_cpu:  # what explorations on this GPU read without --profile
        kept = keep(doc, dev.info.key)
        if kept is not None:
            print(f"kept for the cost model of explorations on this device: {kept}")
    if failed:
        print("a failed probe's reason is in the profile under probes/<name>/reason", file=sys.stderr)
    return 1 if failed else 0
