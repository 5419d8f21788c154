"""Kernel generation: program + sizes -> OpenCL source, memory plan and launch configuration.

``generate_kernel`` checks the sizes against every requirement of the program's types, walks the
program with the emitter into statement IR, decides the NDRange from the parallel loops it holds (mapGlb
extents give the global size; mapWrg and mapLcl extents the number of groups and the group size, capped by
the device), runs the low-level passes (``liftpy.codegen.passes``) and prints the source with a header that
records the program text and the values it was specialized for.  The memory plan is read off the final
statement IR, so it is what the kernel really allocates.  ``lower_kernel`` (and ``lower_pipeline``) stop
before the printing, for readers of the statement IR such as the cost model.
"""

from __future__ import annotations

import gc
import keyword
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache, wraps
from typing import Mapping

from ..errors import CodegenError, ConstraintError, summarize
from ..ir.analysis import input_size_symbols
from ..ir.expr import Call, Program
from ..ir.kernels import forget_stages, split_kernels
from ..ir.levels import PARALLEL_LEVELS, Level, Part
from ..ir.precision import OUTPUT_KEY
from ..ir.primitives import Let
from ..ir.printer import show_program
from ..ir.results import is_results
from ..ir.typecheck import check_sizes, forget_typings
from ..ir.types import INT_INDEX_MAX, ArrayType, Type, VectorType, as_size, flat_count, memory_element, scalar_of, size_str, whole_number
from ..version import __version__
from ..views import view as V
from . import half, last_group
from .emit import Ctx, Emitter
from .memo import clear_memos
from .memory import Buffer, MemoryPlan
from .passes import DEFAULT_PASSES, run_passes, unroll
from .render import render_kernel
from .stmt import Declare, Kernel, parallel_loops, walk

_C_KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
    "float", "for", "goto", "if", "int", "long", "register", "return", "short", "signed", "sizeof", "static",
    "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "kernel", "global",
    "local", "private", "constant", "image2d_t", "sampler", "half", "bool", "restrict", "lane4",
}

# OpenCL C built-in functions a kernel or argument name must not take (a kernel named ``dot`` does not
# build: the name is the built-in's; an argument named ``max`` hides the built-in from the kernel body).
_CL_BUILTINS = {
    "abs", "acos", "all", "any", "asin", "atan", "atan2", "barrier", "bitselect", "ceil", "clamp", "cos", "cross",
    "degrees", "distance", "dot", "exp", "exp2", "fabs", "floor", "fma", "fmax", "fmin", "fmod", "hypot", "isinf",
    "isnan", "length", "log", "log2", "mad", "max", "min", "mix", "normalize", "pow", "radians", "rint", "round",
    "rsqrt", "select", "sign", "sin", "sqrt", "step", "tan", "trunc", "vload4", "vstore4", "read_imagef",
    "write_imagef", "convert_float", "convert_int", "printf", "shuffle", "mem_fence", "native_exp", "native_sqrt",
}


@dataclass(frozen=True)
class DeviceLimits:
    """The limits code generation must respect (a subset of a device profile, ``DeviceProfile.limits``,
    which is where their values come from; the constraint inference reads the same profile)."""

    max_work_group_size: int = 1024
    max_work_item_sizes: tuple[int, int, int] = (1024, 1024, 64)
    local_mem_bytes: int | None = None
    private_item_bytes: int | None = None  # private memory one work-item may allocate
    private_group_bytes: int | None = None  # ... all work-items of a group together (CPU drivers: a stack)
    # What running a kernel may allocate (``host.kernel`` checks its buffers before allocating any): no
    # generated source depends on them, so they stay out of the repr that keys stored generated kernels.
    max_alloc_bytes: int | None = field(default=None, repr=False)  # one buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)
    global_mem_bytes: int | None = field(default=None, repr=False)  # all of a run's buffers together


@dataclass(frozen=True)
class Launch:
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None

    def __str__(self) -> str:
        loc = "driver's choice" if self.local_size is None else str(self.local_size)
        return f"global {self.global_size}, local {loc}"


