"""Rules that build the multi-kernel direct convolution of the Lift paper (section 4.2) from Listing 3.

- ``padOpt``: pad the input by ρ more at the right and bottom, so that tiles can cover it, and crop the
  ρ/stride extra windows from the result;
- ``materializeInput``: compute a padded input once, into global memory, in a kernel of its own (the
  padding stage);
- ``splitPartialKernels``: after ``partialReduce``, write every window's partial sums to global memory
  (the partial-convolution stage) and sum them, with the bias, in the next kernel (the summation stage);
- ``cropKernel``: the crop of the optimisational padding, which cannot be written through, becomes the
  last kernel (the cropping stage).

A kernel boundary is ``let(fun(v) => rest, toGlobal(e))`` at the top of the program
(``liftpy.ir.kernels``).  Each rule is checked like every other: the interpreter's results before
and after agree (tests/test_rules_tiling.py).
"""

from __future__ import annotations

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Expr, Lambda, Var, fresh_name, rename_bound, substitute, subterms
from ..ir.kernels import is_boundary
from ..ir.results import result_parts
from ..ir.types import ArrayType, ScalarType
from .patterns import is_call, match_map2D, match_slide2D, sum_form
from .positions import Site, get_at, positions, replace_at
from .rule import rule


def match_pad2D(e: Expr):
    """``transpose(map(col -> pad(t, b, v, col), transpose(map(row -> pad(l, r, v, row), x))))``:
    (l, r, t, b, v, x)."""
    if not is_call(e, P.Transpose):
        return None
    m1 = e.args[0]
    if not (isinstance(m1, Call) and type(m1.fn) is P.Map and is_call(m1.fn.f.body, P.Pad)):
        return None
    if m1.fn.f.body.args != m1.fn.f.params:
        return None
    t1 = m1.args[0]
    if not is_call(t1, P.Transpose):
        return None
    m2 = t1.args[0]
    if not (isinstance(m2, Call) and type(m2.fn) is P.Map and is_call(m2.fn.f.body, P.Pad)):
        return None
    if m2.fn.f.body.args != m2.fn.f.params:
        return None
    outer, inner = m1.fn.f.body.fn, m2.fn.f.body.fn
    if outer.value != inner.value:
        return None
    return inner.left, inner.right, outer.left, outer.right, inner.value, m2.args[0]


def global_copy(x: Expr, t) -> Expr:
    """A lowered copy of ``x``: its first (up to three) dimensions over global work-items, the rest
    sequential."""
    dims = []
    tt = t
    while isinstance(tt, ArrayType):
        dims.append(tt.size)
        tt = tt.elem
    k = min(len(dims), 3)

    def level(e, depth):
        if depth == len(dims):
            return dsl.id(e)
        if depth < k:
            return dsl.mapGlb(k - 1 - depth, lambda y: level(y, depth + 1), e)
        return dsl.mapSeq(lambda y: level(y, depth + 1), e)

    return level(x, 0)


def _closed(e: Expr, site) -> bool:
    """No variable bound inside the program: only program inputs."""
    return not (e.free_vars & set(site.bound)) if site.path else True


@rule("padOpt", "map2D(f, slide2D(n, s, pad2D(l, r, t, b, x))) => crop2D(p/s, map2D(f, slide2D(n, s, pad2D(l, r + p, t, b + p, x))))")
def pad_opt(e, site, ctx):
    m = match_map2D(e)
    if m is None:
        return None
    sl = match_slide2D(m.xs)
    if sl is None or sl.strict or sl.step1 != sl.step2:
        return None
    pd = match_pad2D(sl.xs)
    if pd is None:
        return None
    l, r, t, b, v, x = pd
    if v in ("mirror", "wrap"):
        # Reflecting or repeating reads each element at most once per side: more padding could break that.
        return None
    rho = ctx.fresh("p", lo=0)
    padded = dsl.pad2D(l, r + rho, t, b + rho, v, x)
    body = dsl.map2D(m.f, dsl.slide2D((sl.size1, sl.size2), (sl.step1, sl.step2), padded))
    crop = rho / sl.step1
    return dsl.pad2D(0, -crop, 0, -crop, 0.0, body)


