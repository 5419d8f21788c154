"""Tuning spaces: parameters, constraints with their origins, and the solver that counts, samples,
enumerates and explains them (issue 4).

Typical use::

    space = Space(parameters, constraints)          # from constraint inference
    counted = solve(space)                           # plan (domains, groups, order) + exact count
    configs = sample(counted, 1000, seed=1)          # distinct, uniformly drawn valid configurations
    print(format_space(space, counted))              # what `liftpy space` prints
    why = explain(space)                             # None, or the smallest conflicting constraints
"""

from importlib import import_module

# Each name is imported from its module when first asked for (PEP 562), so that a command that only
# registers ``liftpy space`` (every ``liftpy`` command builds the whole parser) does not load the solver
# and networkx: a quarter of the start-up of ``liftpy compile``.
_HOME = {
    "space": ("Constraint", "Parameter", "Space", "power_of_two"),
    "domains": ("Domain", "derive_domains"),
    "plan": ("Plan", "plan_space"),
    "solver": ("CountedSpace", "SpaceSize", "count_space", "decode", "enumerate_valid", "is_satisfiable", "sample",
               "solve", "violated"),
    "conflict": ("Explanation", "explain"),
    "cli_format": ("format_space",),
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