@dataclass(frozen=True)
class KernelSource:
    name: str
    source: str
    program: Program
    bindings: dict
    plan: MemoryPlan
    launch: Launch
    input_names: tuple[str, ...]
    placements: dict = field(default_factory=dict)  # input name -> 'image' for inputs read as images
    output_type: Type = None
    output_shape: tuple[int, ...] = ()
    ir: Kernel | None = None  # the statement IR after the passes, for inspection

    def __getstate__(self):
        # Sources travel from code-generation workers to the measuring one; the statement IR (whose views
        # hold closures) stays behind.
        state = dict(self.__dict__)
        state["ir"] = None
        return state

    @property
    def inputs(self) -> tuple[Buffer, ...]:
        return self.plan.of_role("input")

    @property
    def output(self) -> Buffer:
        return self.plan.of_role("output")[0]

    @property
    def scratch(self) -> tuple[Buffer, ...]:
        """Global buffers the kernel needs besides its inputs and output, passed between them in this order
        and zeroed by the host (``codegen.last_group``: the buffer between two stages, the ticket counter)."""
        return tuple(b for b in self.plan.of_role("scratch") if b.space == "global")


def _c_ident(name: str, taken: set[str], kernel: bool = False) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", name) or "x"
    if (base[0].isdigit() or base in _C_KEYWORDS or base in _CL_BUILTINS or keyword.iskeyword(base)
            or base.startswith("get_")):
        base = f"{base}_kernel" if kernel and not base[0].isdigit() else "in_" + base
    cand, k = base, 1
    while cand in taken:
        cand, k = f"{base}{k}", k + 1
    taken.add(cand)
    return cand


