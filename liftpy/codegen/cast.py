"""A very small C syntax tree: enough to decide the form of parallel loops after the launch size is known.

The emitter produces statements, declarations, barriers and loops.  Loops that distribute work over
work-items or work-groups are rendered only once the NDRange is fixed: a loop whose range equals the
number of work-items becomes a plain index (``int l = get_local_id(0);``), as the Lift paper describes,
and otherwise a strided loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_ID = {"glb": ("get_global_id", "get_global_size"), "wrg": ("get_group_id", "get_num_groups"), "lcl": ("get_local_id", "get_local_size")}


@dataclass
class Block:
    items: list = field(default_factory=list)

    def add(self, item) -> None:
        self.items.append(item)


@dataclass
class Stmt:
    text: str


@dataclass
class Comment:
    text: str


@dataclass
class Barrier:
    fence: str = "CLK_LOCAL_MEM_FENCE"


@dataclass
class Loop:
    kind: str  # 'glb', 'wrg', 'lcl' or 'seq'
    dim: int
    var: str
    n: int
    body: Block
    note: str = ""


def render(block: Block, sizes: dict[tuple[str, int], int], indent: int = 1) -> list[str]:
    """Render statements; ``sizes[(kind, dim)]`` is the number of work-items/groups in that dimension."""
    pad = "  " * indent
    out: list[str] = []
    for item in block.items:
        if isinstance(item, Stmt):
            out.append(pad + item.text)
        elif isinstance(item, Comment):
            out.append(f"{pad}// {item.text}")
        elif isinstance(item, Barrier):
            out.append(f"{pad}barrier({item.fence});")
        elif isinstance(item, Block):
            out.append(pad + "{")
            out.extend(render(item, sizes, indent + 1))
            out.append(pad + "}")
        elif isinstance(item, Loop):
            note = f"  // {item.note}" if item.note else ""
            if item.kind == "seq":
                out.append(f"{pad}for (int {item.var} = 0; {item.var} < {item.n}; {item.var}++) {{{note}")
                out.extend(render(item.body, sizes, indent + 1))
                out.append(pad + "}")
                continue
            get_id, get_size = _ID[item.kind]
            if sizes[(item.kind, item.dim)] == item.n:
                out.append(f"{pad}{{{note}")
                out.append(f"{pad}  int {item.var} = {get_id}({item.dim});")
                out.extend(render(item.body, sizes, indent + 1))
                out.append(pad + "}")
            else:
                out.append(
                    f"{pad}for (int {item.var} = {get_id}({item.dim}); {item.var} < {item.n}; "
                    f"{item.var} += {get_size}({item.dim})) {{{note}"
                )
                out.extend(render(item.body, sizes, indent + 1))
                out.append(pad + "}")
        else:  # pragma: no cover
            raise TypeError(f"cannot render {item!r}")
    return out


def parallel_loops(block: Block):
    """Every work-distributing loop, for deciding the NDRange."""
    for item in block.items:
        if isinstance(item, Loop):
            if item.kind != "seq":
                yield item
            yield from parallel_loops(item.body)
        elif isinstance(item, Block):
            yield from parallel_loops(item)
