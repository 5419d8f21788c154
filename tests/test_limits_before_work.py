"""Limits checked before the work they bound (issue 58): a run's buffers against the device's largest
allocation and global memory, and with the host's arrays against the host's available memory, before any
is allocated; an unrolled nest's copies and a kernel's private memory before the unrolling pass copies
anything; messages that name the largest few items instead of listing thousands."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from liftpy.codegen.kernel import generate_kernel
from liftpy.errors import CodegenError, ConstraintError, DeviceError, InputError, summarize
from liftpy.host.profile import DeviceProfile
from liftpy.ir.parser import parse_program

ROOT = Path(__file__).resolve().parents[1]

IDENT = "def ident(xs: [float]N) =\n  mapGlb(0, fun(x) => id(x), xs)\n"
TWO_KERNELS = ("def two(xs: [float]N) =\n"
               "  let(fun(ys) => mapGlb(0, fun(y) => neg(y), ys), toGlobal(mapGlb(0, fun(x) => mult(x, x), xs)))\n")
UNROLLED_MAP = "def u(xs: [[float]N]M) =\n  mapGlb(0, fun(row) => toGlobal(mapSeqUnroll(fun(x) => id(x), row)), xs)\n"
UNROLLED_REDUCE = ("def r(xs: [[float]N]M) =\n  mapGlb(0, fun(row) => toGlobal(mapSeqUnroll(id, "
                   "reduceSeqUnroll(fun(acc, x) => add(acc, x), 0.0f, row))), xs)\n")
NESTED = ("def n(xs: [[[float]K]N]M) =\n  mapGlb(0, fun(m) => toGlobal(mapSeqUnroll(fun(row) => "
          "mapSeqUnroll(fun(x) => id(x), row), m)), xs)\n")
PRIVATE_UNROLLED = ("def p(xs: [[float]N]M) =\n"
                    "  mapGlb(0, fun(row) => toGlobal(mapSeqUnroll(id, toPrivate(mapSeq(id, row)))), xs)\n")
CPU_LIMITS = DeviceProfile("test CPU", "test", max_work_group_size=4096, max_work_item_sizes=(4096, 4096, 4096),
                           device_type="CPU").limits()

unroll_pass = importlib.import_module("liftpy.codegen.passes.unroll")
host_kernel = importlib.import_module("liftpy.host.kernel")


@pytest.fixture
def unrolled(monkeypatch):
    """Kernels whose loops the unrolling pass began to expand."""
    real, expanded = unroll_pass._expand, []

    def spy(s, ranges):
        expanded.append(s)
        return real(s, ranges)

    monkeypatch.setattr(unroll_pass, "_expand", spy)
    return expanded


def one_line(e: BaseException) -> str:
    text = str(e)
    assert "\n" not in text and len(text) < 1000, text
    return text


@pytest.fixture
def allocations(monkeypatch):
    """The device buffers and images a test's runs allocate (counted, then allocated as usual)."""
    import pyopencl as cl

    made = []
    for name in ("Buffer", "image_from_array"):
        real = getattr(cl, name)

        def spy(*args, real=real, name=name, **kwargs):
            made.append(name)
            return real(*args, **kwargs)

        monkeypatch.setattr(cl, name, spy)
    return made


def with_limits(monkeypatch, **changes):
    """The default device's limits for runs, with ``changes``."""
    real = host_kernel.device_limits
    monkeypatch.setattr(host_kernel, "device_limits", lambda device: dataclasses.replace(real(device), **changes))


def test_summarize_names_the_largest_and_counts_the_rest():
    items = [(f"v{i}", 16) for i in range(5000)] + [("acc_0", 4096)]
    text = summarize(items)
    assert text.startswith("acc_0 (4096 B), v0 (16 B)") and text.endswith("and 4996 more")
    assert summarize([("a", 1), ("b", 2)]) == "b (2 B), a (1 B)"


def test_device_limits_carry_the_largest_allocation_and_global_memory():
    profile = DeviceProfile("x", "y", global_mem_bytes=3 << 30, max_alloc_bytes=1 << 30)
    assert (profile.limits().max_alloc_bytes, profile.limits().global_mem_bytes) == (1 << 30, 3 << 30)
    # What the stores key generated kernels by is unchanged: no source depends on these two.
    assert "alloc" not in repr(profile.limits()) and repr(profile.limits()) == repr(DeviceProfile("x", "y").limits())


