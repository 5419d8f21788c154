"""Tuning spaces: parameters, constraints with their origins, and the solver that counts, samples,
enumerates and explains them (issue 4).

Typical use::

    space = Space(parameters, constraints)          # from constraint inference
    counted = solve(space)                           # plan (domains, groups, order) + exact count
    configs = sample(counted, 1000, seed=1)          # distinct, uniformly drawn valid configurations
    print(format_space(space, counted))              # what `liftpy space` prints
    why = explain(space)                             # None, or the smallest conflicting constraints
"""

from .space import Constraint, Parameter, Space, power_of_two  # noqa: F401
from .domains import Domain, derive_domains  # noqa: F401
from .plan import Plan, plan_space  # noqa: F401
from .solver import (  # noqa: F401
    CountedSpace,
    SpaceSize,
    count_space,
    decode,
    enumerate_valid,
    is_satisfiable,
    sample,
    solve,
    violated,
)
from .conflict import Explanation, explain  # noqa: F401
from .cli_format import format_space  # noqa: F401
