"""Moved to :mod:`engine.methods.ops` (one module per algorithm); this alias keeps old imports working."""
from .methods.ops import *  # noqa: F401,F403
from .methods.ops import __all__  # noqa: F401
