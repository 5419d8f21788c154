"""The version of liftpy, in a module of its own so that any layer can record it without importing the package."""

__version__ = "0.1.0"
