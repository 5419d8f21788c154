"""Search strategies: which points (a variant and a configuration of its tuning parameters) to measure next.

* ``strategy``: the protocol the exploration loop uses (``Strategy``); a strategy is passed to it as a value,
  ``explore_operator(op, search=ModelSearch)``;
* ``uniform``: ``UniformSearch``, uniform sampling (the baseline), and ``choose_points``;
* ``model``: ``ModelSearch``, candidates ranked by the cost model and learned from measurements;
* ``spaces``: ``Spaces``, the valid spaces and analytical models of a problem's variants, which both use;
* ``variants``: a variant's text and id, and the rule filter.
"""

from ..errors import TuningError
from .model import ModelSearch
from .spaces import Spaces
from .strategy import Strategy
from .uniform import Point, UniformSearch, choose_points
from .variants import find_variant, rule_list, select_variants, variant_id, variant_text

STRATEGIES = (ModelSearch, UniformSearch)  # what the command line's ``--search`` names, its default first


def named(name: str) -> type[Strategy]:
    """The strategy the command line names (``--search model``): text becomes a value at the command line's
    edge, and nowhere else."""
    for strategy in STRATEGIES:
        if strategy.name == name:
            return strategy
    raise TuningError(f"unknown search {name!r}; choose one of {', '.join(s.name for s in STRATEGIES)}")


__all__ = ["STRATEGIES", "ModelSearch", "Point", "Spaces", "Strategy", "UniformSearch", "choose_points", "find_variant",
           "named", "rule_list", "select_variants", "variant_id", "variant_text"]
