"""The liftpy IR: types, expressions, primitives, type checking, the interpreter and the text form."""

from . import sugar  # noqa: F401 - the Python syntax on IR objects, installed before any of them is used
