"""One description of where a lowered program allocates memory (``liftpy.codegen.allocation``): the emitter
allocates where it says, and the constraint inference (``constraints.resources``) reads the same, so the
symbolic allocations of every sampled kernel, evaluated at the point's values, are the buffers of the
memory plan the generated kernel really has.  Only the passes' own registers (``cp``, ``pf``, ``v``) are
outside the description, as its docstring explains."""

import re
from pathlib import Path

import pytest
import sympy

from liftpy import (
    Array, Float, add, id, join, mapGlb, mapLcl, mapSeq, mapWrg, multAndSumUp, program, reduceSeq, sizes, split, toGlobal,
    toPrivate, zip,
)
from liftpy.codegen.allocation import Position, Temporary, allocations, needs_temporary, private_bytes
from liftpy.codegen.kernel import generate_kernel
from liftpy.constraints.resources import analyze
from liftpy.errors import CodegenError
from liftpy.explore.conv import ConvOperator
from liftpy.explore.operator import program_operator
from liftpy.host.profile import DeviceProfile
from liftpy.ir.kernels import split_kernels
from liftpy.ir.types import as_size
from liftpy.results.cache import cached_variants
from liftpy.search import choose_points

PROGRAMS = Path(__file__).resolve().parents[1] / "examples" / "programs"
GPU = DeviceProfile("test GPU", "test", max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64), device_type="GPU")
PASS_TEMPORARY = re.compile(r"(cp|pf|v)\d+")
N, K, w0 = sizes("N K w0")

OPERATORS = {
    "matmul": lambda: program_operator(str(PROGRAMS / "matmul_highlevel.lift"), "M=32,N=32,K=32"),
    "stencil": lambda: program_operator(str(PROGRAMS / "stencil_highlevel.lift"), "H=18,W=18"),
    "maxpool": lambda: program_operator(str(PROGRAMS / "maxpool_highlevel.lift"), "H=16,W=16"),
    "conv": lambda: ConvOperator.of("8,10,10,8,3,1,1"),
}
SAMPLES = {"matmul": 24, "stencil": 24, "maxpool": 24, "conv": 16}  # the convolution's 3,500 variants take longest


def _check_kernel(program, values: dict, placements: dict) -> None:
    kernel = generate_kernel(program, values, GPU.limits(), None, placements)
    symbols = {as_size(k): v for k, v in values.items()}

    def value(expr) -> int:
        return int(sympy.sympify(expr).subs(symbols))

    allocs = allocations(program)
    plan = {b.name: b for b in kernel.plan.buffers if b.space in ("local", "private")}
    where = f"{program.name} at {values}:\n{kernel.plan.table()}"
    for a in allocs:
        b = plan.pop(a.name, None)
        assert b is not None, f"{a.describe()} is not in the plan of {where}"
        assert (b.space, b.role) == (a.space, a.role), where
        assert b.nbytes == value(a.item_bytes), f"{a.describe()}: {where}"
    # What the description leaves out is the passes' registers, and only those.
    assert all(PASS_TEMPORARY.fullmatch(b.name) and (b.space, b.role) == ("private", "temporary") for b in plan.values()), where
    res = analyze(program)
    assert value(sympy.Add(*[x for x, _ in res.local_bytes])) == kernel.plan.local_bytes, where
    assert value(sympy.Add(*[x for x, _ in res.private_bytes])) == value(private_bytes(allocs))
    assert kernel.plan.private_bytes - sum(b.nbytes for b in plan.values()) == value(private_bytes(allocs)), where


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "conv" else n for n in sorted(OPERATORS)])
def test_the_analysis_is_the_plan_of_every_sampled_kernel(name):
    op = OPERATORS[name]()
    variants = list(cached_variants(op))
    points = choose_points(variants, op.sizes(), SAMPLES[name], GPU, seed=0)
    assert points
    for p in points:
        v = variants[p.variant_index]
        values = {**op.sizes(), **p.config}
        for stage in split_kernels(v.program):
            params = {q.name for q in stage.program.params}
            _check_kernel(stage.program, values, {k: w for k, w in v.placement_map.items() if k in params})


@program
def _partial_dot(a: Array(Float, N, K), b: Array(Float, K)):
    """Each work-item sums K/w0 partial sums of w0 products, kept in an implicit private [[float]1](K/w0)."""
    return join(mapGlb(0, lambda row: toGlobal(mapSeq(id, reduceSeq(
        add, toPrivate(id(0.0)),
        join(mapSeq(lambda chunk: reduceSeq(lambda acc, p: multAndSumUp(acc, p[0], p[1]), toPrivate(id(0.0)), chunk),
                    split(w0, zip(row, b))))))), a))


def test_a_sequential_map_read_as_an_input_is_a_private_temporary():
    found = [(a.name, a.role, str(a.item_bytes)) for a in allocations(_partial_dot)]
    assert found == [("acc_0", "accumulator", "4"), ("priv_0", "temporary", "4*K/w0"), ("acc_1", "accumulator", "4")]
    res = analyze(_partial_dot)
    assert sympy.simplify(sympy.Add(*[x for x, _ in res.private_bytes]) - (8 + 4 * K / w0)) == 0
    _check_kernel(_partial_dot, {"N": 8, "K": 32, "w0": 4}, {})


def test_where_a_temporary_is_needed():
    x = toPrivate(id(0.0))
    assert needs_temporary(x, Position("item", "private")) is None  # already where it is written
    assert needs_temporary(x, Position("item", "global")) == Temporary("private", "temporary")
    assert needs_temporary(x, Position("item")) == Temporary("private", "temporary")
    seq = mapSeq(id, x)
    assert needs_temporary(seq, Position("item", "global")) is None  # stored in place
    assert needs_temporary(seq, Position("item")) == Temporary("private", "temporary")
    with pytest.raises(CodegenError, match="toLocal"):
        needs_temporary(seq, Position("group"))
    total = reduceSeq(add, id(0.0), x)
    assert needs_temporary(total, Position("item", "global")) == Temporary("private", "accumulator")


def test_a_private_value_of_a_work_group_is_spread_over_its_items():
    """A toPrivate of a mapLcl nest at work-group level: each work-item keeps its own elements."""
    @program
    def rows(xs: Array(Float, N, K)):
        return join(mapWrg(0, lambda r: mapLcl(0, lambda v: toGlobal(id(v)), toPrivate(mapLcl(0, id, r))), xs))

    (a,) = allocations(rows)
    assert (a.space, a.level, str(a.type), str(a.share)) == ("private", "group", "[float]K", "float")
    _check_kernel(rows, {"N": 4, "K": 16}, {})
