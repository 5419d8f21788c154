"""Exploration infrastructure: layers, the results store, Pareto frontiers, isolated workers, progress, and
reference convolutions.  One module per job:

* ``layers``: ``Layer`` and the catalogue (``get_layer("vgg16:7")``, ``get_layer("3,227,227,96,11,4,0")``);
* ``store``: the SQLite results store (``Store``, ``Record``, ``Key``, ``Status``);
* ``pareto``: frontiers, their table and their plot;
* ``worker``: ``WorkerPool`` running ``Task`` s in worker processes, with typed ``Outcome`` s;
* ``progress``: the progress line of long runs;
* ``references``: the plain numpy convolution, validation, and measured vendor references.

Importing this package loads neither PyTorch nor matplotlib; they are imported when first needed.
"""

from .layers import ALEXNET0, VGG16, Layer, get_layer, layer_names, network_layers, parse_layer_spec
from ..results.pareto import format_frontier, frontiers, pareto_front, plot_frontier, references_of
from ..explore.progress import Progress, ProgressState, format_progress
from .references import (
    REFERENCES,
    Expectation,
    ReferenceResult,
    Validation,
    available_references,
    conv2d_direct,
    expectation,
    measure_reference,
    measure_references,
    random_inputs,
    reference_record,
    validate,
)
from ..results.store import REFERENCE_PREFIX, Key, Record, Status, Store, canonical_json, to_pandas
from ..runtime import Outcome, Task, WorkerPool, classify

__all__ = [
    "ALEXNET0", "VGG16", "Layer", "get_layer", "layer_names", "network_layers", "parse_layer_spec",
    "format_frontier", "frontiers", "pareto_front", "plot_frontier", "references_of",
    "Progress", "ProgressState", "format_progress",
    "REFERENCES", "Expectation", "ReferenceResult", "Validation", "available_references", "conv2d_direct",
    "expectation", "measure_reference", "measure_references", "random_inputs", "reference_record", "validate",
    "REFERENCE_PREFIX", "Key", "Record", "Status", "Store", "canonical_json", "to_pandas",
    "Outcome", "Task", "WorkerPool", "classify",
]  # fmt: skip