def test_a_buffer_over_the_largest_allocation_is_refused_before_any_is_made(monkeypatch, allocations):
    from liftpy.host.kernel import compile_program

    k = compile_program(parse_program(IDENT), {"N": 1024})
    with_limits(monkeypatch, max_alloc_bytes=1000)
    with pytest.raises(DeviceError) as info:
        k.run(np.zeros(1024, np.float32))
    text = one_line(info.value)
    assert "input buffer xs takes 4096 bytes" in text and "at most 1000 bytes in one buffer" in text
    assert "CL_DEVICE_MAX_MEM_ALLOC_SIZE" in text and "smaller sizes" in text
    assert allocations == []
    with_limits(monkeypatch, max_alloc_bytes=4096)
    np.testing.assert_array_equal(k.run(np.ones(1024, np.float32)).output, np.ones(1024, np.float32))
    assert allocations == ["Buffer", "Buffer"]


def test_buffers_over_global_memory_together_are_refused_and_a_pipeline_counts_its_intermediates(monkeypatch, allocations):
    from liftpy.host.kernel import CompiledPipeline, compile_program

    k = compile_program(parse_program(TWO_KERNELS), {"N": 1024})
    assert isinstance(k, CompiledPipeline)
    assert [(b.name, b.role, b.nbytes) for b in k.buffers()] == [("xs", "input", 4096), ("ys", "intermediate", 4096),
                                                                 ("out", "output", 4096)]
    with_limits(monkeypatch, global_mem_bytes=3 * 4096 - 1)
    with pytest.raises(DeviceError) as info:
        k.run(np.zeros(1024, np.float32))
    text = one_line(info.value)
    assert "3 buffers take 12288 bytes together" in text and "12287 bytes of global memory" in text
    with_limits(monkeypatch, max_alloc_bytes=4095)
    with pytest.raises(DeviceError, match="buffer xs takes 4096 bytes"):
        k.run(np.zeros(1024, np.float32))
    assert allocations == []


def test_the_host_memory_a_run_needs_is_checked_before_allocating(monkeypatch, allocations):
    from liftpy.host.kernel import compile_program

    k = compile_program(parse_program(IDENT), {"N": 1024})
    monkeypatch.setattr(host_kernel, "available_host_bytes", lambda: 4000)
    with pytest.raises(InputError) as info:
        k.run(np.zeros(1024, np.float32))
    text = one_line(info.value)
    assert "host memory" in text and "4000 bytes are available" in text
    assert allocations == []


