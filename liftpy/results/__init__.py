"""What explorations keep: the results store and what is read from it, and the disk cache of what they derive.

* ``store``: the SQLite results store (``Store``, ``Record``, ``Key``, ``Status``), ``store_read`` checking
  every row read from its file;
* ``pareto``: time/memory frontiers, their table and their plot;
* ``queries``: a problem's frontier, fastest point and plot, read from a store file;
* ``cache``: the signed disk cache of derived variants, screened spaces and generated kernels.

Importing this package loads neither pandas nor matplotlib; they are imported when first needed.
"""

from .pareto import format_frontier, frontiers, pareto_front, plot_frontier, references_of
from .queries import best, frontier, plot
from .store import REFERENCE_PREFIX, Key, Record, Status, Store, canonical_json, config_key, to_pandas

__all__ = [
    "format_frontier", "frontiers", "pareto_front", "plot_frontier", "references_of",
    "best", "frontier", "plot",
    "REFERENCE_PREFIX", "Key", "Record", "Status", "Store", "canonical_json", "config_key", "to_pandas",
]  # fmt: skip
