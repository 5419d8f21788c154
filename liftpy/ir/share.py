"""Sharing what a Python variable names: the tracer's ``let``.

The embedded DSL traces Python functions; a value bound to a Python variable is one expression object,
and used twice it appeared twice in the program, computed twice.  Worse, a value computed outside a
function and used inside it (the row maximum of a softmax, used for every element of the row) was computed
again for every element.  Only a nested ``let`` avoided either.

Now the tracer binds such values itself.  While a program is traced, every call node made is noted with
the trace (the program's, or one of the functions it traces) that made it (``Frame``; ``expr.Call`` notes
itself in ``expr.TRACING``).  Once the program is traced, a node that computes something (not a view:
those cost nothing to repeat) is bound once with ``let`` when

- it is used more than once (the same Python object reached by two edges of the traced graph), or
- it is used inside a function traced after it was made (captured from outside the function),

at the innermost scope where all its free variables are bound: the body of the function whose parameter
it uses (never outside it), or the whole program.  Nodes that neither of these describes keep their place,
so a program that shares nothing prints and compiles as before.
"""

from __future__ import annotations

from contextlib import contextmanager

from . import primitives as P
from .analysis import is_view
from .expr import TRACING, Call, Expr, Lambda, Var, fresh_name, primitive_functions, replace_functions


class Frame:
    """One trace: the calls made while it was open (not in the traces it opened), its parent, its function."""

    __slots__ = ("created", "parent", "lam", "children")

    def __init__(self, parent: "Frame | None"):
        self.created: list = []
        self.parent = parent
        self.lam: Lambda | None = None
        self.children: list[Frame] = []
        if parent is not None:
            parent.children.append(self)

    def within(self, other: "Frame") -> bool:
        """Whether this trace is ``other`` or was opened inside it."""
        f = self
        while f is not None:
            if f is other:
                return True
            f = f.parent
        return False


@contextmanager
def tracing_program():
    """The trace of a program: functions traced inside it get frames of their own (``function_frame``)."""
    root = Frame(None)
    TRACING.append(root)
    try:
        yield root
    finally:
        TRACING.remove(root)


@contextmanager
def function_frame():
    """The trace of one function of a program being traced (nothing is noted outside a program's trace)."""
    if not TRACING:
        yield None
        return
    frame = Frame(TRACING[-1])
    TRACING.append(frame)
    try:
        yield frame
    finally:
        TRACING.remove(frame)


def share(body: Expr, root: Frame) -> Expr:
    """``body``, traced under ``root``, with the values it shares or captures bound once by ``let``."""
    return _Sharing(root).run(body)


class _Sharing:
    def __init__(self, root: Frame):
        self.root = root
        self.owner: dict[int, Frame] = {}  # id of a call -> the trace that made it
        self.frame_of: dict[int, Frame] = {}  # id of a traced lambda -> its trace
        stack = [root]
        while stack:
            f = stack.pop()
            for node in f.created:
                self.owner[id(node)] = f
            if f.lam is not None:
                self.frame_of[id(f.lam)] = f
            stack.extend(f.children)
        self.indegree: dict[int, int] = {}
        self.captured: set[int] = set()
        self.order: dict[int, int] = {}  # post-order: a node's parts come before it
        self.nodes: dict[int, Expr] = {}
        self.binder: dict[str, Lambda] = {}  # a parameter's name -> its lambda
        self.depth: dict[int, int] = {}  # id of a lambda -> how many lambdas enclose it (and itself)

    # -- what is shared ---------------------------------------------------------------------------------
    def visit(self, body: Expr) -> None:
        """Count the edges into every node and note captured ones, without recursion (programs nest ~40 deep,
        but a sum of many terms is a long chain)."""
        seen: set[int] = set()
        # (node, enclosing lambda or None, its depth, children done)
        stack: list = [(body, None, 0, False)]
        while stack:
            node, lam, depth, done = stack.pop()
            if done:
                self.order[id(node)] = len(self.order)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, lam, depth, True))
            if isinstance(node, Lambda):
                self.depth[id(node)] = depth + 1
                for p in node.params:
                    self.binder[p.name] = node
                self.edge(node.body, self.frame_of.get(id(node)))
                stack.append((node.body, node, depth + 1, False))
            elif isinstance(node, Call):
                self.nodes[id(node)] = node
                fns = [node.fn] if isinstance(node.fn, Lambda) else [f for _, f in primitive_functions(node.fn)]
                for f in fns:
                    stack.append((f, lam, depth, False))
                # An argument is used where its call was made (the trace that made the call), which is
                # where the Python code that used it ran.
                used = self.owner.get(id(node))
                if used is None:
                    used = self.frame_of.get(id(lam)) if lam is not None else self.root
                for a in node.args:
                    self.edge(a, used)
                    stack.append((a, lam, depth, False))

    def edge(self, child, used: Frame | None) -> None:
        if not isinstance(child, Call):
            return
        key = id(child)
        self.indegree[key] = self.indegree.get(key, 0) + 1
        made = self.owner.get(key)
        if made is not None and used is not None and made is not used and used.within(made):
            self.captured.add(key)

    def chosen(self) -> dict[int, Expr]:
        return {k: n for k, n in self.nodes.items()
                if (self.indegree.get(k, 0) > 1 or k in self.captured) and not is_view(n)}

    def scope(self, node: Expr) -> Lambda | None:
        """The innermost lambda binding a free variable of ``node`` (None: the program)."""
        best, depth = None, 0
        for name in node.free_vars:
            lam = self.binder.get(name)
            if lam is not None and self.depth[id(lam)] > depth:
                best, depth = lam, self.depth[id(lam)]
        return best

    # -- rebuilding ---------------------------------------------------------------------------------------
    def run(self, body: Expr) -> Expr:
        self.visit(body)
        chosen = self.chosen()
        if not chosen:
            return body
        self.var = {k: Var(fresh_name("v")) for k in chosen}
        self.at: dict[int | None, list[int]] = {}
        for k, n in chosen.items():
            lam = self.scope(n)
            self.at.setdefault(id(lam) if lam is not None else None, []).append(k)
        self.memo: dict[int, object] = {}
        return self.bind(None, self.rebuild(body))

    def bind(self, scope: int | None, body: Expr) -> Expr:
        """``body`` under the lets of the values bound at ``scope``, a value's parts outside it."""
        for k in sorted(self.at.get(scope, ()), key=self.order.__getitem__, reverse=True):
            body = Call(P.Let(Lambda((self.var[k],), body)), (self.value(self.nodes[k]),))
        return body

    def rebuild(self, node):
        key = id(node)
        if key in self.var:
            return self.var[key]
        return self.value(node)

    def value(self, node):
        """``node`` itself rebuilt: its shared parts replaced by their variables, its functions' bodies bound."""
        key = id(node)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        if isinstance(node, Lambda):
            body = self.bind(key, self.rebuild(node.body))
            out = node if body is node.body else Lambda(node.params, body)
        elif isinstance(node, Call):
            if isinstance(node.fn, Lambda):
                fn = self.value(node.fn)
            else:
                changed = {n: g for n, f in primitive_functions(node.fn) if (g := self.value(f)) is not f}
                fn = replace_functions(node.fn, changed)
            args = tuple(self.rebuild(a) for a in node.args)
            same = fn is node.fn and all(a is b for a, b in zip(args, node.args))
            out = node if same else Call(fn, args)
        else:
            out = node
        self.memo[key] = out
        return out