def test_liftpy_run_checks_the_host_memory_before_making_the_inputs(monkeypatch, tmp_path, capsys):
    from liftpy.cli import main

    made = []
    inputs = importlib.import_module("liftpy.ir.inputs")
    monkeypatch.setattr(inputs, "random_inputs", lambda *a, **k: made.append(1))
    # 4 KiB of input, 4 KiB read back and 4 KiB of the interpreter's result (and the device's 8 KiB on a CPU)
    monkeypatch.setattr(host_kernel, "available_host_bytes", lambda: 3 * 4096 - 1)
    (tmp_path / "ident.lift").write_text(IDENT)
    assert main(["run", str(tmp_path / "ident.lift"), "-s", "N=1024"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("liftpy run: error: the run needs at least") and "host memory" in err and "\n" not in err
    assert made == []


@pytest.mark.slow
def test_liftpy_run_refuses_buffers_of_nearly_2_31_elements_on_the_real_device_at_once(tmp_path):
    """The issue's case: 2^31 - 1 floats (8 GiB), which the kernel's 32-bit indices allow, filled the host's
    memory (6 GiB in 20 s, then killed) or met a raw INVALID_BUFFER_SIZE; now the device's own limits refuse
    them before any input is made: its largest allocation, its global memory, or (PoCL's limits follow the
    host's free memory: 2 or 8 GiB at once on this project's machine) the host's available memory."""
    if (host_kernel.available_host_bytes() or 0) > 48 << 30:
        pytest.skip("the host has the memory for a real run of 8 GiB buffers")
    (tmp_path / "ident.lift").write_text(IDENT)
    script = ("import resource, sys\nfrom liftpy.cli import main\n"
              f"rc = main(['run', {str(tmp_path / 'ident.lift')!r}, '-s', 'N=2147483647'])\n"
              "print('maxrss_kb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\nsys.exit(rc)\n")
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    elapsed = time.perf_counter() - t
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    err = proc.stderr.strip()
    assert err.startswith("liftpy run: error: ") and "\n" not in err, err
    assert ("the input buffer xs takes 8589934588 bytes" in err or "buffers take 17179869176 bytes together" in err
            or "of host memory" in err), err
    assert "MemoryError" not in err and "Traceback" not in err
    # Under half of one input: none was made.  (Alone it peaks near 0.2 GiB; beside other tests under xdist it
    # was seen at 1.3 GiB once, so the bound is what the property needs rather than what one run showed.)
    assert int(proc.stdout.split("maxrss_kb")[1]) < 4 << 20
    assert elapsed < 60, elapsed


@pytest.mark.parametrize("text,primitive,remedy", [(UNROLLED_MAP, "mapSeqUnroll", "use mapSeq"),
                                                   (UNROLLED_REDUCE, "reduceSeqUnroll", "use reduceSeq")])
def test_an_unrolled_loop_of_2_20_iterations_is_refused_before_it_is_copied(text, primitive, remedy, unrolled):
    program = parse_program(text)
    t = time.perf_counter()
    with pytest.raises(CodegenError) as info:
        generate_kernel(program, {"N": 1 << 20, "M": 2}, CPU_LIMITS)
    elapsed = time.perf_counter() - t
    message = one_line(info.value)
    assert message.startswith(f"{primitive} of 1048576 iterations") and remedy in message
    assert f"at most {unroll_pass.COPY_LIMIT}" in message
    assert elapsed < 5, elapsed  # was 104 s for the map (its copies' vector temporaries then refused)
    assert unrolled == []


def test_the_copies_of_an_unrolled_nest_are_counted_together(monkeypatch):
    program = parse_program(NESTED)
    with pytest.raises(CodegenError, match=r"mapSeqUnroll of 256 iterations inside unrolled loops of 256 copies .* "
                                           r"asks for 65536 copies"):
        generate_kernel(program, {"K": 256, "N": 256, "M": 2}, CPU_LIMITS)
    # Up to the limit the copies are made: the same nest at a smaller limit, on both sides of it.
    monkeypatch.setattr(unroll_pass, "COPY_LIMIT", 16)
    assert "for (" not in generate_kernel(program, {"K": 4, "N": 4, "M": 2}, CPU_LIMITS).source.split("kernel void")[1]
    with pytest.raises(CodegenError, match="asks for 32 copies of its body; at most 16"):
        generate_kernel(program, {"K": 8, "N": 4, "M": 2}, CPU_LIMITS)


def test_private_memory_is_checked_before_unrolling(unrolled):
    """A private array of 2^14 floats copied element by element (as many copies as the limit allows): refused
    by its 64 KiB of private memory before the copies are made (2-4 s after them)."""
    program = parse_program(PRIVATE_UNROLLED)
    n = unroll_pass.COPY_LIMIT
    t = time.perf_counter()
    with pytest.raises(ConstraintError) as info:
        generate_kernel(program, {"N": n, "M": 2}, dataclasses.replace(CPU_LIMITS, private_item_bytes=2 * n))
    elapsed = time.perf_counter() - t
    assert f"{4 * n} bytes of private memory per work-item (priv_0 ({4 * n} B))" in one_line(info.value)
    assert elapsed < 1.5 and unrolled == [], elapsed


def test_a_private_memory_message_over_thousands_of_arrays_is_short():
    """4,096 unrolled copies read as 1,024 vector temporaries of 16 bytes: the message listed every one
    (0.2-4 MB on one line for longer loops); it names the largest five and counts the rest."""
    tight = dataclasses.replace(CPU_LIMITS, private_item_bytes=1024)
    with pytest.raises(ConstraintError) as info:
        generate_kernel(parse_program(UNROLLED_MAP), {"N": 4096, "M": 2}, tight)
    message = one_line(info.value)
    assert "16384 bytes of private memory per work-item (v0 (16 B), v1 (16 B)" in message
    assert "and 1019 more); at most 1024" in message
