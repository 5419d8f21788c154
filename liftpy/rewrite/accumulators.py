"""Where a reduction's accumulator lives among work-items: its initial value may be spread over the
items of a work-group (``mapLcl``) only as the reduction's step spreads the accumulator, each item then
updating and reading back the part it initialised (the register-blocked matrix product).  An initial value
spread otherwise leaves each item's private accumulator set only in part (wrong results found on PoCL in a
batched matrix product), or shares one accumulator that every item updates whole.  The lowering rules ask
``init_spread_ok`` as they lower; ``accumulator_refusals`` checks a finished variant."""

from __future__ import annotations

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Lambda, subterms
from .positions import _child


def init_levels(init) -> tuple:
    """The maps that build a reduction's initial value, outermost first: ``init`` (under its memory
    marker) a map, its function's body a map, and so on down the accumulator's dimensions."""
    out, e = [], init
    while isinstance(e, Call):
        if isinstance(e.fn, P.ToMem):
            e = e.args[0]
        elif isinstance(e.fn, P.MapLike) and not is_view(e.fn.f.body):
            out.append(e.fn)
            e = e.fn.f.body
        else:
            break
    return tuple(out)


def step_levels(lam: Lambda) -> tuple:
    """The maps through which a reduction's step ``(acc, x) -> ...`` computes the new accumulator element
    by element from the old one, outermost first: the map over ``acc`` (alone or zipped with other
    arrays), then the map over that map's element of ``acc`` in its function, and so on.  Stops where
    the accumulator's element is read any other way (a user function of it, a nested reduction)."""
    out = []
    e, carrier = lam.body, lam.params[0]
    while isinstance(e, Call):
        if isinstance(e.fn, (Lambda, P.Let)):  # a binding (staged tiles): the value is its body's
            e = (e.fn if isinstance(e.fn, Lambda) else e.fn.f).body
            continue
        if not (isinstance(e.fn, P.MapLike) and not is_view(e.fn.f.body)):
            break
        xs = e.args[0]
        (param,) = e.fn.f.params
        if xs == carrier:
            nxt = param
        elif isinstance(xs, Call) and isinstance(xs.fn, P.Zip) and carrier in xs.args:
            nxt = dsl.get(param, xs.args.index(carrier))
        else:
            break
        out.append(e.fn)
        e, carrier = e.fn.f.body, nxt
    return tuple(out)


def _lcl_dim(fn):
    return fn.dim if isinstance(fn, P.MapLcl) else None


def spread_mismatch(init, lam: Lambda) -> str | None:
    """Why a reduction's accumulator, spread over work-items by ``mapLcl`` in its initial value, would be
    read by work-items that did not initialise it; None when it is not, or where each item's step reads
    back exactly the part it initialised.

    A ``mapLcl(d)`` at depth ``k`` of the initial value gives each work-item its elements of that
    dimension only (a private accumulator holds nothing else; a shared one is written by the others in
    no defined order).  That is right where the step spreads the accumulator alike: at every depth down
    to ``k``, a ``mapLcl`` of the same dimension in the step exactly where the initial value has one (the
    register-blocked matrix product: the items initialise, update and write out the same block).  A
    step that runs over the whole accumulator in every work-item (a ``mapSeq`` in an item's own
    reduction) reads elements other items initialised."""
    inits = init_levels(init)
    deepest = max((k for k, fn in enumerate(inits) if isinstance(fn, P.MapLcl)), default=None)
    if deepest is None:
        return None
    steps = step_levels(lam)
    for k in range(deepest + 1):
        want = _lcl_dim(inits[k])
        have = _lcl_dim(steps[k]) if k < len(steps) else None
        if want != have:
            where = "no mapLcl" if have is None else f"mapLcl({have})"
            what = "no mapLcl" if want is None else f"mapLcl({want})"
            return (f"a reduction's initial value has {what} at depth {k} of its accumulator but its step {where}: "
                    f"work-items would read accumulator elements other work-items initialised")
    return None


def accumulator_refusals(program) -> tuple[str, ...]:
    """``spread_mismatch`` for every reduction of a lowered program (derivation drops such variants)."""
    out = []
    for n in subterms(program.body):
        if isinstance(n, Call) and isinstance(n.fn, P.ReduceLike):
            why = spread_mismatch(n.args[0], n.fn.f)
            if why is not None:
                out.append(why)
    return tuple(out)


def _init_depth(site):
    """Where the position is in the initial value of a reduction: ``(reduction, depth)`` on the chain of
    maps that builds the accumulator (``init_levels``; depth 0 the outermost), ``(reduction, None)``
    elsewhere in it; None outside every reduction's initial value."""
    e, found = site.program.body, None
    for i, step in enumerate(site.path):
        if isinstance(e, Call) and isinstance(e.fn, P.ReduceLike) and step == ("arg", 0):
            found = (e, i + 1)
        e = _child(e, step)
    if found is None:
        return None
    red, start = found
    e, depth = red.args[0], 0
    for step in site.path[start:]:
        if isinstance(e.fn, P.ToMem) and step == ("arg", 0):
            pass
        elif isinstance(e.fn, P.MapLike) and not is_view(e.fn.f.body) and step == ("fn", "f"):
            depth += 1
        else:
            return red, None
        e = _child(e, step)
    return red, depth


def init_spread_ok(site, dim: int) -> bool:
    """A map in a reduction's initial value may become ``mapLcl(dim)`` only where the reduction's step
    spreads the accumulator over the same work-items (``spread_mismatch``): its map over the
    accumulator at the same depth a ``mapLcl(dim)`` already (the step comes first in the order positions
    are visited), and the maps around, in both, alike so far as they are lowered."""
    found = _init_depth(site)
    if found is None:
        return True
    red, depth = found
    if depth is None:
        return False  # the accumulator dealt out through something else: its parts cannot be matched
    steps = step_levels(red.fn.f)
    if depth >= len(steps) or _lcl_dim(steps[depth]) != dim:
        return False
    inits = init_levels(red.args[0])
    for k in range(depth):
        if type(inits[k]) is P.Map:
            continue  # not lowered yet: the end of the derivation checks it (accumulator_refusals)
        if _lcl_dim(inits[k]) != _lcl_dim(steps[k]):
            return False
    return True
