"""The studies' Python entry points as the README names them (an audit from the analyst's side, 2026-11-28)."""
from __future__ import annotations

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
