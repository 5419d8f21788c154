"""Constraint inference: from a parametric program, its sizes and a device profile to a tuning ``Space``.

Every constraint comes with its origin:

- algorithmic: the requirements the primitives' type rules recorded (``split(m)`` and ``asVector(m)``
  need ``n % m == 0``, a strict slide needs ``(n - size) % step == 0``, crop amounts must be whole,
  windows must fit), plus what the rewrite rules that made the variant added (``dot`` takes float2 or
  float4; a tiling keeps the number of windows);
- hardware: work-items per group per dimension and in total, work-items per global dimension, the local
  memory of the ``toLocal`` values, the private memory of accumulators and ``toPrivate`` values when the
  profile knows the registers per work-item, image sizes of image-placed inputs, and the largest buffer.

The program's size variables are substituted first, so a space is a closed problem over the tuning
parameters; every parameter gets the range [1, largest array length of the program] unless the
constraints say more.  A parameter that must divide a length (``split(p)`` of ``[float]n``: ``n % p == 0``)
may reach that length, even where it is longer than every input dimension: the flattened reduction of a
convolution (9·C) or its flattened image (H·W).  (With the inputs' dimensions alone as the bound, split-K
of VGG-16's deep layers was cut off at chunks of 256 of their 1,152 to 4,608 terms.)  The other
parameters keep the inputs' largest dimension, so that a parameter bounded only through another (a
register block dividing a tile) does not range over a whole flattened image.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Sequence

import sympy

from ..errors import ConstraintError
from ..ir.expr import Program
from ..ir.kernels import split_kernels
from ..ir.levels import PARALLEL_LEVELS, Part, Scheme
from ..ir.typecheck import typecheck
from ..ir.types import INT_INDEX_MAX, ArrayType, Type, as_size, flat_count, memory_bytes, subs_type
from ..probe.half import half_constraints
from .forms import divisor_form
from .resources import analyze
from .space import Constraint, Parameter, Space

def _bind(sizes: Mapping) -> dict:
    return {as_size(k) if isinstance(k, str) else k: int(v) for k, v in (sizes or {}).items()}


def _largest_length(program: Program, bindings: dict) -> int:
    best = 1
    for t in program.param_types:
        tt = subs_type(t, bindings)
        while isinstance(tt, ArrayType):
            if tt.size.is_Integer:
                best = max(best, int(tt.size))
            tt = tt.elem
    return best


def _divided_lengths(constraints) -> dict[str, int]:
    """For each parameter ``p`` that a constraint requires to divide a constant (``Mod(n, p + c) == 0``,
    the form the solver turns into divisors: ``forms.divisor_form``), the largest value it may then take."""
    out: dict[str, int] = {}
    for c in constraints:
        for name in c.names:
            form = divisor_form(c.predicate, name)
            if form is not None and form.dividend.is_Integer:
                out[name] = max(out.get(name, 1), abs(int(form.dividend)) - form.offset)
    return out


def infer_space(
    program: Program,
    sizes: Mapping,
    params: Sequence | None = None,
    extra: Sequence = (),
    profile=None,
    placements: Mapping[str, str] | None = None,
    lower_bounds: Mapping[str, int] | None = None,
) -> Space:
    """The tuning space of ``program`` for the given sizes.

    ``params``: the tuning parameters (default: every free symbol that is not a size); ``extra``:
    requirements added by rewrite rules (objects with ``predicate``, ``message`` and ``rule``);
    ``profile``: a ``DeviceProfile`` for the hardware constraints (None: algorithmic constraints only)."""
    bindings = _bind(sizes)
    typing = typecheck(program)
    size_names = {str(k) for k in bindings}
    constraints: list[Constraint] = []
    found_params: set[str] = set()

    seen: set = set()

    bound = tuple(bindings.items())

    def add(pred, origin, primitive: str, kind: str) -> None:
        """``origin``: the message, or a function making it (printing the sizes in it cost a fifth of
        inferring a space, and most device limits hold for every value once the sizes are known)."""
        pred = _bind_pred(pred, bound)
        if pred is sympy.true or pred in seen:
            return
        seen.add(pred)
        names = {str(s) for s in pred.free_symbols}
        found_params.update(names)
        constraints.append(Constraint(pred, origin() if callable(origin) else origin, primitive, kind))

    for r in typing.requirements:
        add(r.predicate, lambda r=r: f"{r.message} (in {r.where})", r.primitive, "algorithmic")
    for r in extra:
        add(r.predicate, r.message, r.rule, "algorithmic")
    for pred, origin, prim in index_constraints(program, placements or {}):
        add(pred, origin, prim, "hardware")
    if profile is not None:
        for pred, origin, prim in hardware_constraints(program, profile, placements or {}):
            add(pred, origin, prim, "hardware")

    declared = [str(p) for p in params] if params is not None else sorted(found_params - size_names)
    missing = sorted(found_params - set(declared) - size_names)
    if missing:
        raise ConstraintError(
            f"no value for {', '.join(missing)} in {program.name}: give {'it' if len(missing) == 1 else 'them'} as a size, "
            "or declare the tuning parameters"
        )
    hi = _largest_length(program, bindings)
    divided = _divided_lengths(constraints)
    lows = dict(lower_bounds or {})
    parameters = tuple(Parameter(name, lo=lows.get(name, 1), hi=max(hi, divided.get(name, 1)), doc="tuning parameter")
                       for name in declared)
    return Space(parameters, tuple(constraints))


@lru_cache(maxsize=8192)
def _bind_pred(pred, bound: tuple):
    """``_tidy(pred.subs(dict(bound)))``, memoised like ``_tidy``: substituting the sizes into the same
    conditions of every variant was a third of inferring a space.  With ``xreplace``, which rebuilds the
    same expressions for a mapping of symbols to numbers without ``subs``' search for patterns (the 128
    variants a search of VGG-16 layer 7 screens first: the same spaces, inferred in 10.9 s instead of
    13.5 s on this project's 2-core machine)."""
    return _tidy(sympy.sympify(pred).xreplace({k: sympy.Integer(v) for k, v in bound}))


