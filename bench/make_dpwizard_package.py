"""Build tests/fixtures/dpwizard_grade_hours.zip with dp-wizard's own code path (not run by the suite).

dp-wizard 0.10 pins opendp 0.14.2, which conflicts with this project's opendp 0.16.0, so it runs in a
separate virtual environment:

    python3 -m venv /tmp/dpw-venv && /tmp/dpw-venv/bin/pip install dp_wizard==0.10.0
    HOME=/tmp/dpw-home /tmp/dpw-venv/bin/python bench/make_dpwizard_package.py tests/fixtures/dpwizard_grade_hours.zip 1

It does what the results panel's ``package_zip`` does (dp_wizard/shiny/panels/results_panel/__init__.py):
an AnalysisPlan (a 5-bin histogram of ``grade`` with weight 2, a mean of ``hours`` in [0, 40] with weight 1,
epsilon 1, one row per individual), the notebook generated and executed (which releases the statistics
through OpenDP and writes report.csv), the script, the plan's YAML, README, HTML, zipped. The private data
are 400 simulated rows (seed as the second argument); the true counts are printed.
"""
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import polars as pl
from dp_wizard import config_root
from dp_wizard.types import ColumnName, Product, StatisticName
from dp_wizard.utils.code_generators import AnalysisPlan, AnalysisPlanColumn
from dp_wizard.utils.code_generators.notebook_generator import NotebookGenerator
from dp_wizard.utils.code_generators.script_generator import ScriptGenerator
from dp_wizard_templates.converters import convert_from_notebook, convert_to_notebook

out = Path(sys.argv[1]).absolute()
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
work = Path("/tmp/dpw-package-work")
shutil.rmtree(work, ignore_errors=True)
work.mkdir()
rng = np.random.default_rng(seed)
n = 400
data = pl.DataFrame({"grade": rng.integers(0, 100, n), "hours": np.clip(rng.normal(12, 5, n), 0, 40).round(1)})
csv_path = work / "private.csv"
data.write_csv(csv_path)
plan = AnalysisPlan(product=Product.STATISTICS, path=str(csv_path), contributions=1, contributions_entity="Individual",
                    epsilon=1.0, max_rows=10000, groups={},
                    analysis_columns={ColumnName("grade"): [AnalysisPlanColumn(StatisticName("Histogram"), 0, 100, 5, 2)],
                                      ColumnName("hours"): [AnalysisPlanColumn(StatisticName("Mean"), 0, 40, 10, 1)]},
                    schema_columns={ColumnName("grade"): pl.Int64(), ColumnName("hours"): pl.Float64()})
note = "test package"
notebook = convert_to_notebook(NotebookGenerator(plan, note).make_py(), title=str(plan), execute=True)
root = work / "zip-root"
root.mkdir()
stem = plan.get_stem()
(root / "README.txt").write_text(f"# {plan}\n\n{note}\n")
(root / f"{stem}.ipynb").write_text(json.dumps(notebook))
(root / f"{stem}.html").write_text(convert_from_notebook(notebook))
(root / f"{stem}.py").write_text(ScriptGenerator(plan, note).make_py())
(root / f"{stem}.csv").write_text((config_root / "report.csv").read_text())
(root / f"{stem}.yaml").write_text(plan.serialize())
shutil.make_archive(str(out.with_suffix("")), "zip", root_dir=root)
print(stem, data["grade"].cut([0, 20, 40, 60, 80, 100]).value_counts().sort("grade"), data["hours"].mean(), n)
