"""Splitting a program into a pipeline of kernels: where a kernel boundary is, written once for the
rewrite rules, the constraint inference, the cost model and code generation.

A value that must be complete before the rest of the computation can read it (the padded input, the
partial sums of every window, the full result before it is cropped) is written to global memory by a
kernel of its own.  In the IR this is ``let(fun(v) => rest, toGlobal(e))`` at the top of the program:
``e`` becomes a kernel whose output buffer is ``v``, and ``rest`` continues with ``v`` as an input.  The
interpreter gives ``let`` and ``toGlobal`` their plain meaning, so a pipeline computes exactly what the
program says.  ``toGlobalLast(e)`` is the same boundary, whose next stage runs in the last work-group of
``e``'s kernel rather than as a kernel of its own (``Stage.last_group``, ``codegen.last_group``).

A program with several results (``tuple(a, b)`` under its boundaries and the ``let``s the results share,
``liftpy.ir.results``) has one kernel per result after those of its boundaries, each writing a buffer of
its own (``out0``, ``out1``, ...; ``result_buffers``), each under the ``let``s (not boundaries) it needs.

Each intermediate buffer gets a name that depends only on the program (the hint its ``let`` was written
with, then its stage number if that is taken), never on the process-wide counter that made ``v`` fresh:
the name is a kernel parameter, so the generated source, its hash and the compile cache stay the same
from one process to the next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import primitives as P
from .expr import Call, Expr, Program, Var, substitute
from .results import result_parts, with_lets
from .typecheck import symbolic_typing, type_of
from .types import Type


@dataclass(frozen=True)
class Stage:
    program: Program  # a single-kernel program over the pipeline's inputs and earlier stages' outputs
    output: str  # name of the buffer it writes (the final stage writes the pipeline's output)
    result: int | None = None  # for a program with several results: which one it writes (None: an intermediate)
    last_group: bool = False  # runs in the previous stage's last work-group (``toGlobalLast``), not a kernel of its own

    @property
    def writes_result(self) -> bool:
        """Whether the buffer it writes is (part of) what the program returns."""
        return self.output == "out" or self.result is not None


def is_boundary(e: Expr) -> bool:
    return (
        isinstance(e, Call)
        and isinstance(e.fn, P.Let)
        and isinstance(e.args[0], Call)
        and isinstance(e.args[0].fn, P.ToGlobal)
    )


def split_kernels(program: Program) -> list[Stage]:
    """The stages of a program, in execution order (a single stage for a program without boundaries)."""
    hit = _SPLIT.get(id(program))
    if hit is None or hit[0] is not program:
        if len(_SPLIT) >= 1024:
            _SPLIT.clear()
        hit = _SPLIT[id(program)] = (program, _stages(program))
    return list(hit[1])


# The stages of each program split lately, by the program's identity (which the entry keeps alive): code
# generation splits a variant's program again at every configuration of a search, and each split built
# new stage programs, equal to the last ones but not the same objects, whose nodes hashed again wherever
# code generation keys a memo by a sub-expression.  Not by equality: programs equal up to the names of
# their bound variables are equal, and the buffers between stages are named after those.
_SPLIT: dict = {}


def forget_stages() -> None:
    """Empty the memo of the programs split into stages."""
    _SPLIT.clear()


def _stages(program: Program) -> tuple[Stage, ...]:
    env: dict[str, Type] = {p.name: t for p, t in zip(program.params, program.param_types)}
    stages: list[Stage] = []
    body = program.body
    taken = set(env) | {"out"}
    outputs = _output_names(program, taken)
    taken |= set(outputs)
    last = False  # (whether the boundary before the next stage is a toGlobalLast)
    while is_boundary(body):
        (v,) = body.fn.f.params
        computed = body.args[0].args[0]
        name = _stable_name(v.name, len(stages), taken)
        taken.add(name)
        stage = _stage_program(f"{program.name}_{len(stages)}", computed, env, program)
        stages.append(Stage(stage, name, last_group=last))
        last = body.args[0].fn.last
        env[name] = _result_type(stage)
        body = body.fn.f.body if name == v.name else substitute(body.fn.f.body, {v.name: Var(name)})
    parts = result_parts(body)
    if parts is not None:
        # Several results: one kernel each, under the lets (that are not kernel boundaries) it needs.
        lets, results = parts
        for k, (e, output) in enumerate(zip(results, outputs)):
            e = with_lets(lets, e)
            # (not in the last work-group of a toGlobalLast's kernel: the others read the buffer between,
            # which a fused kernel keeps to itself; such a boundary is a plain one here)
            stages.append(Stage(_stage_program(f"{program.name}_{len(stages)}", e, env, program), output, k))
        return tuple(stages)
    name = program.name if not stages else f"{program.name}_{len(stages)}"
    stages.append(Stage(_stage_program(name, body, env, program), "out", last_group=last))
    return tuple(stages)


def _output_names(program: Program, taken: set[str]) -> tuple[str, ...]:
    """The buffers of a program's several results, ``out0``, ``out1``, ... (none for one result)."""
    parts = result_parts(_below_boundaries(program.body))
    if parts is None:
        return ()
    names: list[str] = []
    for k in range(len(parts[1])):
        name = f"out{k}"
        while name in taken or name in names:
            name += "_"
        names.append(name)
    return tuple(names)


def _below_boundaries(body: Expr) -> Expr:
    while is_boundary(body):
        body = body.fn.f.body
    return body


def result_buffers(program: Program) -> tuple[str, ...] | None:
    """The names of the buffers holding a program's several results, in order (``split_kernels``' ``out0``,
    ``out1``, ...); None for a program with one result (its buffer is ``out``)."""
    names = tuple(st.output for st in sorted((st for st in split_kernels(program) if st.result is not None),
                                              key=lambda st: st.result))
    return names or None


def _stable_name(fresh: str, index: int, taken: set[str]) -> str:
    base = re.sub(r"_\d+$", "", fresh).rstrip("_") or "tmp"
    name, n = base, index
    while name in taken:  # a parameter may already be called xs_0
        name, n = f"{base}_{n}", n + 1
    return name


def _result_type(stage: Program) -> Type:
    """The type of what a stage computes, from its typing as code generation checks it (typed once, not
    once here and once there: half of splitting a tiled convolution's program), or, where that typing
    fails, from ``type_of``, which says why."""
    typing = symbolic_typing(stage)
    if typing is not None:
        return typing.type
    return type_of(stage.body, dict(zip((p.name for p in stage.params), stage.param_types)))


def _stage_program(name: str, e: Expr, env: dict, program: Program) -> Program:
    # Keep the pipeline's inputs in their order first, then earlier stages' outputs, as parameters.
    order = [p.name for p in program.params] + [n for n in env if n not in {p.name for p in program.params}]
    used = [n for n in order if n in e.free_vars]
    return Program(name, tuple(Var(n) for n in used), tuple(env[n] for n in used), e)


def kernel_count(program: Program) -> int:
    n, body = 1, program.body
    while is_boundary(body):
        n += 1
        body = body.fn.f.body
    parts = result_parts(body)
    return n if parts is None else n - 1 + len(parts[1])
