"""Running an exploration's points in isolated processes, on this machine or on Ray.

* ``pool``: ``WorkerPool`` running ``Task`` s (a module-level function, passed by reference, and its
  arguments) in worker processes with time limits, each ending in an ``Outcome``; ``OnDemandPool`` starts
  one only when enough work comes at once;
* ``process``: a worker process's side: its body, its start without Ctrl-C, ``classify`` of a failed task;
* ``points``: the tasks a worker runs on a point (generate its kernels, build them, measure and validate);
* ``evaluate``: compile workers and one measuring worker overlapped over a batch of points;
* ``cluster``: device workers on Ray, one per device, for one exploration over several devices.
"""

from .pool import OnDemandPool, Outcome, Task, WorkerPool
from .process import classify, quiet_context, uncached_imports

__all__ = ["OnDemandPool", "Outcome", "Task", "WorkerPool", "classify", "quiet_context", "uncached_imports"]
