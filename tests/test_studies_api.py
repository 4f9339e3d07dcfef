"""The studies' Python entry points as the README names them (an audit from the analyst's side, 2026-11-28)."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import engine.studies

ROOT = Path(__file__).resolve().parents[1]


def _readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_every_studies_function_the_readme_names_is_exported():
    """README: "In Python: `engine.studies.calibration_study(...)`, `epsilon_replicates`, `run_preset`": the last
    two raised AttributeError (they lived only in engine.studies.replicates and engine.studies.presets)."""
    section = _readme_section("Studies")
    sentence = section[section.index("In Python:"):]
    sentence = sentence[:sentence.index(". ")]
    names = {m.split("(")[0].removeprefix("engine.studies.") for m in re.findall(r"`([^`]+)`", sentence)}
    assert {"calibration_study", "epsilon_replicates", "run_preset"} <= names, sentence
    from engine.studies import presets, replicates

    for name in names:
        assert name in engine.studies.__all__ and callable(getattr(engine.studies, name)), name
    assert engine.studies.run_preset is presets.run_preset
    assert engine.studies.epsilon_replicates is replicates.epsilon_replicates


def test_the_studies_modules_import_in_any_order():
    """No import circle through the package's new exports: each module imports first in a fresh interpreter."""
    for module in ("engine.studies.presets", "engine.studies.replicates", "engine.studies.cost", "engine.studies"):
        done = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT, capture_output=True, text=True,
                              timeout=300, env=None)
        assert done.returncode == 0, (module, done.stderr[-2000:])


SCRIPT = """import sys
import engine.studies as st

spec = {"seed": 1, "model": {"name": "beta_binomial", "n": 30}, "mechanism": {"name": "laplace", "epsilon": 1.0},
        "data": {"simulate": {"theta": 0.3}}}
table = st.calibration_study(spec, ["naive", "exact"], 5, workers=1)
table.to_csv(sys.argv[1], index=False)
"""


def test_workers_1_runs_in_a_plain_script_without_a_main_guard(tmp_path):
    """A script without ``if __name__ == "__main__":`` (the README's Python form) crashed with ~84 lines of
    BrokenProcessPool: even workers=1 started a spawn pool, whose child re-ran the script. workers=1 now runs in the
    calling process; its table is the pool's, and the docstring says when the guard is needed."""
    import pandas as pd
    from engine.studies import calibration_study, default_executor

    script = tmp_path / "study.py"
    script.write_text(SCRIPT)
    out = tmp_path / "table.csv"
    done = subprocess.run([sys.executable, str(script), str(out)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "BrokenProcessPool" not in done.stderr
    ns: dict = {}
    exec(SCRIPT.split("table =")[0].replace("import sys\n", ""), ns)
    pool = default_executor(2)
    try:
        pooled = calibration_study(ns["spec"], ["naive", "exact"], 5, executor=pool)
    finally:
        pool.shutdown()
    script_table = pd.read_csv(out, keep_default_na=False, na_values=[""])
    expected = pd.read_csv(io.StringIO(pooled.to_csv(index=False)), keep_default_na=False,
                           na_values=[""])
    pd.testing.assert_frame_equal(script_table, expected)
    doc = calibration_study.__doc__
    assert "spawn" in doc and '__name__ == "__main__"' in doc and "workers=1" in doc
