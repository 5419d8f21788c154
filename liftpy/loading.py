"""Loading what a user names as ``module:attribute`` or ``path/file.py:attribute``: a program, a baseline.

A file is imported under a name of its own (its path's hash), and what it defines travels to worker processes
by value (cloudpickle), since workers cannot import it by that name.  A module name is imported as Python
would from the current folder (which a console script, unlike ``python -m``, does not put on the path)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path

from .errors import InputError, LiftError


def load_module(name: str):
    """The module ``name`` (a dotted module name, or a path ending in ``.py``); an InputError saying why not."""
    try:
        if name.endswith(".py"):
            path = Path(name)
            if not path.is_file():
                raise InputError(f"no such file: {name}")
            unique = "liftpy_user_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
            if unique in sys.modules:
                return sys.modules[unique]
            spec = importlib.util.spec_from_file_location(unique, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[unique] = module
            import cloudpickle  # (only files need it: what they define is pickled by value)

            cloudpickle.register_pickle_by_value(module)
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[unique]
                raise
            return module
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.append(os.getcwd())
        return importlib.import_module(name)
    except LiftError:
        raise
    except Exception as e:  # noqa: BLE001 - the user's module may raise anything while importing
        raise InputError(f"cannot import {name}: {type(e).__name__}: {e}") from None


def load_attribute(spec: str, what: str = "function"):
    """``module:attribute`` or ``file.py:attribute`` -> the attribute; an InputError naming what is missing."""
    module_name, sep, attribute = spec.rpartition(":")
    if not sep or not module_name or not attribute.isidentifier():
        raise InputError(f"{spec!r} is not module:{what} or file.py:{what}")
    module = load_module(module_name)
    if not hasattr(module, attribute):
        raise InputError(f"{module_name} has no {attribute}")
    return getattr(module, attribute)
