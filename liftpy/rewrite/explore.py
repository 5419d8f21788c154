"""The exploration driver: from one high-level program to many distinct, fully lowered variants.

Exploration runs in stages, each a *strategy*: a function from a variant to the list of variants it can
become (Elevate's combinators, with "all results" semantics so choices multiply):

0. the normal form (``normal.py``): equivalent spellings of a matrix product (an accumulator spelt
   ``acc + a * b``, an epilogue around the dot product, rows zipped with another array's, a product of a
   product) brought to the shape the tilings take; the general stages fuse an epilogue back into its
   product's nest first (``dotFusion``), the tilings write it out with their tiles;
1. algorithmic macros, each optional, in a fixed order: vectorize the reduction (``vectorizeReduce``),
   split it into partial reductions (``partialReduce``) with or without the coalescing reorder,
   register-block a map of maps over a reduction (``registerBlock2D``), tile a 2D stencil or convolution
   (``tile2D``), group the iterations of the outermost map (``splitJoin``);
2. work mapping: the nest of computing maps gets OpenCL mappings by a policy (``mapGlb`` over the outer
   one to three maps, or ``mapWrg`` then ``mapLcl``), every other map becomes ``mapSeq``, every reduction
   ``reduceSeq`` with a private accumulator;
3. memory and loop options: fetch values reused by a map into private memory (``letPrivate``), stage a
   work-group's data in local memory (``localStage``), unroll the innermost reduction;
4. placement: inputs ``[[[float]C]W]H`` with ``C % 4 == 0`` may be read through an OpenCL image.

Variants are de-duplicated structurally (alpha-equivalence) after every stage and carry the trace of the
rules that produced them, their tuning parameters and the requirements the rules added.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Callable, Iterable

import sympy

from ..errors import RewriteError
from ..ir import primitives as P
from ..ir.analysis import is_lowered, is_view
from ..ir.expr import Call, Program
from ..ir.printer import show_program
from ..ir.types import ArrayType, Float, innermost
from .algorithmic import (coalesce, flatten_map2D, groups_out, partial_reduce, split_join, split_strided, tile2D, vectorize_map,
                          vectorize_reduce)
from .allpairs import tile_all_pairs
from .blocking import register_block2D
from .epilogue import match_product
from .lowering import (
    MAP_LCL,
    MAP_SEQ,
    MAP_TO,
    MAP_WRG,
    double_buffer,
    let_private,
    limit_unrolled_nests,
    local_stage,
    private_accumulator,
    reduce_lcl,
    reduce_seq,
    stage_tiles,
    stage_tiles_t,
    unroll_in_item,
    unroll_reduce,
)
from .mappings import Mapping, group_mapping, mapping_policies, widest_global
from .positions import positions
from .rule import Requirement, Rule, TraceStep, try_rule
from .tiling import pad_k, split_k, split_k_groups, tile2D_reduce, tile2D_reduce_strided


@dataclass(frozen=True)
class Variant:
    program: Program
    params: tuple[sympy.Symbol, ...] = ()
    requirements: tuple[Requirement, ...] = ()
    placements: tuple[tuple[str, str], ...] = ()
    trace: tuple[TraceStep, ...] = ()
    lower_bounds: tuple[tuple[str, int], ...] = ()  # parameters whose smallest value is not 1

    @property
    def key(self):
        return (self.program, self.placements)

    @property
    def placement_map(self) -> dict[str, str]:
        return dict(self.placements)

    @property
    def lowered(self) -> bool:
        return is_lowered(self.program)

    def text(self) -> str:
        lines = [show_program(self.program)]
        lines.append(f"// parameters: {', '.join(map(str, self.params)) or 'none'}")
        if self.placements:
            lines.append("// placement: " + ", ".join(f"{k} in {v}" for k, v in self.placements))
        for r in self.requirements:
            lines.append(f"// requires: {r.message}")
        lines.append("// rules: " + ("; ".join(str(s) for s in self.trace) or "none"))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


Strategy = Callable[[Variant], list[Variant]]


# ------------------------------------------------------------------------------------- combinators


def once(rule: Rule, where: Callable | None = None) -> Strategy:
    """Apply ``rule`` at the first position (pre-order) where it applies; no result if none."""

    def go(v: Variant) -> list[Variant]:
        for path, e in positions(v.program.body):
            if where is not None and not where(path, e):
                continue
            r = try_rule(v.program, rule, path)
            if r is not None:
                return [_extend(v, r)]
        return []

    return go


def everywhere(rule: Rule) -> Strategy:
    """Apply ``rule`` at every position where it applies, one variant per position."""

    def go(v: Variant) -> list[Variant]:
        out = []
        for path, _ in positions(v.program.body):
            r = try_rule(v.program, rule, path)
            if r is not None:
                out.append(_extend(v, r))
        return out

    return go


def normalize(rule: Rule, limit: int = 200) -> Strategy:
    """Apply ``rule`` until it no longer applies (deterministically, first position each time)."""
    step = once(rule)

    def go(v: Variant) -> list[Variant]:
        for _ in range(limit):
            nxt = step(v)
            if not nxt:
                return [v]
            v = nxt[0]
        raise RuntimeError(f"rule {rule.name} did not reach a normal form within {limit} steps")

    return go


def seq(*strategies: Strategy) -> Strategy:
    def go(v: Variant) -> list[Variant]:
        states = [v]
        for s in strategies:
            states = dedup(x for st in states for x in s(st))
        return states

    return go


def choice(*strategies: Strategy) -> Strategy:
    def go(v: Variant) -> list[Variant]:
        return dedup(x for s in strategies for x in s(v))

    return go


def optional(s: Strategy) -> Strategy:
    """The variant unchanged, or what ``s`` makes of it."""
    return choice(lambda v: [v], s)


def try_(s: Strategy) -> Strategy:
    """What ``s`` makes of the variant, or the variant unchanged when ``s`` does not apply."""

    def go(v: Variant) -> list[Variant]:
        return s(v) or [v]

    return go


def dedup(variants: Iterable[Variant]) -> list[Variant]:
    seen = set()
    out = []
    for v in variants:
        if v.key not in seen:
            seen.add(v.key)
            out.append(v)
    return out


def _extend(v: Variant, r) -> Variant:
    return replace(
        v,
        program=r.program,
        params=v.params + r.params,
        requirements=v.requirements + r.requirements,
        trace=v.trace + (r.step,),
        lower_bounds=v.lower_bounds + r.lower_bounds,
    )


# ------------------------------------------------------------------------------------- work mapping


def over_reduction(e) -> bool:
    """A map over the one-element result of a reduction (a function applied to a sum): it stays sequential,
    never a dimension of work-items of its own (which would launch one work-item per group)."""
    return (isinstance(e, Call) and type(e.fn) is P.Map and isinstance(e.args[0], Call)
            and isinstance(e.args[0].fn, P.ReduceLike))


def computing_maps(program: Program) -> int:
    """Depth of the nest of computing high-level maps (the 'spine' the mapping policies distribute)."""
    depth = 0
    best = 0

    def walk(e, d):
        nonlocal best
        if isinstance(e, Call):
            here = type(e.fn) is P.Map and not is_view(e.fn.f.body) and not over_reduction(e)
            nd = d + 1 if here else d
            best = max(best, nd)
            if isinstance(e.fn, P.Primitive) and not isinstance(e.fn, P.ReduceLike):
                from ..ir.expr import primitive_functions

                for _, lam in primitive_functions(e.fn):
                    walk(lam.body, nd)
            elif hasattr(e.fn, "body"):
                walk(e.fn.body, nd)
            for a in e.args:
                walk(a, d)

    walk(program.body, depth)
    return best


def kernel_regions(program: Program) -> list[tuple]:
    """Path prefixes of the kernels of a program: each ``toGlobal`` value of a kernel boundary, and the
    final body."""
    from ..ir.kernels import is_boundary

    out, path, e = [], (), program.body
    while is_boundary(e):
        out.append(path + (("arg", 0), ("arg", 0)))
        path += (("fn", "f"),)
        e = e.fn.f.body
    out.append(path)
    return out


def apply_mapping(mapping: Mapping) -> Strategy:
    """Map every kernel of a program by the mapping (``mappings.py``); the remaining maps and every
    reduction become sequential."""

    def go(v: Variant) -> list[Variant]:
        for prefix in kernel_regions(v.program):
            depth = _kernel_depth(v.program, prefix)
            if depth == 0:
                continue
            region = _within(prefix, kernel_regions(v.program))

            def inside(path, e, region=region) -> bool:
                return region(path, e) and not over_reduction(e)

            if mapping.every_nest:
                mapped = _every_nest(v, mapping, inside)
                if mapped is None:
                    # A kernel with no nest for the work-items (the sum of split-K's partials): global mapping.
                    for rule in widest_global(depth).rules(depth):
                        nxt = once(rule, where=inside)(v)
                        if not nxt:
                            return []
                        v = nxt[0]
                    continue
                v = mapped
                continue
            for rule in mapping.rules(depth):
                nxt = once(rule, where=inside)(v)
                if not nxt:
                    return []
                v = nxt[0]
        v = normalize(MAP_SEQ)(v)[0]
        v = normalize(reduce_seq)(v)[0]
        return [v]

    return go


def _every_nest(v: Variant, mapping: Mapping, inside) -> Variant | None:
    """The maps of every level but the last as the mapping says, then *every* nest of maps inside over the
    last level: the outer map of each nest in the level's first dimension, the next in its second and so
    on.  This is the mapping of a tiled matrix product, where the initialisation of the accumulators, each
    step of the k loop and the write-out are separate nests that must give each work-item the same block.
    None when no nest is left for the last level."""
    *outer, (last, dims) = mapping.nests
    for level, outer_dims in outer:
        for d in outer_dims:
            nxt = once(MAP_TO[level][d], where=inside)(v)
            if not nxt:
                return None
            v = nxt[0]
    mapped_any = False
    for d in dims:
        step = once(MAP_TO[last][d], where=inside)
        for _ in range(64):
            nxt = step(v)
            if not nxt:
                break
            v = nxt[0]
            mapped_any = True
    return v if mapped_any else None


def _within(prefix: tuple, regions: list[tuple]):
    """Positions inside the kernel at ``prefix`` (and not inside a later kernel nested below it)."""
    others = [r for r in regions if r != prefix and r[: len(prefix)] == prefix]

    def where(path, e) -> bool:
        return path[: len(prefix)] == prefix and not any(path[: len(o)] == o for o in others)

    return where


def _kernel_depth(program: Program, prefix: tuple) -> int:
    from ..ir.kernels import is_boundary
    from .positions import get_at

    e = get_at(program.body, prefix)
    if is_boundary(e):
        return 0
    return computing_maps(Program(program.name, program.params, program.param_types, e))


def lower_all(v: Variant) -> list[Variant]:
    depth = max((_kernel_depth(v.program, p) for p in kernel_regions(v.program)), default=0)
    out = []
    for mapping in mapping_policies(depth) or [widest_global(0)]:
        out.extend(apply_mapping(mapping)(v))
    return dedup(out)


def _accumulators(v: Variant) -> list[Variant]:
    return normalize(private_accumulator)(v)


# ------------------------------------------------------------------------------------- placement


def image_candidates(program: Program) -> list[str]:
    out = []
    for p, t in zip(program.params, program.param_types):
        if isinstance(t, ArrayType) and len(t.dims) == 3 and innermost(t) == Float:
            c = t.dims[2]
            if c.is_Integer and int(c) % 4 == 0 or not c.is_Integer:
                out.append(p.name)
    return out


def place_in_image(name: str) -> Strategy:
    def go(v: Variant) -> list[Variant]:
        if name in dict(v.placements):
            return []
        step = TraceStep("placeInImage", f"input {name}")
        reqs = ()
        t = v.program.inputs[name]
        c = t.dims[2]
        if not c.is_Integer:
            reqs = (Requirement(sympy.Eq(sympy.Mod(c, 4), 0), f"image input {name} packs {c} channels by four", "placeInImage"),)
        return [replace(v, placements=tuple(sorted(v.placements + ((name, "image"),))), trace=v.trace + (step,), requirements=v.requirements + reqs)]

    return go


# ------------------------------------------------------------------------------------- the driver


@dataclass(frozen=True)
class ExploreOptions:
    """Which rules the exploration may use, and how far it may go.

    ``depth`` bounds how many algorithmic macros one variant combines; the memory stage picks at most one
    of its options per variant.  Both keep the number of variants in the tens, so each can be checked."""

    vectorize: bool = True
    partial: bool = True
    coalesce: bool = True
    register_block: bool = True
    tile: bool = True
    group: bool = True
    depth: int = 2
    let_private: bool = True
    local_stage: bool = True
    unroll: bool = True
    images: bool = True
    max_variants: int | None = None
    extra_rules: tuple = ()  # user rules (e.g. from text), each an optional algorithmic step
    pipeline: bool = False  # derive multi-kernel pipelines (padding, partial sums, crop kernels)
    tile_reduce: bool = True  # two-level tiling of maps of maps over dot products (tiled_dot)
    split_k: bool = True  # with it, the reduction split across work-groups and a summing kernel
    pad_k: bool = False  # with it, the dot products' operands padded with up to 7 zeros (for a K no tile divides)
    double_buffer: bool = True  # with it, tiles staged at every k step double-buffered too (doubleBuffer)
    reduce_kernels: bool = True  # a whole-array reduction as partial sums in one kernel, summed in the next
    let_global: bool = True  # a let-bound computed array becomes a kernel of its own (letGlobal)
    all_pairs: bool = True  # all-pairs interactions tiled, each tile staged in local memory (tiled_all_pairs)
    tree_reduce: bool = True  # a whole-array reduction per work-group as a tree in local memory (tree_reduction)
    normal_form: bool = True  # start from the normal form (normal.py): products in the shape the tilings take
    rows: bool = True  # each row a reduction reads shared by a work-group's items (rows_strategy.cooperative_rows)
    precision: str = "fp32"  # fp16-storage: float arrays stored as half (rewrite/half.py); fp32 leaves them float
    half_each: bool = False  # with fp16-storage, every subset of the arrays stored as half, not only all of them

    def __post_init__(self):
        # A rule given twice (one rules file read twice, the same rule in two files) is one macro: as two,
        # a variant could apply it twice as two macros, which added variants that only repeat the rule.  Two
        # different rules of one name could not be told apart in a variant's trace.
        kept: dict[str, Rule] = {}
        for r in self.extra_rules:
            seen = kept.get(r.name)
            if seen is not None and seen != r:
                raise RewriteError(f"two different rules have the name {r.name} ({seen.equation}; {r.equation}): "
                                   "rename one")
            kept.setdefault(r.name, r)
        object.__setattr__(self, "extra_rules", tuple(kept.values()))


def _macros(opts: ExploreOptions) -> list[tuple[str, Strategy]]:
    """The optional algorithmic macros, in the order they are applied when combined."""
    out: list[tuple[str, Strategy]] = []
    if opts.vectorize:
        out.append(("vectorize", once(vectorize_reduce)))
        # An elementwise map over floats on vectors (float4 loads and stores); with ``group`` after it, each
        # work-item takes several vectors.
        out.append(("vectorizeMap", once(vectorize_map)))
    if opts.partial:
        partial = once(partial_reduce)
        out.append(("partial", choice(partial, seq(partial, once(coalesce))) if opts.coalesce else partial))
    if opts.partial and opts.reduce_kernels:
        from .pipeline import reduce_kernels

        # A whole-array reduction in parallel: partial sums (coalesced or not) in one kernel, their sum in
        # the next (applies only where the program's result is one reduction).
        chunks = seq(once(partial_reduce), optional(once(coalesce))) if opts.coalesce else once(partial_reduce)
        out.append(("reduceKernels", seq(chunks, once(reduce_kernels))))
    if opts.register_block:
        # The general stages start from one nest (dotFusion): a product with an epilogue is taken apart
        # again for the blocking, which writes the epilogue out with each block, and what is left fused.
        from .normal import dot_fusion, normal_form

        block = once(register_block2D)
        if opts.normal_form:
            block = seq(normal_form(), block, normalize(dot_fusion))
        out.append(("block", block))
    if opts.tile:
        from .stencil_tiles import tile_sweeps

        # (tile2D for a map over windows alone, tileZip2D for windows zipped with other arrays: every sweep)
        out.append(("tile", choice(once(tile2D), tile_sweeps())))
    if opts.group:
        out.append(("group", once(split_join, where=lambda path, e: not any(s[0] in ("fn", "callee") for s in path))))
        out.append(("groupZip", once(split_join, where=_over_input_zip)))
        # several elements of an elementwise map per work-item, neighbouring items on neighbouring elements
        out.append(("groupStrided", once(split_strided, where=_elementwise)))
    for r in opts.extra_rules:
        out.append((r.name, once(r)))
    return out


def pipeline_stage(opts: ExploreOptions) -> Strategy:
    """The direct convolution of the Lift paper (section 4.2) as one macro with optional parts:
    optimisational padding (ρ), a padding kernel, vectorization (υ), partial reductions with or without
    coalescing (ω) summed in a kernel of their own, tiling (θ); a crop kernel when the padding needs one."""
    from .pipeline import crop_kernel, materialize_input, pad_opt, split_partial_kernels

    partial = seq(once(partial_reduce), optional(once(coalesce)) if opts.coalesce else (lambda v: [v]), once(split_partial_kernels))
    steps = [optional(once(pad_opt)), optional(once(materialize_input))]
    if opts.vectorize:
        steps.append(optional(once(vectorize_reduce)))
    if opts.partial:
        steps.append(optional(partial))
    if opts.tile:
        steps.append(optional(once(tile2D)))
    if opts.group:
        steps.append(optional(once(split_join, where=_over_input_zip)))
    steps.append(try_(once(crop_kernel)))
    return seq(*steps)


def _elementwise(path, e) -> bool:
    """A map at the top of a kernel's nest whose function maps no array and reduces none: an elementwise
    map (its work per element a few operations, its time the memory's)."""
    if any(s[0] in ("fn", "callee") for s in path) or not (isinstance(e, Call) and type(e.fn) is P.Map):
        return False
    return not any(isinstance(n, Call) and isinstance(n.fn, (P.MapLike, P.ReduceLike)) for _, n in positions(e.fn.f.body))


def _over_input_zip(path, e) -> bool:
    """A map over a zip of program inputs (the kernels of a convolution: grouping them is κ)."""
    from ..ir.expr import Var

    return (
        isinstance(e, Call)
        and type(e.fn) is P.Map
        and isinstance(e.args[0], Call)
        and isinstance(e.args[0].fn, P.Zip)
        and all(isinstance(a, Var) for a in e.args[0].args)
    )


def algorithmic_stage(opts: ExploreOptions) -> Strategy:
    """Every combination of at most ``depth`` macros, applied in their fixed order."""
    if opts.pipeline:
        return pipeline_stage(opts)
    macros = _macros(opts)

    def go(v: Variant) -> list[Variant]:
        out = [v]
        for k in range(1, opts.depth + 1):
            for combo in itertools.combinations(macros, k):
                out.extend(seq(*[s for _, s in combo])(v))
        return dedup(out)

    return go


def memory_stage(opts: ExploreOptions) -> Strategy:
    options: list[Strategy] = [lambda v: [v]]
    if opts.let_private:
        options.append(once(let_private))
    if opts.local_stage:
        from .stencil_tiles import local_stage_rows, local_stage_zipped

        options.append(once(local_stage))
        options.append(seq(once(local_stage_zipped), normalize(local_stage_zipped)))  # every zipped tile staged
        options.append(once(local_stage_rows))  # a stencil's tile copied by a 2D group's rows
    if opts.unroll:
        options.append(once(unroll_reduce, where=_innermost_reduce))
    return seq(_accumulators, choice(*options))


def _innermost_reduce(path, e) -> bool:
    if not (isinstance(e, Call) and isinstance(e.fn, P.ReduceSeq)):
        return False
    return not any(isinstance(n, Call) and isinstance(n.fn, P.ReduceLike) for _, n in list(positions(e))[1:])


def placement_stage(program: Program, opts: ExploreOptions) -> Strategy:
    if opts.precision == "fp16-storage":  # (half storage: after the images, of the arrays left in buffers)
        from .half import half_storage_stage

        return seq(placement_stage(program, replace(opts, precision="fp32")), half_storage_stage(opts.half_each))
    if not opts.images:
        return lambda v: [v]
    return seq(*[optional(place_in_image(name)) for name in image_candidates(program)])


def tiled_dot(opts: ExploreOptions) -> Strategy:
    """The vendor-class shape of a matrix product (or any map of maps over a dot product): work-group
    tiles accumulated over k-chunks (``tile2DReduce``; a grouped convolution's groups moved out first,
    ``groupsOut``, one product per group on a third dimension of work-groups), every nest of the group over its work-items
    (``every_nest``), with ``pad_k`` the reduction padded with zeros first (``padK``), the chunks staged in local
    memory as they are or transposed (``stageTiles``,
    ``stageTilesT``) or read from global memory, staged tiles double-buffered or not (``doubleBuffer``),
    and the loops over each work-item's register block unrolled (``unrollInItem``)."""
    from .pipeline import let_global

    # Every tiled kernel's tiles staged (two chained products are two), each doubled or none.
    doubled = optional(normalize(double_buffer)) if opts.double_buffer else (lambda v: [v])
    staging = choice(seq(once(stage_tiles), normalize(stage_tiles), doubled),
                     seq(once(stage_tiles_t), normalize(stage_tiles_t), doubled), lambda v: [v])
    boundaries = normalize(let_global) if opts.let_global else (lambda v: [v])

    def mapping(v: Variant) -> list[Variant]:
        # split-K adds the chunks of the reduction as a third dimension of work-groups, a grouped
        # convolution its groups, and both (``splitKGroups``) its groups' chunks as one; OpenCL has three.
        groups = 2 + sum(1 for s in v.trace if s.rule in ("splitK", "groupsOut"))
        return apply_mapping(group_mapping(groups, 2, every_nest=True))(v) if groups <= 3 else []

    return seq(
        # (an epilogue over a product is a map of maps too, but one to write out, not to flatten)
        try_(once(flatten_map2D, where=lambda path, e: match_product(e) is None)),
        try_(once(groups_out)),
        optional(once(pad_k)) if opts.pad_k else (lambda v: [v]),
        # a grouped product's split flattens the groups and the chunks into one dimension of work-groups
        optional(choice(once(split_k), once(split_k_groups))) if opts.split_k else (lambda v: [v]),
        _every_product(choice(once(tile2D_reduce), once(tile2D_reduce_strided))),
        boundaries,  # a product's computed operand (letOperand) a kernel of its own
        mapping,
        _accumulators,
        staging,
        normalize(unroll_in_item),
        limit_unrolled_nests,
    )


def _every_product(tile: Strategy) -> Strategy:
    """``tile`` applied to one product, then to every other product left (two chained products), each
    application giving its choices; no result when no product is there."""

    def go(v: Variant) -> list[Variant]:
        out = []
        for w in tile(v):
            out.extend(go(w) or [w])
        return dedup(out)

    return go


def tiled_all_pairs(opts: ExploreOptions) -> Strategy:
    """The N-body shape of an all-pairs interaction: a work-group folds a chunk of the elements over the
    other array a tile at a time (``tileAllPairs``), every nest of the group over its work-items, each
    tile staged in local memory by the whole group (``localStage``) or read from global memory."""
    staging = choice(once(local_stage), lambda v: [v]) if opts.local_stage else (lambda v: [v])
    return seq(once(tile_all_pairs), apply_mapping(group_mapping(1, 1, every_nest=True)), _accumulators, staging)


def tree_reduction(opts: ExploreOptions) -> Strategy:
    """Lift's parallel reduction of a whole array (a dot product, a sum, a maximum): the array in chunks
    of ``w0``, one per work-group, each split again into ``w0 / w1`` runs of ``w1`` that the group's
    work-items reduce sequentially (neighbouring items reading neighbouring elements, with the
    coalescing reorder, or each its own run); the group then combines its items' results as a tree in
    local memory (``reduceLcl``) and writes one value; a second kernel adds the groups' values with the
    initial one (``reduceKernels``)."""
    from .pipeline import reduce_kernels

    vectorize = optional(once(vectorize_reduce)) if opts.vectorize else (lambda v: [v])
    coalesced = optional(once(coalesce)) if opts.coalesce else (lambda v: [v])
    return seq(vectorize, once(partial_reduce), once(partial_reduce), coalesced, once(reduce_kernels),
               once(MAP_WRG[0]), once(reduce_lcl), normalize(MAP_LCL[0]), normalize(MAP_SEQ), normalize(reduce_seq),
               _accumulators)


def default_strategy(program: Program, options: ExploreOptions = ExploreOptions()) -> Strategy:
    """The strategy ``explore`` uses when given options: the normal form (``normal.py``), then the general
    stages (algorithmic macros, work mapping, memory), or the tiled dot-product shape, then placement."""
    from .normal import dot_fusion, normal_form
    from .pipeline import let_global

    boundaries = normalize(let_global) if options.let_global else (lambda v: [v])
    # The general stages want one nest per kernel: what the normal form took out of a dot product's map
    # goes back into it (dotFusion) before they start.
    fused = normalize(dot_fusion) if options.normal_form else (lambda v: [v])
    general = seq(fused, algorithmic_stage(options), boundaries, lower_all, memory_stage(options))
    if options.tile_reduce and not options.pipeline:
        general = choice(general, tiled_dot(options))
    if options.all_pairs and not options.pipeline:
        general = choice(general, tiled_all_pairs(options))
    if options.tree_reduce and options.partial and options.reduce_kernels and not options.pipeline:
        general = choice(general, tree_reduction(options))
    if options.rows and not options.pipeline:
        from .rows_strategy import cooperative_rows

        general = choice(general, cooperative_rows(options))
    if options.normal_form and not options.pipeline:
        general = seq(normal_form(), general)
    return seq(general, placement_stage(program, options))


@dataclass(frozen=True)
class Dropped:
    """A lowered variant that no size can make into a kernel, with the reason."""

    variant: Variant
    reason: str


def refused(v: Variant) -> str | None:
    """Why code generation would refuse ``v`` at every size (a computed map read where nothing can hold
    it, a computation stored through a layout that does not invert: ``codegen.allocation.refusals``), or
    why its kernels would compute wrong results at every size (a reduction's accumulator initialised by
    other work-items than those that read it: ``accumulators.accumulator_refusals``), or None."""
    from ..codegen.allocation import refusals
    from ..ir.kernels import split_kernels
    from .accumulators import accumulator_refusals

    wrong = accumulator_refusals(v.program)
    if wrong:
        return wrong[0]
    for stage in split_kernels(v.program):
        reasons = refusals(stage.program)
        if reasons:
            return reasons[0]
    return None


def explore(program: Program, options: "ExploreOptions | Strategy" = ExploreOptions()) -> list[Variant]:
    """Distinct fully lowered variants of a high-level program, each with its parameters and trace.

    ``options``: the knobs of the default strategy, or a strategy itself (Elevate style), composed by the
    caller from the combinators and rules here, e.g. ``seq(once(tile2D_reduce), apply_mapping(group_mapping(2,
    2, every_nest=True)), _accumulators)``; only the lowered variants it produces are kept, and of those only the ones code
    generation accepts (``explore_all`` also returns the others, with the reason)."""
    return explore_all(program, options)[0]


def explore_all(program: Program, options: "ExploreOptions | Strategy" = ExploreOptions()) -> tuple[list[Variant], list[Dropped]]:
    """``explore``'s variants, and the lowered variants it dropped because no size makes them a kernel."""
    from ..ir.results import result_parts

    if result_parts(program.body) is not None:  # several results: made of the variants of each (outputs.py)
        from .outputs import explore_results

        return explore_results(program, options)
    start = Variant(program)
    if callable(options) and not isinstance(options, ExploreOptions):
        strategy, options = options, ExploreOptions()
    else:
        strategy = default_strategy(program, options)
    variants, dropped = [], []
    for v in strategy(start):
        if not v.lowered:
            continue
        reason = refused(v)
        if reason is None:
            variants.append(v)
        else:
            dropped.append(Dropped(v, reason))
    if options.max_variants is not None and len(variants) > options.max_variants:
        # Keep a spread over the whole list rather than its head, so every stage's choices stay represented.
        step = len(variants) / options.max_variants
        variants = [variants[int(i * step)] for i in range(options.max_variants)]
    return variants, dropped


def features(v: Variant) -> frozenset[str]:
    """The rules a variant's derivation used (without positions): what makes two variants different in
    kind rather than in where a rule was applied."""
    out = set()
    for s in v.trace:
        name = s.rule.rstrip("0123456789")
        if name in ("mapSeq", "reduceSeq", "privateAccumulator"):
            continue  # every variant has these
        out.add(name)
    return frozenset(out)


def diverse(variants: list[Variant], n: int) -> list[Variant]:
    """At most ``n`` variants covering as many different rule combinations as possible: combinations are
    picked evenly over the whole list (one variant each), then further variants of them round-robin."""
    groups: dict[frozenset, list[Variant]] = {}
    for v in variants:
        groups.setdefault(features(v), []).append(v)
    glist = list(groups.values())
    if n <= len(glist):
        return [glist[int(i * len(glist) / n)][0] for i in range(n)]
    out: list[Variant] = []
    depth = 0
    while len(out) < n and any(len(g) > depth for g in glist):
        for g in glist:
            if len(g) > depth and len(out) < n:
                out.append(g[depth])
        depth += 1
    return out
