"""liftpy: a Lift-style compiler for data-parallel programs.

Write an operator once as a pipeline of functional primitives, type-check it with symbolic sizes, run it
with the numpy reference interpreter, and generate OpenCL from its low-level form.
"""

from .errors import *  # noqa: F401,F403
from .ir.dsl import *  # noqa: F401,F403
from .ir.dsl import id, map, zip  # noqa: F401 - shadowing builtins on purpose: these are Lift's names
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

__version__ = "0.1.0"
