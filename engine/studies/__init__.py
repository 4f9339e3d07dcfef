"""Studies: many independent runs of the engine, as tidy tables, on any executor.

==========================  ==================================  ====================================
module                      study                               paper
==========================  ==================================  ====================================
:mod:`.calibration`         quantile of the true theta among    Cook, Gelman & Rubin 2006; Bernstein
                            draws, KS, coverage, SBC ranks      & Sheldon 2018, Sec. 4; Talts et al.
:mod:`.utility`             unbiased MMD^2 to the confidential   Bernstein & Sheldon 2018, Sec. 4
                            posterior
:mod:`.replicates`          fixed data, R releases per epsilon   Ju, Gong, Awan & Rao 2022, Sec. 4
:mod:`.presets`             the papers' results by name          000, 001, 003, 004
:mod:`.sweep`               every method at every epsilon of a   Ju, Gong, Awan & Rao 2022, Fig. 1a
                            grid, same records (a tidy table)
:mod:`.runner`              executors, seeds, progress, cancel,
                            store and resume
:mod:`.cost`                what a sweep, a study or a preset
                            costs before it starts
==========================  ==================================  ====================================

``python -m engine study`` is :mod:`engine.cli.study`. Every study takes ``executor=`` (any :class:`concurrent.futures.Executor`; default a local
process pool over all cores; ``dask.distributed.Client(address).get_executor()`` for a cluster).
"""
from .calibration import LEVELS, calibration_study, calibration_summary, coverage_table, ecdf, sbc_histogram
from .presets import PRESETS, PresetResult, run_preset, write_preset
from .replicates import epsilon_replicates
from .runner import InlineExecutor, default_executor, load_table, run_units, save_table, spawn_seeds
from .sweep import epsilon_spec, epsilon_sweep, smallest_epsilon_meeting
from .utility import median_bandwidth, mmd2_unbiased, thin_draws

__all__ = [
    "calibration_study", "calibration_summary", "coverage_table", "ecdf", "sbc_histogram", "LEVELS",
    "mmd2_unbiased", "median_bandwidth", "thin_draws",
    "InlineExecutor", "default_executor", "run_units", "save_table", "load_table", "spawn_seeds",
    "epsilon_spec", "epsilon_sweep", "smallest_epsilon_meeting",
    "epsilon_replicates", "run_preset", "write_preset", "PRESETS", "PresetResult",
]
