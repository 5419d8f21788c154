"""The primitives of liftpy, gathered from their families (``liftpy.ir.prims``).

Each primitive is declared once, in its class: its type rule, numpy semantics, view, text forms and
execution level (``liftpy.ir.prims.base`` says what each declares).  This module is where the rest of
liftpy finds them (``from ..ir import primitives as P``; ``P.MapGlb``), and ``PRIMITIVES``, the table of
text names the printer and the parser read, which a class joins by being defined.
"""

from __future__ import annotations

from .prims.base import (  # noqa: F401
    TABLE,
    VECTOR_WIDTHS,
    IndexFun,
    Primitive,
    Reverse,
    Stride,
    check_dim,
    divisible,
    expect_array,
)
from .prims.folds import Fold, Reduce, ReduceLcl, ReduceLike, ReduceSeq, ScanSeq  # noqa: F401
from .prims.layout import (  # noqa: F401
    AsScalar,
    AsVector,
    At,
    Gather,
    Get,
    Index,
    Join,
    Reorder,
    Slide,
    Split,
    Transpose,
    Zip,
)
from .prims.maps import Map, MapGlb, MapLcl, MapLike, MapSeq, MapWrg, is_parallel_map, map_class  # noqa: F401
from .prims.memory import Let, ToGlobal, ToLocal, ToMem, ToPrivate  # noqa: F401
from .prims.pad import BOUNDARIES, Pad  # noqa: F401
from .indices import Indices, Iota  # noqa: F401, E402 - element indices as values
from .results import Results  # noqa: F401, E402 - a program's several results

PRIMITIVES = TABLE

# The text form's helpers of two and three dimensions, built from the primitives above when a program is read
# (``liftpy.ir.parser``): words of the text form as much as the primitives' names are.
MACROS = frozenset({"map2D", "map3D", "slide2D", "slideStrict2D", "pad2D", "slide3D", "slideStrict3D", "pad3D"})