@rule("materializeInput", "P[pad2D(x)] => let(xp -> P[xp], toGlobal(copy(pad2D(x))))", "memory")
def materialize_input(e, site, ctx):
    """The padded input is written once by a kernel of its own, and read from global memory."""
    if site.path:
        return None
    for path, sub in positions(e):
        if any(s[0] in ("fn", "callee") for s in path):
            continue  # only values computed outside every map: a kernel computes each once
        if match_pad2D(sub) is None or not is_view(sub):
            continue
        v = Var(fresh_name("padded"))
        t = site.type_of(sub)
        return dsl.let(Lambda((v,), replace_at(e, path, v)), dsl.toGlobal(global_copy(sub, t)))
    return None


def _peel_wrap(e: Expr):
    """Layout primitives above the computation at the top of a program: (wrap path, computation)."""
    path = ()
    while isinstance(e, Call) and isinstance(e.fn, P.Primitive) and e.fn.kind == "layout" and len(e.args) == 1 and not is_view(e):
        path += (("arg", 0),)
        e = e.args[0]
    while isinstance(e, Call) and type(e.fn) is P.Map and is_view(e.fn.f.body) and not is_view(e):
        path += (("arg", 0),)
        e = e.args[0]
        while isinstance(e, Call) and isinstance(e.fn, P.Primitive) and e.fn.kind == "layout" and len(e.args) == 1 and not is_view(e):
            path += (("arg", 0),)
            e = e.args[0]
    return path, e


def _has_pad(e: Expr, path) -> bool:
    for k in range(len(path)):
        node = get_at(e, path[:k])
        if is_call(node, P.Pad) or (isinstance(node, Call) and type(node.fn) is P.Map and is_call(node.fn.f.body, P.Pad)):
            return True
    return False


def _crop_stage(wrapped_at_root: Expr, wrap_path, computed: Expr, site) -> Expr:
    """let(full -> copy(WRAP(full)), toGlobal(computed))."""
    full = Var(fresh_name("full"))
    wrapped = replace_at(wrapped_at_root, wrap_path, full)
    env_t = site.type_of(wrapped_at_root)
    return dsl.let(Lambda((full,), global_copy(wrapped, env_t)), dsl.toGlobal(computed))


@rule("cropKernel", "crop(Y) => let(full -> copy(crop(full)), toGlobal(Y))", "memory")
def crop_kernel(e, site, ctx):
    """A crop (negative padding) of a computed result is done by a last kernel that copies the kept part."""
    if site.path:
        return None
    body, prefix = _below_boundaries(e)
    wrap_path, computed = _peel_wrap(body)
    if not wrap_path or not _has_pad(body, wrap_path) or is_view(computed):
        return None
    sub_site = _SubSite(site, prefix)
    return replace_at(e, prefix, _crop_stage(body, wrap_path, computed, sub_site))


def _below_boundaries(e):
    """The expression below a program's kernel boundaries (the let-bound buffers of earlier kernels),
    and the path to it."""
    body, prefix = e, ()
    while is_boundary(body):
        prefix += (("fn", "f"),)
        body = body.fn.f.body
    return body, prefix


class _SubSite:
    """Typing below the kernel boundaries of a program (their let-bound buffers in scope)."""

    def __init__(self, site, prefix):
        self.inner = Site(site.program, prefix)

    def type_of(self, e):
        return self.inner.type_of(e)


@rule(
    "splitPartialKernels",
    "N[reduce(add, init(k), join(map(reduce(f, 0), split(w, xs))))] => "
    "let(parts -> N'[reduce(add, init(k), parts)], toGlobal(N[join(map(reduce(f, 0), split(w, xs)))]))",
    "memory",
)
def split_partial_kernels(e, site, ctx):
    """The partial sums of every output are written to global memory by one kernel; the next kernel adds
    them up with the reduction's initial value (the bias)."""
    return _split_partials(e, site, whole=None)


