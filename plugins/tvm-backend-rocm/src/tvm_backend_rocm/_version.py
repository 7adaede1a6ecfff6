"""The distribution's version (read by the package and by its plugin)."""

__version__ = "0.1.0"
