"""Cost models: symbolic counts of what a lowered program does, how a warp's requests are served (``access``:
coalescing and bank conflicts, read off the statement IR), what a CPU executes (``operations``, read off it
too), an analytical time model over them and a device profile, and (``learned``) a model fitted to the
measurements of a store."""

from .analytical import Machine, Prediction, VariantModel, predict_kernel
from .counts import Counts, count

__all__ = ["Counts", "Machine", "Prediction", "VariantModel", "count", "predict_kernel"]
