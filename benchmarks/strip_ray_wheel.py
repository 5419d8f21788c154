"""Make the Ray wheel in .whl/ fit the lent GPU machine's 64 MiB carry limit (the full wheel is 79 MB).

    bash ../shared/device/prepare.sh ray click filelock jsonschema jsonschema-specifications \
        referencing rpds-py attrs msgpack packaging protobuf pyyaml requests urllib3 idna certifi charset-normalizer
    python benchmarks/strip_ray_wheel.py

What is removed is what a Ray worker never loads: the Java jars, the dashboard's web client, and the
libraries above Ray Core (RLlib, Serve, Data, Train, Tune, LLM).
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

DROP = ("ray/jars/", "ray/dashboard/client/build/", "ray/rllib/", "ray/serve/", "ray/llm/", "ray/data/",
        "ray/train/", "ray/tune/")


def main() -> int:
    wheels = sorted(Path(".whl").glob("ray-*.whl"))
    if not wheels:
        print("no ray wheel in .whl/: run ../shared/device/prepare.sh ray first", file=sys.stderr)
        return 1
    for wheel in wheels:
        tmp = wheel.with_suffix(".tmp")
        with zipfile.ZipFile(wheel) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zout:
            for item in zin.infolist():
                if not item.filename.startswith(DROP):
                    zout.writestr(item, zin.read(item.filename), compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
        before = wheel.stat().st_size
        tmp.replace(wheel)
        print(f"{wheel.name}: {before / 2**20:.1f} MiB -> {wheel.stat().st_size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
