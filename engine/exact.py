"""Moved to :mod:`engine.methods.exact` (one module per algorithm); this alias keeps old imports working."""
from .methods.exact import *  # noqa: F401,F403
from .methods.exact import __all__  # noqa: F401
