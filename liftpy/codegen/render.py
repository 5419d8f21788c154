"""Printing the statement IR as OpenCL C: the last pass.

Parallel loops take their form here, once the NDRange is known: a loop whose extent equals the number of
work-items (or groups) in its dimension becomes a plain index (``int l_0 = get_local_id(0);``), as the
Lift paper describes, and otherwise a loop strided by the work size.  Vector accesses proven aligned
dereference a vector pointer; others use ``vloadN``/``vstoreN``.
"""

from __future__ import annotations


from ..errors import CodegenError
from ..ir.levels import Level
from ..ir.types import ScalarType
from ..views import view as V
from .. import arith as A
from ..arith import to_c
from . import half
from .stmt import Barrier, Block, Comment, Declare, If, IndexDef, Kernel, LastGroup, Loop, Store, stores_to


def literal_c(value, scalar: ScalarType, width: int = 1) -> str:
    if scalar.name in ("float", "half"):
        v = float(value)
        if v != v:
            text = "NAN"
        elif v in (float("inf"), float("-inf")):
            text = "INFINITY" if v > 0 else "-INFINITY"
        else:
            text = repr(v)
            if "e" not in text and "." not in text:
                text += ".0"
            text += "f"
        if scalar.name == "half":  # (a float constant would make the operation around it float)
            text = f"(half){text}"
    elif scalar.name == "bool":
        text = "true" if value else "false"
    else:
        text = str(int(value))
    return text if width == 1 else f"(({scalar.name}{width})({text}))"


def _qualifier(buffer) -> str:
    if buffer.space == "global":
        return "global const " if buffer.role == "input" else "global "
    if buffer.space == "local":
        return "local "
    return ""


def _address(buffer, index) -> str:
    idx = to_c(index)
    return buffer.name if idx == "0" else f"{buffer.name} + {idx}"


def value_c(r: V.Read) -> str:
    """The C expression of a value."""
    if isinstance(r, V.MemRead):
        buf = r.buffer
        if buf.stored is not None:
            return half.read_c(buf, to_c(r.index), r.width, r.aligned)
        if buf.is_scalar_variable:
            if r.index != 0:
                raise CodegenError(f"internal: scalar {buf.name} read at index {r.index}")
            return buf.name
        if r.width == 1:
            return f"{buf.name}[{to_c(r.index)}]"
        if r.aligned:
            return f"*(({_qualifier(buf)}{buf.scalar.name}{r.width}*)({_address(buf, r.index)}))"
        if buf.space == "private" and buf.count == r.width:
            return f"vload{r.width}(0, {buf.name})"
        return f"vload{r.width}(0, {_address(buf, r.index)})"
    if isinstance(r, V.ConstRead):
        return literal_c(r.value, r.scalar, r.width)
    if isinstance(r, V.IndexRead):  # an element of iota: the index, an int
        return to_c(r.index) if A.as_expr(r.index).args == () else f"({to_c(r.index)})"
    if isinstance(r, V.CondRead):
        return f"(({to_c(r.cond)}) ? {value_c(r.then)} : {value_c(r.other)})"
    if isinstance(r, V.FunCall):
        return f"{r.name}({', '.join(value_c(a) for a in r.args)})"
    if isinstance(r, V.VecRead):
        return f"(({r.scalar.name}{len(r.lanes)})({', '.join(value_c(l) for l in r.lanes)}))"
    if isinstance(r, V.LaneRead):
        lane = A.as_expr(r.lane)
        if not lane.is_const:
            raise CodegenError(f"a lane of the computed vector {value_c(r.vector)} is chosen at run time ({lane}); "
                               "store the vector first (toPrivate) to pick its lanes by index")
        return f"({value_c(r.vector)}).s{int(lane):x}"
    if isinstance(r, V.FieldRead):
        inner = value_c(r.value)
        return f"{inner}._{r.index}" if isinstance(r.value, (V.MemRead, V.FieldRead, V.FunCall)) else f"({inner})._{r.index}"
    if isinstance(r, V.TupleRead):
        return f"make_{r.type.c_name}({', '.join(value_c(p) for p in r.parts)})"
    if isinstance(r, V.ImageRead):
        texel = f"read_imagef({r.image.name}, sampler, (int2)({to_c(r.x)}, {to_c(r.y)}))"
        if r.lane is None:
            return texel
        lane = A.as_expr(r.lane)
        if lane.is_const:
            return f"{texel}.s{int(lane)}"
        return f"lane4({texel}, {to_c(lane)})"
    raise CodegenError(f"internal: cannot print {r!r}")


def _store_c(s: Store) -> str:
    buf = s.buffer
    value = value_c(s.value)
    if buf.stored is not None:
        return half.store_c(buf, to_c(s.index), value, s.width, s.aligned)
    if buf.is_scalar_variable:
        return f"{buf.name} = {value};"
    if s.width == 1:
        return f"{buf.name}[{to_c(s.index)}] = {value};"
    if s.aligned:
        return f"*(({_qualifier(buf)}{buf.scalar.name}{s.width}*)({_address(buf, s.index)})) = {value};"
    return f"vstore{s.width}({value}, 0, {_address(buf, s.index)});"


def declaration(buffer) -> str:
    if buffer.space == "local":
        return f"local {buffer.scalar.name} {buffer.name}[{buffer.count}] __attribute__((aligned(16)));"
    if buffer.count == 1:
        return f"{buffer.scalar.name} {buffer.name};"
    return f"{buffer.scalar.name} {buffer.name}[{buffer.count}];"