@rule(
    "reduceKernels",
    "reduce(add, init, join(map(reduce(f, 0), split(w, xs)))) => "
    "let(parts -> reduce(add, init, parts), toGlobal(join(map(reduce(f, 0), split(w, xs)))))",
    "memory",
)
def reduce_kernels(e, site, ctx):
    """A reduction of a whole array (a dot product, a sum, a norm) in parallel, as Lift lowers it: after
    ``partialReduce``, the chunks' partial sums are computed by a kernel of their own (one work-item or
    one work-group per chunk, as the mapping decides) into a buffer of ``len/w`` values, which a second
    kernel adds up with the initial value.  Without it such a reduction runs on one work-item."""
    return _split_partials(e, site, whole=True)


@rule(
    "reduceGroup",
    "reduce(acc (+) h(x), init, xs), a kernel's whole result => "
    "join(mapWrg(0, row -> reduce((+), init, join(map(c -> reduce(acc (+) h(x), id, c), transpose(split(n, row))))), "
    "split(len, xs)))",
    "lowering",
)
def reduce_group(e, site, ctx):
    """A kernel whose whole result is one reduction (the second kernel of ``reduceKernels``, adding the
    groups' partial results) on one work-group instead of one work-item: each of the group's ``n`` items
    reduces every ``n``-th element (neighbours read neighbours), and ``reduceLcl`` then combines the items'
    results as a tree, where one work-item read them one after another.  On the H200 the second kernel of
    a sum of 2^26 halves took 5.3-6.6 us with 256 partial results on 256 items, 6.6-8.7 us with 128 on one:
    most of it is the launch itself, which ``fuseLastGroup`` saves."""
    form = sum_form(e.fn.f) if isinstance(e, Call) and type(e.fn) is P.Reduce else None
    if form is None or site.path != _below_boundaries(site.program.body)[1]:
        return None
    init, xs = e.args
    t, xt = site.type_of(init), site.type_of(xs)
    if not isinstance(t, ScalarType) or not isinstance(xt, ArrayType) or init.free_vars:
        return None
    n = ctx.fresh("w")
    f = e.fn.f

    def row_sum(row):
        items = dsl.map(lambda c: Call(P.Reduce(rename_bound(f)), (form.identity(t), c)), dsl.transpose(dsl.split(n, row)))
        return Call(P.Reduce(dsl.as_lambda(lambda acc, s: form.op(acc, s), 2, "acc")), (init, dsl.join(items)))

    return dsl.join(dsl.mapWrg(0, row_sum, dsl.split(xt.size, xs)))


@rule(
    "fuseLastGroup",
    "let(v -> rest, toGlobal(e)) => let(v -> rest, toGlobalLast(e)), rest on one work-group, reading v only",
    "lowering",
)
def fuse_last_group(e, site, ctx):
    """The last kernel of a pipeline, when it runs on one work-group (the sum of a parallel reduction's
    partial results, on one item or as one group's tree) and reads only the previous kernel's output, runs
    in that kernel's last work-group to finish instead of a launch of its own (``codegen.last_group``).
    Every kernel an NVIDIA GPU runs takes at least 5 us however little it does: the second kernel of a sum
    of 2^26 halves took 5.3 to 6.6 us of its 44, with one item or a group of 256 adding the partial sums.
    The previous kernel's work-groups must be in one dimension (the last one counts them)."""
    if site.path or not is_boundary(e):
        return None
    body, prefix = _below_boundaries(e)
    at = prefix[:-1]  # (the last boundary: the let whose function's body is the last kernel)
    node = get_at(e, at)
    (v,) = node.fn.f.params
    computed = node.args[0].args[0]
    if node.args[0].fn.last or body.free_vars - {v.name} or result_parts(body) is not None:
        return None  # (several results: kernels of their own, each reading the buffer between)
    maps = [n.fn for n in subterms(computed) if isinstance(n, Call) and P.is_parallel_map(n.fn)]
    if not maps or any(m.dim != 0 for m in maps):
        return None
    sub = _SubSite(site, prefix)
    for n in subterms(body):
        if not (isinstance(n, Call) and isinstance(n.fn, P.MapLike)):
            continue
        if isinstance(n.fn, P.MapGlb) or (isinstance(n.fn, (P.MapWrg, P.MapLcl)) and n.fn.dim != 0):
            return None
        if isinstance(n.fn, P.MapWrg):
            if n.args[0].free_vars - {v.name} or sub.type_of(n.args[0]).size != 1:
                return None  # (several groups, or a map over groups whose length its typing here cannot tell)
    last = Call(node.fn, (dsl.toGlobalLast(computed),))
    return replace_at(e, at, last)


