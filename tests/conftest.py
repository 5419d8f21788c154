"""Shared test configuration.

Hypothesis runs deterministically (``derandomize=True``): the same examples on every run and machine, so
CI is reproducible; tests bound their own ``max_examples`` with ``@settings``.  Set
``HYPOTHESIS_PROFILE=liftpy-explore`` to search with fresh random examples locally.
"""

import os

import pytest
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


@pytest.fixture(scope="session", autouse=True)
def shared_derivation_cache(tmp_path_factory):
    """One cache of derived variants for the whole run (in a fresh directory, so nothing is read from an
    earlier run or the user's cache): the convolution's 3,000 variants are derived once, not once per
    module (or per xdist worker) that needs them; the command-line tests' subprocesses inherit it."""
    if os.environ.get("LIFTPY_CACHE_DIR"):
        yield
        return
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # One for all of xdist's workers (their base folders share this run's parent): what one derived, the
        # other reads instead of deriving it again.  Its entries are written atomically (tuning.cache).
        folder = tmp_path_factory.getbasetemp().parent / "liftpy-cache"
        folder.mkdir(mode=0o700, exist_ok=True)  # (a folder others may write is no cache: tuning.cache)
    else:
        folder = tmp_path_factory.mktemp("liftpy-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LIFTPY_CACHE_DIR", str(folder))
        yield
