"""The default device is one that builds kernels: a GPU, else a CPU device whose compiler works, else the
Oclgrind simulator; ``liftpy devices`` says why a device was passed over."""

from __future__ import annotations

import subprocess
import sys

import pytest

from liftpy.host import device as D


def _indices(fragment: str) -> list[int]:
    return [d.index for d in D.list_devices() if fragment in (d.name + " " + d.platform).lower()]


def test_a_cpu_device_that_cannot_build_kernels_is_passed_over(monkeypatch):
    # A machine may hold two PoCLs (pip's and the distribution's); each is passed over only for itself.
    pocls, sims = _indices("portable"), _indices("oclgrind")
    if not pocls or not sims:
        pytest.skip("needs PoCL and Oclgrind (pip install -e '.[pocl,test]')")
    if any(d.type == "GPU" and "oclgrind" not in d.platform.lower() for d in D.list_devices()):
        pytest.skip("a GPU is the default before any CPU device")
    monkeypatch.delenv("LIFTPY_DEVICE", raising=False)
    broken = "cannot build kernels (error: unknown target CPU 'generic')"
    monkeypatch.setattr(D, "build_problem", lambda i: broken if i in pocls else None)
    assert D._pick(None) == sims[0]
    monkeypatch.setattr(D, "build_problem", lambda i: None)
    assert D._pick(None) == pocls[0]  # the simulator is never the default while a CPU device works
    if len(pocls) > 1:
        monkeypatch.setattr(D, "build_problem", lambda i: broken if i == pocls[0] else None)
        assert D._pick(None) == pocls[1]


def test_the_probe_builds_a_kernel_on_the_default_device():
    assert D.build_problem(D._pick(None)) is None


@pytest.mark.slow
def test_devices_command_marks_the_default():
    out = subprocess.run([sys.executable, "-m", "liftpy", "devices"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    marked = [l for l in out.stdout.splitlines() if l.startswith("*")]
    assert len(marked) == 1 and "cannot build" not in marked[0]


@pytest.mark.slow
def test_device_info_names_the_device_without_a_context(monkeypatch, tmp_path):
    """An exploration's driver names and profiles the device without making its context (the measuring worker
    makes one), and a device that does not exist is still the driver's one-line error."""
    from pathlib import Path

    from liftpy.errors import DeviceError
    from liftpy.explore import explore_program

    matmul = Path(__file__).resolve().parents[1] / "examples" / "programs" / "matmul_highlevel.lift"

    made = []
    monkeypatch.setattr(D, "_device", lambda index: made.append(index))  # in this process only
    info = D.device_info(None)
    assert info.index == D._pick(None) and info.key.count(" | ") == 2 and not made
    ex = explore_program(matmul, {"M": 8, "N": 8, "K": 8}, samples=1,
                         db=tmp_path / "r.sqlite", progress=False, references=False, repeat=1, warmup=0)
    assert ex.ran == 1 and ex.device == info.key and not made
    with pytest.raises(DeviceError, match="no OpenCL device matches"):
        explore_program(matmul, {"M": 8, "N": 8, "K": 8}, samples=1,
                        db=tmp_path / "r.sqlite", device="no-such-device", progress=False)


def test_a_pocl_too_old_for_the_cpu_says_what_to_install(monkeypatch):
    """PoCL 3.0's LLVM 14 does not know AMD Zen 5: ``liftpy devices`` names the fix, not only the error:
    the device that builds instead, or the system's PoCL to install where none does."""
    pocls = _indices("portable")
    if not pocls:
        pytest.skip("needs PoCL (pip install -e '.[pocl,test]')")
    old = "error: unknown target CPU 'generic'"
    monkeypatch.setattr(D, "_build_error", lambda i: old)  # nothing builds
    problem = D.build_problem(pocls[0])
    assert problem.startswith(f"cannot build kernels ({old})") and "apt install pocl-opencl-icd" in problem
    real = [d.index for d in D.list_devices() if "oclgrind" not in d.platform.lower() and d.index != pocls[0]]
    if real:  # another device builds: the reason names it, and asks to install nothing
        monkeypatch.setattr(D, "_build_error", lambda i: old if i == pocls[0] else None)
        problem = D.build_problem(pocls[0])
        assert problem.endswith(f"device {real[0]} builds") and "apt install" not in problem


def test_the_reason_is_the_compilers_error_line(monkeypatch):
    class Failing:
        def build(self):
            raise RuntimeError("clBuildProgram failed: BUILD_PROGRAM_FAILURE\nerror: unknown target CPU 'generic'\n")

    pocls = _indices("portable")
    if not pocls:
        pytest.skip("needs PoCL (pip install -e '.[pocl,test]')")
    monkeypatch.setattr(D._cl(), "Program", lambda ctx, src: Failing())
    D._build_error.cache_clear()
    try:
        assert D._build_error(pocls[0]) == "error: unknown target CPU 'generic'"
    finally:
        D._build_error.cache_clear()