def decide_launch(loops, limits: DeviceLimits, override: Launch | None) -> tuple[Launch, dict]:
    """The NDRange of a kernel and its render sizes (``level.size_key(dim)`` -> the size the emitted code
    may assume): each part of the NDRange is the longest loop of the levels that decide it (``Part``).
    With the driver forming the groups, only the global size is known; with the kernel fixing them, the
    local size is its longest ``mapLcl`` per dimension as far as the device allows, and the code assumes
    both the number of groups and their size."""
    extents: dict[Part, dict[int, int]] = {part: {} for part in Part}
    schemes = set()
    for loop in loops:
        table = extents[loop.level.part]
        table[loop.dim] = max(table.get(loop.dim, 0), loop.extent)
        schemes.add(loop.level.scheme)
    if len(schemes) > 1:
        raise CodegenError("a kernel uses either mapGlb or mapWrg/mapLcl, not both")
    glb, wrg, lcl = extents[Part.GLOBAL], extents[Part.GROUPS], extents[Part.LOCAL]
    used = sorted(set(glb) | set(wrg) | set(lcl)) or [0]
    ndim = max(used) + 1
    if override is not None:
        g = tuple(override.global_size) + (1,) * (ndim - len(override.global_size))
        l = None if override.local_size is None else tuple(override.local_size) + (1,) * (ndim - len(override.local_size))
        parts = {Part.GLOBAL: g} if l is None else {Part.GLOBAL: g, Part.LOCAL: l, Part.GROUPS: [a // b for a, b in zip(g, l)]}
        return Launch(g[:ndim], None if l is None else l[:ndim]), _render_sizes(ndim, parts)
    if glb:
        g = tuple(glb.get(d, 1) for d in range(ndim))
        return Launch(g, None), _render_sizes(ndim, {Part.GLOBAL: g})
    if not (wrg or lcl):
        return Launch((1,), (1,)), {}
    local = [min(lcl.get(d, 1), limits.max_work_item_sizes[d]) for d in range(ndim)]
    while _prod(local) > limits.max_work_group_size:
        k = max(range(ndim), key=lambda d: local[d])
        local[k] = (local[k] + 1) // 2
    groups = [wrg.get(d, 1) for d in range(ndim)]
    sizes = _render_sizes(ndim, {Part.GROUPS: groups, Part.LOCAL: local})
    return Launch(tuple(g * l for g, l in zip(groups, local)), tuple(local)), sizes


def _render_sizes(ndim: int, parts: dict) -> dict:
    """The size of every level in every dimension, from the sizes of the parts of the NDRange its loops
    decide (``Part`` -> one size per dimension)."""
    return {level.size_key(d): size[d] for d in range(ndim) for part, size in parts.items()
            for level in PARALLEL_LEVELS if level.part is part}


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def fit_private(chosen: Launch, render_sizes: dict, private_bytes: int, limits: DeviceLimits) -> Launch:
    """The launch of a kernel whose work-groups the driver forms (``mapGlb``: no local size), with a local
    size of its own where the driver's largest group could overflow the private memory a group may keep
    (a CPU driver runs a group on one thread and keeps its items' private arrays on that thread's stack:
    4,096 softmax rows of 1 KiB each took PoCL past its 4 MiB).  The largest group that fits is chosen,
    each dimension a divisor of the global size (as OpenCL 1.2 requires), the fastest dimension first;
    one work-item always fits, since a work-item's own private memory is bounded separately.  Kernels
    that fit the driver's largest group keep the driver's choice, so their launch (and the source's
    header that prints it) does not change.  Only the launch changes: a global kernel's code does not
    depend on its group size."""
    group = limits.private_group_bytes
    if not render_sizes or any(Level(k[0]).part is not Part.GLOBAL for k in render_sizes) or not group:
        return chosen
    if private_bytes * limits.max_work_group_size <= group:
        return Launch(chosen.global_size, None)
    budget = max(1, min(limits.max_work_group_size, group // private_bytes))
    local = []
    for d, g in enumerate(chosen.global_size):
        cap = min(limits.max_work_item_sizes[d] if d < len(limits.max_work_item_sizes) else 1, budget // max(1, _prod(local)))
        local.append(max(k for k in range(1, max(1, min(g, cap)) + 1) if g % k == 0))
    return Launch(chosen.global_size, tuple(local))


def _private_total(ir) -> int:
    return sum(b.nbytes for b in _unique(x.buffer for x in walk(ir.body) if isinstance(x, Declare)))


@contextmanager
def _no_cycle_collection():
    """Python's cyclic garbage collector paused, and resumed as it was.  Code generation allocates some
    hundred thousand short-lived index and statement objects per kernel, and each allocation burst sets
    off collections whose cost grows with the whole heap, not with the garbage: in a search that holds
    thousands of derived variants they took a third of code generation's time, a second at a stroke.
    What generation leaves cyclic (recursive closures) is collected after it, when the collector is back."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_DEPTH = [0]  # generations under way in this thread of control (generate_pipeline calls generate_kernel)


def _without_cycle_collection(fn):
    """``fn`` with the cyclic collector paused, and the index memos emptied when the outermost
    generation returns (``codegen.memo.clear_memos``), before the collector resumes: what they held is
    freed then, not scanned."""
    @wraps(fn)
    def run(*args, **kwargs):
        with _no_cycle_collection():
            _DEPTH[0] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                _DEPTH[0] -= 1
                if _DEPTH[0] == 0:
                    clear_memos()

    return run


def _whole(program: Program, name, value) -> int:
    """A size's or parameter's value as an int (``ir.types.whole_number``)."""
    whole = whole_number(value)
    if whole is None:
        raise CodegenError(f"{name} = {value!r} for {program.name}: sizes and parameters are whole numbers")
    return whole


@dataclass(frozen=True)
class LoweredKernel:
    """A kernel before it is printed: its statement IR after the passes, and the launch and values that
    printing and the memory plan need.  What a cost model reads (``liftpy.model.access``) without
    paying for the printing."""

    ir: Kernel
    launch: "Launch"
    render_sizes: dict
    bindings: dict
    output_type: Type
    output_shape: tuple
    input_names: tuple
    placements: dict


@_without_cycle_collection
def lower_kernel(
    program: Program,
    sizes: Mapping | None = None,
    limits: DeviceLimits = DeviceLimits(),
    launch: Launch | None = None,
    placements: Mapping[str, str] | None = None,
    passes=DEFAULT_PASSES,
) -> LoweredKernel:
    """The statement IR of a lowered program's kernel for the given sizes and parameter values, after
    ``passes``: everything ``generate_kernel`` does before printing."""
    bindings = {as_size(k) if isinstance(k, str) else k: _whole(program, k, v) for k, v in (sizes or {}).items()}
    placements = dict(placements or {})
    check_sizes(program, bindings)
    em = Emitter(bindings)
    taken: set[str] = set()
    env = {}
    input_names = []
    for p, t in zip(program.params, program.param_types):
        if memory_element(t) is None:
            raise CodegenError(f"input '{p.name}' of type {t}: inputs must be arrays of scalars, vectors or tuples of them")
        cname = _c_ident(p.name, taken)
        place = placements.get(p.name, "buffer")
        if place == "image":
            buf, view = _image_input(em, cname, t)
        elif place in ("buffer", half.HALF):
            if place == half.HALF:
                half.check_half_storable(p.name, t)
            sym = flat_count(t)
            buf = Buffer(cname, "global", em.element(t), em.conc(sym), sym, "input", t, place if place == half.HALF else None)
            view = em.mem_view(buf, t)
        else:
            raise CodegenError(f"input '{p.name}': unknown placement {place!r} (buffer, image or half)")
        em.buffers.append(buf)
        env[p.name] = (t, view)
        input_names.append(p.name)
    out_place = placements.get(OUTPUT_KEY) if OUTPUT_KEY not in input_names else None
    for name in placements:
        if name not in input_names and name != OUTPUT_KEY:
            raise CodegenError(f"placement given for '{name}', which is not an input of {program.name}")
    out_t = em.type_of(program.body, env)
    if is_results(_below_lets(program.body)):
        raise CodegenError(f"{program.name} returns {out_t}, several results, each computed by a kernel of its own: generate "
                           "them with generate_pipeline, or compile the program with liftpy.compile (liftpy run)")
    if memory_element(out_t) is None:
        raise CodegenError(f"the result of {program.name} has type {out_t}; a kernel must produce an array of "
                           "scalars, vectors or tuples of them")
    out_name = _c_ident("out", taken)
    sym = flat_count(out_t)
    if out_place not in (None, "buffer", half.HALF):
        raise CodegenError(f"the result of {program.name}: unknown placement {out_place!r} (buffer or half)")
    if out_place == half.HALF:
        half.check_half_storable(f"the result of {program.name}", out_t)
    out = Buffer(out_name, "global", em.element(out_t), em.conc(sym), sym, "output", out_t,
                 half.HALF if out_place == half.HALF else None)
    em.buffers.append(out)
    em.emit_to(program.body, em.mem_dest(out, out_t), env, Ctx())
    for b in em.buffers:  # (the constraint inference's codegen:int_index, for sizes given by hand)
        if b.count > INT_INDEX_MAX:
            raise CodegenError(f"the buffer {b.name} ({b.role}) of {program.name} has {b.count} elements; kernels index "
                               f"with 32-bit ints, so a buffer holds at most {INT_INDEX_MAX}")

    name = _c_ident(program.name, set(), kernel=True)
    params = tuple(b for b in em.buffers if b.role in ("input", "output"))
    ir = Kernel(name, params, tuple(em.local_buffers), em.body(), tuple(em.functions.items()))
    chosen, render_sizes = decide_launch(parallel_loops(ir.body), limits, launch)
    fit = launch is None and limits.private_group_bytes is not None  # (a GPU's limits have none)
    if fit:
        chosen = fit_private(chosen, render_sizes, _private_total(ir), limits)
    ir = ir.replace(notes={"sizes": render_sizes})
    ir = _run_checked(ir, passes, chosen, limits)
    if fit:  # the passes' temporaries (vector registers) may call for a smaller group still
        chosen = fit_private(chosen, render_sizes, _private_total(ir), limits)
    dims = []
    tt = out_t
    while isinstance(tt, ArrayType):
        dims.append(em.conc(tt.size))
        tt = tt.elem
    if isinstance(tt, VectorType):
        dims.append(em.conc(tt.width))
    return LoweredKernel(ir, chosen, render_sizes, bindings, out_t, tuple(dims), tuple(input_names), placements)


def _below_lets(body):
    while isinstance(body, Call) and isinstance(body.fn, Let):
        body = body.fn.f.body
    return body


@_without_cycle_collection
def generate_kernel(
    program: Program,
    sizes: Mapping | None = None,
    limits: DeviceLimits = DeviceLimits(),
    launch: Launch | None = None,
    placements: Mapping[str, str] | None = None,
    passes=DEFAULT_PASSES,
) -> KernelSource:
    """Generate the OpenCL kernel of a lowered program for the given sizes and parameter values.

    ``placements`` may put an input ``[[[float]C]W]H`` in an image (``{"x": "image"}``): it is then read
    with ``read_imagef`` through an image view (RGBA texels, channels packed by four)."""
    return _source(program, lower_kernel(program, sizes, limits, launch, placements, passes), limits, launch is not None)


def _source(program: Program, low: LoweredKernel, limits: DeviceLimits, launch_given: bool) -> KernelSource:
    """The printed kernel of a lowered one; ``program``: what its header records."""
    ir, chosen = low.ir, low.launch
    lines = _header(program, low.bindings, chosen)
    wg = ""
    if chosen.local_size is not None and not launch_given and any(Level(k[0]).part is Part.LOCAL for k in low.render_sizes):
        ls = tuple(chosen.local_size) + (1,) * (3 - len(chosen.local_size))
        wg = f"__attribute__((reqd_work_group_size({ls[0]}, {ls[1]}, {ls[2]})))\n"
    pre, body = render_kernel(ir, low.render_sizes, wg)
    lines.extend(half.preamble(ir))
    lines.extend(pre)
    lines.extend(body)
    private = tuple(x.buffer for x in walk(ir.body) if isinstance(x, Declare))
    plan = MemoryPlan(_unique(ir.params + tuple(ir.locals) + private))
    _check_memory(plan, chosen, limits, ir.name)
    return KernelSource(
        name=ir.name,
        source="\n".join(lines) + "\n",
        program=program,
        bindings=low.bindings,
        plan=plan,
        launch=chosen,
        input_names=low.input_names,
        placements=low.placements,
        output_type=low.output_type,
        output_shape=low.output_shape,
        ir=ir,
    )


@_without_cycle_collection
def generate_pipeline(
    program: Program,
    sizes: Mapping | None = None,
    limits: DeviceLimits = DeviceLimits(),
    placements: Mapping[str, str] | None = None,
    passes=DEFAULT_PASSES,
) -> list[tuple[KernelSource, str]]:
    """The kernels of a program, in order, each with the name of the buffer it writes (``out`` for the
    last): one for a program without kernel boundaries, one for two stages where the second runs in the
    first's last work-group (``toGlobalLast``, ``codegen.last_group``).  Pure: no device is needed."""
    made: list[tuple[Program, LoweredKernel, str]] = []
    for st, place, output, last in _stages(program, placements):
        low = lower_kernel(st, sizes, limits, None, place, passes)
        if last:
            _, first, between = made.pop()
            ir = last_group.fused(first, low, between, _c_ident(program.name, set(), kernel=True))
            low = LoweredKernel(ir, first.launch, first.render_sizes, {**first.bindings, **low.bindings}, low.output_type,
                                low.output_shape, first.input_names, first.placements)
            st = program  # (the header records both stages)
        made.append((st, low, output))
    return [(_source(st, low, limits, False), output) for st, low, output in made]


@_without_cycle_collection
def lower_pipeline(
    program: Program,
    sizes: Mapping | None = None,
    limits: DeviceLimits = DeviceLimits(),
    placements: Mapping[str, str] | None = None,
    passes=DEFAULT_PASSES,
) -> list[LoweredKernel]:
    """``generate_pipeline`` without the printing: each stage's statement IR and launch, a stage that runs
    in the previous one's last work-group (``toGlobalLast``) apart, as the cost model reads them."""
    return [lower_kernel(st, sizes, limits, None, place, passes) for st, place, _, _ in _stages(program, placements)]


def _stages(program: Program, placements: Mapping[str, str] | None):
    """The kernels' programs, each with the placements of its own inputs and the buffer it writes."""
    placements = dict(placements or {})
    for st in split_kernels(program):
        names = {p.name for p in st.program.params}
        place = {k: v for k, v in placements.items() if k in names}
        if st.output in placements and OUTPUT_KEY not in names:  # (a stage's result, by the buffer it writes)
            place[OUTPUT_KEY] = placements[st.output]
        yield st.program, place, st.output, st.last_group


def _run_checked(ir: Kernel, passes, launch: "Launch", limits: DeviceLimits) -> Kernel:
    """``run_passes``, with the private memory declared so far checked before unrolling: the passes after
    it only add private arrays (vector temporaries), so a kernel over the limit there is refused by the
    final check anyway, and here it is refused before its copies are made (some 0.1 ms each)."""
    if unroll not in passes:
        return run_passes(ir, passes)
    at = passes.index(unroll)
    ir = run_passes(ir, passes[:at])
    _check_private(_unique(x.buffer for x in walk(ir.body) if isinstance(x, Declare)), launch, limits, ir.name)
    return run_passes(ir, passes[at:])


def _check_memory(plan: MemoryPlan, launch: "Launch", limits: DeviceLimits, name: str) -> None:
    """The memory the kernel really allocates (every buffer of its plan, pass temporaries included)
    against the device: the constraint inference estimates the same from the program before any code
    exists, and this is the check that makes an underestimate an invalid point, not a crashed driver."""
    if limits.local_mem_bytes is not None and plan.local_bytes > limits.local_mem_bytes:
        listing = summarize((b.name, b.nbytes) for b in plan.of_space("local"))
        raise ConstraintError(f"kernel {name} needs {plan.local_bytes} bytes of local memory ({listing}); "
                              f"the device has {limits.local_mem_bytes}")
    _check_private(plan.of_space("private"), launch, limits, name)


def _check_private(private, launch: "Launch", limits: DeviceLimits, name: str) -> None:
    """The private buffers of a kernel (of one work-item) against the device's limits, per work-item and
    per work-group."""
    total = sum(b.nbytes for b in private)
    if limits.private_item_bytes is not None and total > limits.private_item_bytes:
        listing = summarize((b.name, b.nbytes) for b in private)
        raise ConstraintError(f"kernel {name} keeps {total} bytes of private memory per work-item "
                              f"({listing}); at most {limits.private_item_bytes} are allowed on this device")
    items = 1
    for n in launch.local_size or (limits.max_work_group_size,):
        items *= n
    if limits.private_group_bytes is not None and total * items > limits.private_group_bytes:
        raise ConstraintError(f"kernel {name} keeps {total} bytes of private memory in each of {items} "
                              f"work-items of a group; at most {limits.private_group_bytes} bytes per group are "
                              "allowed on this device (a CPU driver keeps them on one thread's stack)")


def _unique(buffers) -> tuple:
    seen, out = set(), []
    for b in buffers:
        if b.name not in seen:
            seen.add(b.name)
            out.append(b)
    return tuple(out)


def _image_input(em: Emitter, cname: str, t: Type):
    dims, width = em.dims_of(t)
    if len(dims) != 3 or width != 1 or scalar_of(t) is None or scalar_of(t).name != "float":
        raise CodegenError(f"only [[[float]C]W]H inputs can be placed in an image, not {t}")
    h, w, c = dims
    if c % 4:
        raise CodegenError(f"an image input packs channels by four; {c} channels are not a multiple of 4 (pad the channels)")
    sym = flat_count(t)
    buf = Buffer(cname, "image", scalar_of(t), h * w * c, sym, "input", t)
    return buf, V.ImageView(buf, c)


@lru_cache(maxsize=256)
def _program_text(program: Program) -> str:
    """The program as the header prints it: the same for every configuration a search generates, so it
    is printed once per variant (a tiled convolution's text took 1-11 ms to print, a tenth of generating a
    point's kernels; a search generates several configurations of each variant it keeps)."""
    return show_program(program)


def forget_programs() -> None:
    """Forget what code generation remembers of the programs it generated kernels for (their stages, their
    typings and the types the emitter asked of their subexpressions, their text): ``benchmarks/codegen.py``
    forgets what choosing its points taught, so that each point pays its variant's one-time work.  The type
    checker's memo of subexpression types (``ir.typecheck._CACHE``) stays, as in a search, which fills it
    while inferring its constraints before it generates any kernel."""
    forget_stages()
    forget_typings()
    _program_text.cache_clear()


def _header(program: Program, bindings: dict, launch: Launch) -> list[str]:
    size_syms = input_size_symbols(program)
    sizes = {k: v for k, v in bindings.items() if k in size_syms}
    params = {k: v for k, v in bindings.items() if k not in size_syms}
    fmt = lambda d: ", ".join(f"{k} = {v}" for k, v in sorted((size_str(k), v) for k, v in d.items())) or "none"
    lines = [f"// Generated by liftpy {__version__} from the program:", "//"]
    lines += ["//   " + line for line in _program_text(program).splitlines()]
    lines += [
        "//",
        f"// sizes: {fmt(sizes)}",
        f"// tuning parameters: {fmt(params)}",
        f"// launch: {launch}",
        "",
    ]
    return lines