@lru_cache(maxsize=8192)
def _tidy(pred):
    """``pred`` with each side of a relation as one reduced fraction, factored: lengths such as
    ``(1 + (p + 112)/(t - 2))*(t - 2)`` become ``p + 114``, so the same condition reached through
    different primitives is recognised as one constraint, and the solver evaluates less.  Only
    denominators that other constraints keep positive (tile minus window, vector widths) are cancelled,
    so the valid set does not change.  Memoised: the variants of one program repeat the same few
    conditions (100 of the convolution's asked 3,499 times for 148 distinct ones), and factoring
    them was half of inferring a space."""
    if not isinstance(pred, sympy.core.relational.Relational) or pred.has(sympy.Mod, sympy.floor, sympy.ceiling):
        return pred
    return pred.func(_tidy_side(pred.lhs), _tidy_side(pred.rhs))


def _tidy_side(e):
    """One side of a relation as one reduced fraction, factored; a minimum or maximum with each of its
    arguments so, which ``cancel`` and ``factor`` leave as sums of fractions: the occupancy limit of a
    pipeline's stage held the stage's result length as twenty fractions over powers of ``t - 2``
    (``589824*(p + 56)**2/w`` tidied), and the solver's exact arithmetic evaluated that form 37 times
    slower."""
    if isinstance(e, (sympy.Min, sympy.Max)):
        return e.func(*[_tidy_side(a) for a in e.args])
    if e.has(sympy.Min, sympy.Max):  # inside a product or sum: tidied there, the whole cancelled
        e = e.replace(lambda x: isinstance(x, (sympy.Min, sympy.Max)), _tidy_side)
    return sympy.factor(sympy.cancel(e))


def index_constraints(program: Program, placements: Mapping[str, str]) -> list[tuple]:
    """(predicate, origin, primitive): every buffer a program's kernels read or write holds at most
    ``INT_INDEX_MAX`` elements, since kernels index with 32-bit ints.  Code generation's limit, not a
    device's: it holds with or without a profile (``liftpy variants --no-device`` counted valid variants
    that code generation then refused)."""
    buffers = [(f"input {p.name}", flat_count(t)) for p, t in zip(program.params, program.param_types)
               if placements.get(p.name, "buffer") == "buffer"]
    stages = split_kernels(program)
    for st in stages:
        label = f" (kernel {st.program.name})" if len(stages) > 1 else ""
        buffers.append((f"{st.output}{label}", flat_count(typecheck(st.program).type)))
    return [(sympy.Lt(count, INT_INDEX_MAX + 1),
             lambda name=name, count=count: f"the buffer {name} has {count} elements; kernels index with 32-bit ints",
             "codegen:int_index") for name, count in buffers]


