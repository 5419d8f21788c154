"""The exploration: many generated implementations of one operator on one device, each validated and measured,
kept in the results store (``liftpy.results``), proposed by a search strategy (``liftpy.search``) and run in
isolated worker processes (``liftpy.runtime``).

* ``loop``: ``explore_operator`` and ``explore_program``, a run's steps;
* ``options``: ``ExplorationOptions``, every setting of a run, and ``Exploration``, what it gives back;
* ``operator``: the ``Operator`` protocol, ``ProgramOperator`` (any program) and the library's operators;
* ``conv``: ``ConvOperator`` and ``explore_layer``, the paper's convolution layers;
* ``devices``: where the points run (this machine's device, or device workers on Ray);
* ``resume`` and ``transfer``: the batch a run saves for the next, and learning from other problems;
* ``records``, ``progress``, ``diagnose``, ``baseline``, ``sanitize``, ``cli``: what a run stores, shows and
  says when it fails, a researcher's own baseline, the Oclgrind sweep, and ``liftpy explore``.
"""

from importlib import import_module

# Each name is imported from its module when first asked for (PEP 562).  A worker process unpickles the operator
# of its points, which imports this package, and every ``liftpy`` command registers ``liftpy explore``: importing
# the loop here (the search, the solver, the cost model) made ``import liftpy.explore.operator`` take 0.76 s
# instead of 0.2 s on this project's 2-core machine.
_HOME = {
    "conv": ("ConvOperator", "explore_layer"),
    "loop": ("explore_operator", "explore_program"),
    "operator": ("Operator", "ProgramOperator", "Reference", "library_operator", "program_operator"),
    "options": ("Exploration", "ExplorationOptions"),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
