"""A GPU's profile measured once for the cost model and kept (``liftpy.probe.saved``).

The device here is PoCL on the CPU, which is never probed this way; the GPU is a copy of its description
with another name and type, and its probe the real quick sweeps of the model's probes on PoCL."""

from __future__ import annotations

import dataclasses
import json
import stat

import pytest

from liftpy.host.device import get_device
from liftpy.model.analytical import Machine
from liftpy.probe import saved
from liftpy.probe.saved import MODEL_PROBES, covers_model, device_profile, probe_for_model, saved_path


@pytest.fixture(scope="module")
def measured():
    """The model's probes, run once on this machine's device."""
    return probe_for_model(None)


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("LIFTPY_CACHE_DIR", str(folder))
    monkeypatch.setattr(saved, "_KEPT", {})
    monkeypatch.setattr(saved, "_FAILED", set())
    return folder


def gpu_like(doc):
    """A GPU's description (this device's, renamed) and the document of its probe."""
    info = dataclasses.replace(get_device().info, name="Test GPU 9000", type="GPU")
    doc = {**doc, "device": {**doc["device"], "name": info.name, "type": "GPU"}}
    return info, doc


def test_the_model_probes_measure_what_the_model_reads(measured):
    assert covers_model(measured)
    assert set(measured["probes"]) == set(MODEL_PROBES)
    for name in ("global_bandwidth_gbs", "cache_bandwidth_gbs", "local_bandwidth_gbs", "fp32_gflops", "empty_kernel_us"):
        assert measured["measured"][name]["value"] > 0, name


def test_a_gpu_without_a_profile_is_probed_once_and_kept(measured, fresh):
    info, doc = gpu_like(measured)
    calls, said = [], []

    def probe():
        calls.append(1)
        return doc, ""

    profile = device_profile(info, None, probe, said.append)
    assert len(calls) == 1 and "Test GPU 9000" in said[0] and "kept in" in said[0]
    dram = doc["measured"]["global_bandwidth_gbs"]["value"]
    assert Machine.from_profile(profile).dram_bytes_per_s == pytest.approx(dram * 1e9)
    path = saved_path(info.key)
    assert path.is_file() and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["measured"]["global_bandwidth_gbs"]["value"] == dram
    # Another process (nothing kept in memory) reads the file and probes nothing.
    saved._KEPT.clear()

    def no_probe():
        raise AssertionError("probed again")

    again = device_profile(info, None, no_probe, said.append)
    assert again.measured["global_bandwidth_gbs"] == doc["measured"]["global_bandwidth_gbs"]
    assert len(said) == 1


def test_a_damaged_kept_profile_is_measured_again(measured, fresh):
    info, doc = gpu_like(measured)
    path = saved_path(info.key)
    path.parent.mkdir(parents=True)
    path.write_text('{"schema": "liftpy-device-profile/1", "measured": ')  # cut short
    calls = []
    profile = device_profile(info, None, lambda: (calls.append(1), (doc, ""))[1])
    assert calls == [1] and "global_bandwidth_gbs" in profile.measured
    # A document of another device under this one's name is not this device's either.
    saved._KEPT.clear()
    path.write_text(json.dumps({**doc, "device": {**doc["device"], "name": "another"}}))
    profile = device_profile(info, None, lambda: (calls.append(2), (doc, ""))[1])
    assert calls == [1, 2]
    # Nor is a file that is not a document at all, whether or not jsonschema is there to say so.
    for junk in ("[]", "null", '{"probes": {"a": 1}}', '{"device": {}, "measured": {}, "probes": {"a": 1}}'):
        saved._KEPT.clear()
        path.write_text(junk)
        assert saved.saved_document(info.key) is None


def test_a_failed_probe_is_said_once_and_the_guesses_stay(measured, fresh):
    info, doc = gpu_like(measured)
    partial = {**doc, "probes": {**doc["probes"], "buffer_bandwidth": {"status": "failed", "seconds": 0.1,
                                                                      "measured": [], "curves": [], "reason": "no memory"}}}
    for outcome, reason in (((None, "timeout: 120 s"), "timeout: 120 s"), ((partial, ""), "buffer_bandwidth: no memory")):
        saved._FAILED.clear()
        said, calls = [], []
        profile = device_profile(info, None, lambda: (calls.append(1), outcome)[1], said.append)
        assert profile.measured == {} and "failed" in said[0] and reason in said[0]
        # The same process does not try again (a network's every layer opens the device).
        assert device_profile(info, None, lambda: (calls.append(1), outcome)[1], said.append).measured == {}
        assert calls == [1] and len(said) == 1
    assert not saved_path(info.key).exists()


def test_only_the_measurements_of_a_kept_profile_are_applied(measured, fresh):
    """The limits stay what the driver reports of this very device: a kept document's reported limits (of
    another device of the same name and driver) are not applied."""
    info, doc = gpu_like(measured)
    other = {**doc, "reported": {**doc["reported"], "max_work_group_size": 7}, "limits": {"local_mem_bytes": 3}}
    profile = device_profile(info, None, lambda: (other, ""))
    assert profile.max_work_group_size == info.max_work_group_size and profile.local_mem_bytes == info.local_mem_bytes
    assert profile.measured["global_bandwidth_gbs"] == doc["measured"]["global_bandwidth_gbs"]


def test_a_profile_file_and_a_cpu_device_are_not_probed(measured, fresh, tmp_path):
    info, doc = gpu_like(measured)

    def no_probe():
        raise AssertionError("probed")

    given = tmp_path / "given.json"
    given.write_text(json.dumps({**doc, "measured": {"global_bandwidth_gbs": {"value": 123.0}}}))
    assert device_profile(info, str(given), no_probe).measured["global_bandwidth_gbs"]["value"] == 123.0
    cpu = get_device().info
    assert cpu.on_host_cpu
    assert device_profile(cpu, None, no_probe).measured == {}


def test_the_measuring_worker_runs_the_probe_with_its_own_time_limit():
    """``explore.devices``' probe: a task of the worker that owns the device, limited to ``PROBE_TIMEOUT_S``;
    a probe that ran out of time comes back as the reason, not as an error of the exploration."""
    from liftpy.explore.devices import _probe
    from liftpy.probe.saved import PROBE_TIMEOUT_S
    from liftpy.results.store import Status
    from liftpy.runtime.pool import Outcome

    class Worker:
        def __init__(self, outcome):
            self.outcome, self.tasks = outcome, []

        def run(self, task):
            self.tasks.append(task)
            return self.outcome

    ok = Worker(Outcome(Status.OK, result={"doc": 1}))
    assert _probe(ok, 3) == ({"doc": 1}, "")
    (task,) = ok.tasks
    assert task.fn is probe_for_model and task.args == (3,) and task.timeout_s == PROBE_TIMEOUT_S
    late = Worker(Outcome(Status.TIMEOUT, message="Traceback ...\nran past its time limit of 120 s"))
    assert _probe(late, 0) == (None, "timeout: ran past its time limit of 120 s")