def hardware_constraints(program: Program, profile, placements: Mapping[str, str]) -> list[tuple]:
    """(predicate, origin, primitive) for the device limits a program's launch and memory must respect;
    for a pipeline, those of each of its kernels.  ``origin`` is a function making the message."""
    out = []
    stages = split_kernels(program)
    total_bytes = sympy.Add(*[memory_bytes(t) for t in program.param_types])
    used = []  # each stage's resources
    for k, st in enumerate(stages):
        label = f" (kernel {st.program.name})" if len(stages) > 1 else ""
        t = typecheck(st.program).type
        used.append(analyze(st.program))
        out.extend((pred, lambda o=origin, label=label: o() + label, prim)
                   for pred, origin, prim in _kernel_limits(st.program, used[-1], t, profile, placements))
        if st.last_group and k:
            out.append(_fused_local_memory(stages[k - 1], used[k - 1], st, used[k], profile))
        # The buffer a stage writes: one allocation (and, for any device, index_constraints).
        nbytes = memory_bytes(t)
        total_bytes += nbytes
        out.append((sympy.Le(nbytes, profile.max_alloc_bytes), lambda st=st, label=label, nbytes=nbytes: f"the buffer {st.output}{label} ({nbytes} bytes) must fit in one allocation ({profile.max_alloc_bytes} bytes)", "device:max_alloc_bytes"))
    out.append((sympy.Le(total_bytes, profile.global_mem_bytes), lambda total_bytes=total_bytes: f"all buffers together ({total_bytes} bytes) must fit in the device's {profile.global_mem_bytes} bytes", "device:global_mem_bytes"))

    out.extend(half_constraints(program, profile))
    return out


def _fused_local_memory(first, first_res, rest, rest_res, profile) -> tuple:
    """A stage run in the previous one's last work-group (``toGlobalLast``) is one kernel with it: their
    local memory together (``analyze``'s, of each), and the word that tells the group it is the last, must
    fit (``codegen.last_group``)."""
    total = sympy.Add(*[b for b, _ in first_res.local_bytes + rest_res.local_bytes], 4)
    return (sympy.Le(total, profile.local_mem_bytes),
            lambda: f"local memory of {first.program.name} with {rest.program.name} run in its last work-group ({total} bytes) "
                    f"must fit in {profile.local_mem_bytes} bytes",
            "device:local_mem_bytes")


