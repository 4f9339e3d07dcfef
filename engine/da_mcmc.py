"""Moved to :mod:`engine.methods.da_mcmc` (one module per algorithm); this alias keeps old imports working."""
from .methods.da_mcmc import *  # noqa: F401,F403
from .methods.da_mcmc import __all__  # noqa: F401
