"""Structural questions about expressions that several passes ask."""

from __future__ import annotations

import sympy

from ..errors import CodegenError, InputError
from . import primitives as P
from .expr import Call, Expr, Lambda, Literal, Program, Var, subterms
from .types import ArrayType, TupleType, VectorType, free_size_symbols, size_str


def is_view(e: Expr) -> bool:
    """True if ``e`` only rearranges existing values: variables, literals, layout primitives, and maps or
    lets whose functions are themselves views.  Such an expression costs no memory and no code."""
    if isinstance(e, (Var, Literal)):
        return True
    if isinstance(e, Call):
        fn = e.fn
        if isinstance(fn, P.Primitive) and fn.kind == "layout":
            return all(is_view(a) for a in e.args)
        if isinstance(fn, (P.Map, P.MapSeq)):
            return is_view(fn.f.body) and is_view(e.args[0])
        if isinstance(fn, Lambda):
            return is_view(fn.body) and all(is_view(a) for a in e.args)
        if isinstance(fn, P.Let):
            return is_view(fn.f.body) and is_view(e.args[0])
    return False


def unlowered(program: Program) -> list[Expr]:
    """The high-level maps (that compute something) and reductions still in a program."""
    out = []
    for node in subterms(program.body):
        if isinstance(node, Call):
            if type(node.fn) is P.Map and not is_view(node.fn.f.body):
                out.append(node)
            elif type(node.fn) is P.Reduce:
                out.append(node)
    return out


def is_lowered(program: Program) -> bool:
    return not unlowered(program)


def refuse_unlowered(program: Program, doing: str, source: str | None = None) -> None:
    """Raise ``CodegenError`` in one line when ``program`` is high level: ``doing`` (compile it, count its tuning
    space) needs one of its lowered variants, which ``liftpy variants`` lists and ``liftpy explore`` searches;
    ``source`` is how the command line named the program.  Without this, code generation failed deep in the
    emitter, and ``liftpy space`` counted 0 parameters."""
    left = unlowered(program)
    if left:
        kinds = sorted({"map" if type(n.fn) is P.Map else "reduce" for n in left})
        where = source or "FILE"
        how = "" if source else " (in Python: liftpy.rewrite.explore.explore_all(program))"
        raise CodegenError(f"{program.name} is a high-level program (it has {' and '.join('a ' + k for k in kinds)} "
                           f"not lowered to mapGlb, mapWrg/mapLcl, mapSeq or reduceSeq), so it cannot {doing}: "
                           f"`liftpy variants {where} --full` prints its lowered variants{how}, and "
                           f"`liftpy explore {where} -s SIZES` searches them")


def refuse_unknown_sizes(program: Program, names) -> None:
    """Raise ``InputError`` naming any of ``names`` (sizes or parameters given a value) that ``program`` does not
    mention: a misspelt size (``n`` for ``N``) would otherwise be ignored, and the one meant reported missing or
    taken for a tuning parameter."""
    known = size_symbols(program)
    unknown = sorted(str(k) for k in names if str(k) not in known)
    if unknown:
        raise InputError(f"{program.name} has no size {', '.join(unknown)}; its sizes are {', '.join(sorted(known)) or 'none'}")


def input_size_symbols(program: Program) -> set:
    """The size symbols of ``program``'s input types: the sizes a caller gives values (the others it
    mentions are tuning parameters)."""
    out = set()
    for t in program.param_types:
        out |= free_size_symbols(t)
    return out


def refuse_missing_sizes(program: Program, names) -> None:
    """Raise ``InputError`` naming the sizes of ``program``'s inputs that ``names`` lacks: counted without
    them, a size becomes a tuning parameter of candidates 1..3 and the space answers another question."""
    given = {str(k) for k in names}
    missing = sorted({str(s) for s in input_size_symbols(program)} - given)
    if missing:
        raise InputError(f"no value for the size{'s' if len(missing) > 1 else ''} {', '.join(missing)} of {program.name}'s "
                         f"inputs: {program.name} needs a value for {'it' if len(missing) == 1 else 'each'} (give -s "
                         + ",".join(f"{m}=..." for m in missing) + ")")


def size_symbols(program: Program) -> set[str]:
    """Names of every size variable and tuning parameter a program mentions (in its input types, the
    static arguments of its primitives, and the types and values of its literals)."""
    out: set[str] = set()

    def from_type(t):
        if isinstance(t, ArrayType):
            out.update(map(size_str, sympy.sympify(t.size).free_symbols))
            from_type(t.elem)
        elif isinstance(t, TupleType):
            for e in t.elems:
                from_type(e)
        elif isinstance(t, VectorType):
            out.update(map(size_str, sympy.sympify(t.width).free_symbols))

    for t in program.param_types:
        from_type(t)
    for node in subterms(program.body):
        if isinstance(node, Call) and isinstance(node.fn, P.Primitive):
            for _, v in node.fn.static_args():
                if isinstance(v, sympy.Basic):
                    out.update(map(size_str, v.free_symbols))
                elif isinstance(v, P.Stride):
                    out.update(map(size_str, sympy.sympify(v.s).free_symbols))
        elif isinstance(node, Literal):
            from_type(node.type)
            out.update(map(size_str, _value_sizes(node.value)))  # a size as a value (lit(N))
    del from_type  # (a recursive closure is a reference cycle)
    return out


def _value_sizes(value) -> set:
    if isinstance(value, tuple):
        return set().union(*(_value_sizes(v) for v in value)) if value else set()
    return value.free_symbols if isinstance(value, sympy.Basic) else set()