def _kernel_limits(program: Program, res, result: Type, profile, placements: Mapping[str, str]) -> list[tuple]:
    """The device limits of one kernel, ``res`` its resources (``analyze``)."""
    out = []
    ndim_local = []
    # The items per group are bounded by the device per dimension and together; every other extent
    # numbers its work-items or groups with a 32-bit id.
    for level in (level for level in PARALLEL_LEVELS if level.part is Part.LOCAL):
        for d in range(3):
            ext = res.extent(level, d)
            if ext is not None:
                lim = profile.max_work_item_sizes[d]
                out.append((sympy.Le(ext, lim), lambda level=level, d=d, ext=ext, lim=lim: f"{level.describe_extent(d, ext)} must be at most {lim} on {profile.device}", level.limit_tag))
                ndim_local.append(ext)
    if ndim_local:
        total = sympy.Mul(*ndim_local)
        out.append(
            (sympy.Le(total, profile.max_work_group_size), lambda total=total: f"work-items per group ({total}) must be at most {profile.max_work_group_size} on {profile.device}", "device:max_work_group_size")
        )
    for d in range(3):
        for level in (level for level in PARALLEL_LEVELS if level.part is not Part.LOCAL):
            ext = res.extent(level, d)
            if ext is not None:
                out.append((sympy.Le(ext, INT_INDEX_MAX), lambda level=level, d=d, ext=ext: f"{level.describe_extent(d, ext)} must fit in a 32-bit id", level.limit_tag))
    items = _total_items(res)
    if items is not None and profile.min_parallelism > 1:
        # A kernel whose result has fewer elements than the device wants work-items (a fully connected
        # layer of batch 1, a last sum) is held to one work-item per element, not pruned away entirely.
        elements = sympy.Mul(*result.dims) if isinstance(result, ArrayType) else sympy.Integer(1)
        # Unevaluated: deciding the minimum of symbolic sizes asks sympy's assumptions (a sixth of
        # inferring a space); with the sizes substituted it is a minimum of two numbers.
        need = sympy.Min(profile.min_parallelism, elements, evaluate=not elements.free_symbols)
        out.append(
            (
                sympy.Ge(items, need),
                lambda items=items, need=need, elements=elements: f"the kernel launches {items} work-items; at least {need} (the fewer of its {elements} result "
                f"elements and the {profile.min_parallelism} that keep the {profile.compute_units} compute units "
                f"of {profile.device} busy)",
                "prune:occupancy",
            )
        )
    if res.local_bytes:
        total = sympy.Add(*[b for b, _ in res.local_bytes])
        what = ", ".join(d for _, d in res.local_bytes)
        out.append((sympy.Le(total, profile.local_mem_bytes), lambda total=total, what=what: f"local memory ({total} bytes: {what}) must fit in {profile.local_mem_bytes} bytes", "device:local_mem_bytes"))
    if res.private_bytes:
        total = sympy.Add(*[b for b, _ in res.private_bytes])
        what = ", ".join(d for _, d in res.private_bytes)
        cap = profile.private_item_limit_bytes
        out.append((sympy.Le(total, cap), lambda total=total, what=what: f"private memory per work-item ({total} bytes: {what}) must be at most {cap} bytes on {profile.device}", "device:private_item_bytes"))
        group = profile.private_group_limit_bytes
        if group is not None and ndim_local:
            # The mapLcl's fix the group.  Without one the launch does: the driver's choice where its largest
            # group fits, else the largest group that does (codegen.kernel.fit_private), one work-item at
            # least, whose own private memory the limit above bounds.
            items = sympy.Mul(*ndim_local)
            out.append((sympy.Le(total * items, group),
                        lambda total=total, items=items: f"private memory of a work-group ({total} bytes in each of {items} work-items) must be at most {group} bytes on {profile.device}",
                        "device:private_group_bytes"))
    if res.private_bytes and profile.private_mem_bytes is not None:
        total = sympy.Add(*[b for b, _ in res.private_bytes])
        what = ", ".join(d for _, d in res.private_bytes)
        out.append(
            (
                sympy.Le(total, profile.private_mem_bytes),
                lambda total=total, what=what: f"private memory per work-item ({total} bytes: {what}) must fit in the {profile.registers_per_item} registers measured on {profile.device}",
                "device:registers_per_item",
            )
        )
    for p, t in zip(program.params, program.param_types):
        nbytes = memory_bytes(t)
        out.append((sympy.Le(nbytes, profile.max_alloc_bytes), lambda p=p, nbytes=nbytes: f"input {p.name} ({nbytes} bytes) must fit in one buffer ({profile.max_alloc_bytes} bytes)", "device:max_alloc_bytes"))
        if placements.get(p.name) == "image":
            dims = t.dims if isinstance(t, ArrayType) else ()
            if len(dims) == 3:
                h, w, c = dims
                out.append((sympy.Le(w * c / 4, profile.image2d_max_width), lambda p=p, w=w, c=c: f"image {p.name} is {w}*{c}/4 texels wide, at most {profile.image2d_max_width}", "device:image2d_max_width"))
                out.append((sympy.Le(h, profile.image2d_max_height), lambda p=p, h=h: f"image {p.name} is {h} texels high, at most {profile.image2d_max_height}", "device:image2d_max_height"))
                if not profile.image_support:
                    out.append((sympy.false, lambda p=p: f"input {p.name} is placed in an image but {profile.device} has no image support", "device:image_support"))
    return out


def _total_items(res) -> sympy.Expr | None:
    """The work-items a kernel launches: the product of the extents of the scheme its maps use."""
    for scheme in Scheme:
        parts = [res.extent(level, d) for level in scheme.levels for d in range(3)]
        parts = [p for p in parts if p is not None]
        if parts:
            return sympy.Mul(*parts)
    return None


def variant_space(variant, sizes: Mapping, profile=None) -> Space:
    """The space of an explored variant: its program, its parameters, the requirements of its rules."""
    return infer_space(
        variant.program, sizes, variant.params, variant.requirements, profile, variant.placement_map, dict(variant.lower_bounds)
    )
