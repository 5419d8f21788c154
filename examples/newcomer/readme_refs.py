"""numpy references of the README's two programs (``normalize`` and ``row_sums``, saved from the README as
``normalize.py``), for ``--reference``:

    liftpy explore normalize.py:normalize -s N=256,M=256 --samples 16 \
        --reference examples/newcomer/readme_refs.py:normalize_ref
"""

import numpy as np


def normalize_ref(xs):
    return xs / xs.sum(axis=1, keepdims=True)


def row_sums_ref(xs):
    return xs.sum(axis=1)
