"""A model search's hill climb (``ModelSearch._climb``) must move a parameter within the values the solver
searches, not within its raw range.

``sum`` over 2^26 floats has variants split twice (``split(w1, split(w0, x))``): ``w1`` must divide ``w0``,
a constraint between two parameters, so its raw domain (``derive_domains``) is the whole range 1..N, while
the solver's (``plan_space(...).search_domains``, narrowed by divisibility) is the 27 powers of two.  The
climb took the raw domain: one step built and checked 67 million moved configurations (and materialised
each 67-million-value range as a tuple, 2.4 GB).  On the H200 the roofline run's exploration of ``sum``
measured its 24 points and then never finished choosing the next batch (``_save_plan`` -> ``propose`` ->
``_expand`` -> ``_climbed``); on this project's 2-core machine one climb ran for more than 25 minutes.

The climb now moves within the solver's search domains (``liftpy/search/model.py``).
"""

from __future__ import annotations

from liftpy.host.profile import DeviceProfile
from liftpy.explore.operator import library_operator
from liftpy.results.cache import cached_variants
from liftpy.search.model import ModelSearch
from liftpy.search.spaces import Spaces

# Far more checks than a climb over the solver's domains makes (a few dozen per step, eight steps at most),
# far fewer than one step over a raw range of 2^22 values.
MOST_CHECKS = 20_000


class TooManyChecks(Exception):
    pass


def _gpu_profile() -> DeviceProfile:
    # The limits an H200 reports (no device needed): the spaces are inferred as on the GPU.
    return DeviceProfile(device="test | H200-like", source="test", max_work_group_size=1024,
                         max_work_item_sizes=(1024, 1024, 64), compute_units=132, local_mem_bytes=49152,
                         global_mem_bytes=140 << 30, max_alloc_bytes=35 << 30, device_type="GPU")


def test_climb_moves_within_the_solver_domains(monkeypatch):
    op = library_operator("sum", {"N": 1 << 22})
    variants = cached_variants(op)
    spaces = Spaces(variants, op.sizes(), _gpu_profile(), seed=0, program=op.program())
    from liftpy.constraints.domains import derive_domains

    # A variant with a parameter whose raw range is large but whose solver domain is small (found, not named
    # by index: the derivation order may change).
    chosen = None
    for i in range(len(variants)):
        counted = spaces.counted(i)
        if counted is None:
            continue
        raw = derive_domains(spaces.space(i))
        if any(len(raw[k]) > 1_000_000 and len(d) < 100 for k, d in counted.plan.search_domains.items()):
            chosen = i
            break
    assert chosen is not None, "no variant of sum with a divisibility-narrowed parameter: the test needs another"
    start = spaces.sample(chosen, 1, 0)[0]
    search = ModelSearch(spaces, 0)
    valid = Spaces.valid
    calls = [0]

    def counting(self, i, config):
        calls[0] += 1
        if calls[0] > MOST_CHECKS:
            raise TooManyChecks(f"the climb checked more than {MOST_CHECKS} configurations")
        return valid(self, i, config)

    monkeypatch.setattr(Spaces, "valid", counting)
    out = search._climb(chosen, dict(start))
    assert set(out) == set(start) and spaces.valid(chosen, out)