def render_block(block: Block, sizes: dict, indent: int = 1) -> list[str]:
    """Lines of C for a block; ``sizes[(level, dim)]`` is the number of work-items/groups there."""
    pad = "  " * indent
    out: list[str] = []
    for item in block.items:
        if isinstance(item, Store):
            out.append(pad + _store_c(item))
        elif isinstance(item, Declare):
            out.append(pad + declaration(item.buffer))
        elif isinstance(item, IndexDef):
            out.append(f"{pad}int {item.var.name} = {to_c(item.value)};")
        elif isinstance(item, Comment):
            out.append(f"{pad}// {item.text}")
        elif isinstance(item, Barrier):
            out.append(f"{pad}barrier({item.fence});")
        elif isinstance(item, Block):
            out.append(pad + "{")
            out.extend(render_block(item, sizes, indent + 1))
            out.append(pad + "}")
        elif isinstance(item, LastGroup):
            out.extend(_last_group(item, sizes, indent))
        elif isinstance(item, If):
            out.append(f"{pad}if ({to_c(item.cond)}) {{")
            out.extend(render_block(item.body, sizes, indent + 1))
            out.append(pad + "}")
        elif isinstance(item, Loop):
            note = f"  // {item.note}" if item.note else ""
            var = item.var.name
            strided = False
            if item.level is Level.SEQ:
                if item.compiler_unroll:
                    out.append(f"{pad}#pragma unroll")
                out.append(f"{pad}for (int {var} = 0; {var} < {item.extent}; {var}++) {{{note}")
            elif sizes.get(item.level.size_key(item.dim)) == item.extent:
                out.append(f"{pad}{{{note}")
                out.append(f"{pad}  int {var} = {item.level.id_fn}({item.dim});")
            else:
                strided = True
                out.append(
                    f"{pad}for (int {var} = {item.level.id_fn}({item.dim}); {var} < {item.extent}; "
                    f"{var} += {item.level.size_fn}({item.dim})) {{{note}"
                )
            out.extend(render_block(item.body, sizes, indent + 1))
            if strided and item.level is Level.WRG and stores_to(item.body, "local"):
                # A group takes chunk after chunk: its items must be done reading this chunk's local
                # values (the tree's result) before any of them writes the next chunk's.
                out.append(f"{pad}  barrier(CLK_LOCAL_MEM_FENCE);  // before the next chunk's local stores")
            out.append(pad + "}")
        else:  # pragma: no cover
            raise CodegenError(f"internal: cannot print {item!r}")
    return out


_FIRST_ITEM = "get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0"


def _last_group(s: LastGroup, sizes: dict, indent: int) -> list[str]:
    """The ticket and the last group's work (``liftpy.codegen.last_group``): each group's stores are made
    visible to the device before its ticket is taken, so the group holding the last one reads them all."""
    pad = "  " * indent
    ticket, flag = s.ticket.name, s.flag.name
    groups = "get_num_groups(0) * get_num_groups(1) * get_num_groups(2)"
    who = "" if s.every_item else f" && {_FIRST_ITEM}"
    reset = f"{ticket}[0] = 0;  // the next launch counts from zero"
    return [
        f"{pad}barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);  // every store of this group issued",
        f"{pad}if ({_FIRST_ITEM}) {{",
        f"{pad}  mem_fence(CLK_GLOBAL_MEM_FENCE);  // and visible to every group before the ticket is taken",
        f"{pad}  {flag}[0] = atomic_inc({ticket}) == {groups} - 1;",
        f"{pad}}}",
        f"{pad}barrier(CLK_LOCAL_MEM_FENCE);",
        f"{pad}if ({flag}[0]{who}) {{  // the last group to finish: the next stage",
        f"{pad}  mem_fence(CLK_GLOBAL_MEM_FENCE);",
        *render_block(s.body, sizes, indent + 1),
        *([f"{pad}  if ({_FIRST_ITEM}) {{", f"{pad}    {reset}", f"{pad}  }}"] if s.every_item else [f"{pad}  {reset}"]),
        f"{pad}}}",
    ]


def uses_image_lane_helper(lines: list[str]) -> bool:
    return any("lane4(" in line for line in lines)


def render_kernel(kernel: Kernel, sizes: dict, attributes: str = "") -> tuple[list[str], list[str]]:
    """(preamble lines: sampler, helpers, user functions; kernel lines: signature, locals, body)."""
    body = render_block(kernel.body, sizes)
    pre: list[str] = []
    if any("read_imagef(" in line for line in body):
        pre.append("constant sampler_t sampler = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;")
        pre.append("")
    if half.uses_word_helpers(body):
        pre.append(half.WORD_HELPERS)
    if uses_image_lane_helper(body):
        pre.append("float lane4(float4 v, int k) { return k == 0 ? v.s0 : k == 1 ? v.s1 : k == 2 ? v.s2 : v.s3; }")
        pre.append("")
    for _, definition in kernel.functions:
        pre.append(definition)
        pre.append("")
    if any("floordiv_(" in line or "floormod_(" in line for line in body):
        pre.append(A.C_HELPERS)
    params = []
    for b in kernel.params:
        if b.space == "image":
            params.append(f"read_only image2d_t {b.name}")
        elif b.stored is not None:
            params.append(half.param_c(b))
        elif b.role == "input":
            params.append(f"global const {b.scalar.name}* restrict {b.name}")
        else:
            params.append(f"global {b.scalar.name}* restrict {b.name}")
    lines = [f"{attributes}kernel void {kernel.name}("]
    lines.append(",\n".join("    " + p for p in params) + ") {")
    for b in kernel.locals:
        lines.append("  " + declaration(b))
    lines.extend(body)
    lines.append("}")
    return pre, lines