@rule("letGlobal", "let(v -> rest, e) => let(v -> rest, toGlobal(e))", "memory")
def let_global(e, site, ctx):
    """An intermediate array the program binds with ``let`` (``y = A x``, then ``A^T y``) becomes a kernel of
    its own that writes it to global memory, as Lift's ``let`` + ``toGlobal`` does: every work-item of the
    rest may read any element of it, which no work-item could if it were computed in the same kernel.
    Applies to the first such ``let`` below the program's kernel boundaries."""
    if site.path:
        return None
    body, prefix = _below_boundaries(e)
    if not is_call(body, P.Let):
        return None
    value = body.args[0]
    if is_view(value) or not isinstance(_SubSite(site, prefix).type_of(value), ArrayType):
        return None  # a view of the inputs needs no kernel; a scalar stays where it is computed
    return replace_at(e, prefix, Call(body.fn, (dsl.toGlobal(value),)))


def _split_partials(e, site, whole):
    """``whole``: True for a reduction at the top of the program only, None for a nest of maps over
    reductions only (the convolution's partial sums)."""
    if site.path:
        return None
    body, prefix = _below_boundaries(e)
    wrap_path, nest = _peel_wrap(body)
    levels = []  # (param, input expression) of each map of the nest
    cur = nest
    while isinstance(cur, Call) and type(cur.fn) is P.Map and not is_view(cur.fn.f.body):
        levels.append((cur.fn.f.params[0], cur.args[0]))
        cur = cur.fn.f.body
    form = sum_form(cur.fn.f) if isinstance(cur, Call) and type(cur.fn) is P.Reduce else None
    if bool(levels) == bool(whole) or form is None:
        return None
    init, partials = cur.args
    if not (is_call(partials, P.Join) and isinstance(partials.args[0], Call) and type(partials.args[0].fn) is P.Map):
        return None
    chunk_map = partials.args[0]
    if not (is_call(chunk_map.args[0], P.Split) and isinstance(chunk_map.fn.f.body, Call) and type(chunk_map.fn.f.body.fn) is P.Reduce):
        return None
    sub_site = _SubSite(site, prefix)
    if not isinstance(sub_site.type_of(nest), ArrayType):
        return None
    # The initial value may depend on one map's parameter, if that map runs over inputs of the program.
    dep = [i for i, (p, _) in enumerate(levels) if p.name in init.free_vars]
    program_inputs = {p.name for p in site.program.params}
    if len(dep) > 1 or (dep and not levels[dep[0]][1].free_vars <= program_inputs):
        return None
    if init.free_vars - {p.name for p, _ in levels} - program_inputs:
        return None
    # Kernel 1: the nest with the partial sums in place of the reduction.
    nest_path = ()
    for _ in levels:
        nest_path += (("fn", "f"),)
    partial_nest = replace_at(nest, nest_path, partials)
    # Kernel 2: the same nest shape over the partial sums.
    parts = Var(fresh_name("parts"))

    def summed(x, depth, env):
        if depth == len(levels):
            return Call(P.Reduce(dsl.as_lambda(lambda a, s: form.op(a, s), 2, "acc")), (substitute(init, env), x))
        p, inp = levels[depth]
        if depth in dep:
            return dsl.map(lambda q: summed(dsl.get(q, 0), depth + 1, {**env, p.name: dsl.get(q, 1)}), dsl.zip(x, inp))
        return dsl.map(lambda y: summed(y, depth + 1, env), x)

    total = summed(parts, 0, {})
    if wrap_path and _has_pad(body, wrap_path):
        rest = _crop_stage(body, wrap_path, total, sub_site)
    else:
        rest = replace_at(body, wrap_path, total)
    staged = dsl.let(Lambda((parts,), rest), dsl.toGlobal(partial_nest))
    return replace_at(e, prefix, staged)


PIPELINE_RULES = [pad_opt, materialize_input, split_partial_kernels, crop_kernel]
