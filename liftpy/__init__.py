"""liftpy: a Lift-style compiler for data-parallel programs.

Write an operator once as a pipeline of functional primitives, type-check it with symbolic sizes, run it
with the numpy reference interpreter, and generate OpenCL from its low-level form.
"""

from .errors import *  # noqa: F401,F403
from .ir.dsl import *  # noqa: F401,F403
from .ir.dsl import id, map, zip  # noqa: F401 - shadowing builtins on purpose: these are Lift's names
from .cli_args import parse_sizes
from .ir.analysis import refuse_unknown_sizes, refuse_unlowered
from .ir.expr import Call, Expr, Lambda, Literal, Program, Var  # noqa: F401
from .ir.interpreter import evaluate  # noqa: F401
from .ir.parser import load_program, parse_expr, parse_program, parse_type  # noqa: F401
from .ir.printer import show, show_program  # noqa: F401
from .ir.typecheck import check_sizes, typecheck  # noqa: F401
from .ir.types import (  # noqa: F401
    Array,
    Bool,
    Float,
    Float2,
    Float4,
    Float8,
    Float16,
    Half,
    Half2,
    Half4,
    Half8,
    Half16,
    Int,
    Tuple,
    Vector,
    sizes,
    size_var,
)
from .ir.userfun import BUILTINS, UserFun, register, userfun, userfun_from_expression, vectorize  # noqa: F401

add = BUILTINS["add"]
sub = BUILTINS["sub"]
mult = BUILTINS["mult"]
multAndSumUp = BUILTINS["multAndSumUp"]
dot = BUILTINS["dot"]
relu = BUILTINS["relu"]
fmax = BUILTINS["max"]
fmin = BUILTINS["min"]
div = BUILTINS["div"]
neg = BUILTINS["neg"]
fabs = BUILTINS["fabs"]
sqrt = BUILTINS["sqrt"]
exp = BUILTINS["exp"]
select = BUILTINS["select"]

from .version import __version__  # noqa: E402,F401

# What ``from liftpy import *`` binds.  Lift's ``map``, ``zip`` and ``id``, and ``compile`` below, are left out:
# a star import would replace Python's own functions of those names.  They stay importable by name
# (``from liftpy import map``) or through the module (``import liftpy as lp``; ``lp.map``).
__all__ = [
    # programs: the decorator, sizes and types
    "program", "make_program", "sizes", "size_var",
    "Array", "Bool", "Float", "Float2", "Float4", "Float8", "Float16", "Half", "Half2", "Half4", "Half8", "Half16", "Int", "Tuple", "Vector", "Type",
    # the primitives (``map``, ``zip`` and ``id`` by name only, see above)
    "reduce", "reduceSeq", "reduceSeqUnroll", "reduceLcl", "fold", "mapIdx", "iota", "indices",
    "mapSeq", "mapSeqUnroll", "mapGlb", "mapWrg", "mapLcl", "map2D", "map3D",
    "get", "at", "gather", "split", "join", "slide", "slideStrict", "slide2D", "slideStrict2D", "slide3D",
    "slideStrict3D", "pad", "pad2D", "pad3D", "transpose", "reorder", "stride", "reverse",
    "asVector", "asScalar", "vectorize", "let", "lit",
    "toGlobal", "toGlobalLast", "toLocal", "toLocalDouble", "toPrivate",
    # user functions, and the built-in ones
    "userfun", "userfun_from_expression", "register", "UserFun", "BUILTINS",
    "add", "sub", "mult", "multAndSumUp", "dot", "relu", "fmax", "fmin", "div", "neg", "fabs", "sqrt", "exp",
    "select", "eq", "ne", "lt", "le", "gt", "ge", "and_", "or_", "not_", "toFloat", "toInt",
    # checking, running and reading programs
    "typecheck", "check_sizes", "evaluate", "parse_program", "parse_expr", "parse_type", "load_program",
    "show", "show_program",
    "Program", "Expr", "Call", "Lambda", "Literal", "Var",
    # errors
    "LiftError", "LiftTypeError", "InputError", "EvaluationError", "ParseError", "CodegenError", "DeviceError",
    "KernelBuildError", "KernelRunError", "RewriteError", "ConstraintError", "TuningError",
]  # fmt: skip


def compile(program: Program, sizes: dict | None = None, **kwargs):  # noqa: A001 - the natural name
    """Generate and build a lowered program for the given sizes (and parameter values) on a device:
    ``liftpy.compile(program, {"N": 64})`` or ``program.compile({"N": 64})``; keywords as
    ``liftpy.host.kernel.compile_program`` (``device``, ``launch``, ``placements``)."""
    if isinstance(sizes, str):
        sizes = parse_sizes(sizes, parameters=True)  # the command line's "N=64,s0=4"
    sizes = dict(sizes or {})
    refuse_unknown_sizes(program, sizes)
    refuse_unlowered(program, "be compiled")  # one line here, not the emitter's error nine calls down
    # the back end (pyopencl, code generation) is loaded by the first compile, not by ``import liftpy``
    from .host.kernel import compile_program

    return compile_program(program, sizes, **kwargs)


Program.compile = compile  # the method form, installed here so that the IR does not import the back end
