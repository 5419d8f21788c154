"""Hoisting of address arithmetic out of the loops it does not depend on.

Every division or modulus left in an index (``(wg_0*8 + l_0) / 56``, a padding check's row) is given a
name, ``int a_3 = ...;``, defined at the top of the innermost loop whose counter it uses, or once before
all loops when it uses none, so that an inner loop computes only additions and multiplications.  The
same expression gets the same name everywhere.  Compilers can often do this themselves; doing it here
makes the generated source say where the arithmetic happens, and is what the tests read."""

from __future__ import annotations

import dataclasses
import itertools

from ... import arith as A
from ...arith import DIVMOD, divmod_nodes, rebuild, without_constant
from ..stmt import Block, If, IndexDef, Kernel, Loop, Store, map_read, store_with


def hoist(kernel: Kernel) -> Kernel:
    names: dict = {}
    counter = itertools.count()

    def name_of(e):
        sym = names.get(e)
        if sym is None:
            sym = A.var(f"a_{next(counter)}")
            names[e] = sym
        return sym

    memo: dict = {}

    def replace_in(e, innermost, lifted):
        if not isinstance(e, A.Expr) or not e.args:  # a number or a name (an unrolled copy's private
            return e  # index): nothing to name
        # Unrolled bodies repeat the same indices many times: each is rewritten once per loop variable.
        key = (e, innermost)
        hit = memo.get(key)
        if hit is not None:
            lifted.update(hit[1])
            return hit[0]
        mine: dict = {}
        rest, c = without_constant(e)
        if c:  # the rest once for all the copies of an unrolled index, which differ in the constant only
            named = replace_in(rest, innermost, mine)
            out = e if named is rest else A.plus(named, c)
        else:
            out = _replace_in(e, innermost, mine)
        memo[key] = (out, mine)
        lifted.update(mine)
        return out

    def _replace_in(e, innermost, lifted):
        return _named(e, innermost, lifted, name_of)

    def visit(block: Block, loop_vars: tuple):
        innermost = loop_vars[-1] if loop_vars else None
        items = []
        lifted: dict = {}
        for x in block.items:
            if isinstance(x, Loop):
                body, inner = visit(x.body, loop_vars + (x.var,))
                here = [(sym, e) for e, sym in inner.items() if x.var in e.free_vars]
                for e, sym in inner.items():
                    if x.var not in e.free_vars:
                        lifted[e] = sym
                defs = tuple(IndexDef(sym, e) for sym, e in sorted(here, key=lambda p: p[0].name))
                items.append(dataclasses.replace(x, body=Block(defs + body.items)))
            elif isinstance(x, Block):
                b, inner = visit(x, loop_vars)
                lifted.update(inner)
                items.append(b)
            elif isinstance(x, If):
                b, inner = visit(x.body, loop_vars)
                lifted.update(inner)
                cond = replace_in(x.cond, innermost, lifted) if innermost is not None else x.cond
                items.append(If(cond, b))
            elif isinstance(x, Store) and innermost is not None:
                value = map_read(x.value, lambda e: replace_in(e, innermost, lifted))
                index = replace_in(x.index, innermost, lifted)
                items.append(store_with(x, index, value))
            else:
                items.append(x)
        return Block(tuple(items)), lifted

    body, top = visit(kernel.body, ())
    del visit, replace_in  # closures that call themselves are reference cycles: they would keep the memo alive till collected
    defs = tuple(IndexDef(sym, e) for e, sym in sorted(top.items(), key=lambda p: p[1].name))
    return kernel.replace(body=Block(defs + body.items))


# A module-level function, not a closure that calls itself: such a closure is a reference cycle, garbage
# the cyclic collector has to find, one per index rewritten.
def _named(x, innermost, lifted: dict, name_of):
    """``x`` with every division or modulus that has symbols but not ``innermost`` replaced by its name
    (``name_of``), recorded in ``lifted``."""
    if isinstance(x, DIVMOD) and x.free_vars and innermost not in x.free_vars:
        sym = name_of(x)
        lifted[x] = sym
        return sym
    if not x.args or not divmod_nodes(x):  # nothing to name below
        return x
    args = tuple(_named(a, innermost, lifted, name_of) for a in x.args)
    if all(a is b for a, b in zip(args, x.args)):
        return x
    return rebuild(x, args)

