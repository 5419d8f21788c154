"""Shared test configuration.

Hypothesis runs deterministically (``derandomize=True``): the same examples on every run and machine, so
CI is reproducible; tests bound their own ``max_examples`` with ``@settings``.  Set
``HYPOTHESIS_PROFILE=liftpy-explore`` to search with fresh random examples locally.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "liftpy-ci",
    derandomize=True,
    database=None,  # no replay of examples saved by earlier runs: every run tests exactly the same examples
    deadline=None,
    max_examples=25,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "liftpy-explore",
    derandomize=False,
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "liftpy-ci"))


def on_simulator() -> bool:
    """Whether the default device is the Oclgrind simulator (where PoCL cannot build for the CPU)."""
    from liftpy.host.device import get_device

    return "oclgrind" in get_device(None).info.platform.lower()
