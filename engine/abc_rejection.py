"""Moved to :mod:`engine.methods.abc_rejection` (one module per algorithm); this alias keeps old imports working."""
from .methods.abc_rejection import *  # noqa: F401,F403
from .methods.abc_rejection import __all__  # noqa: F401
