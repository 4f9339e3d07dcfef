"""Confidential records from a CSV file (privatizing them is :func:`engine.mechanisms.release.privatize`).

CSV files are parsed as data only (no pickle, no eval): bytes must be UTF-8, there must be a header
row and at least one record, every cell of the chosen column must be a number, column names must
be unique, and the file may hold at most ``MAX_RECORDS`` records and ``MAX_BYTES`` bytes.
"""
from __future__ import annotations

import csv
import io
import math
import os

import numpy as np

from .validation import fail

__all__ = ["load_records_csv", "MAX_RECORDS", "MAX_BYTES"]

#: The most records a dataset may have, everywhere: a CSV file, a typed n, a link's n (``engine.models.MAX_N``
#: is this number), so one limit holds whatever way the records arrive.
MAX_RECORDS = 10_000_000
MAX_BYTES = 50 * 1024 * 1024


def load_records_csv(source, column: str | list | None = None, field: str = "data.csv") -> np.ndarray:
    """Records from a CSV file path or its bytes; returns a 1-D float array. Cells are separated by commas, or
    by semicolons or tabs where the header has no comma (:func:`_delimiter`).

    ``column`` picks a column by name; without it the file must have exactly one column. A list of
    names (multi-column records, e.g. ``y, x1..xK``) returns a 2-D array with those columns in order.
    """
    if isinstance(source, (bytes, bytearray)):
        raw = bytes(source)
        label = "uploaded file"
    else:
        if not os.path.isfile(source):
            fail(field, source, "must be an existing CSV file")
        if os.path.getsize(source) > MAX_BYTES:
            fail(field, source, f"must be at most {MAX_BYTES // (1024 * 1024)} MB")
        with open(source, "rb") as fh:
            raw = fh.read()
        label = source
    if len(raw) > MAX_BYTES:
        fail(field, label, f"must be at most {MAX_BYTES // (1024 * 1024)} MB (got {len(raw) / 1e6:.1f} MB)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        fail(field, label, f"must be UTF-8 text; byte {exc.start} is not")
    if not text.strip():
        fail(field, label, "is empty; it needs a header row and at least one record")
    delimiter = _delimiter(text)
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = None
    for row in reader:
        if _blank(row):
            continue
        header = [h.strip() for h in row]
        break
    if len(set(header)) != len(header):
        dup = next(h for h in header if header.count(h) > 1)
        fail(f"{field} header", dup, "column names must be unique")
    multi = isinstance(column, (list, tuple))
    if multi:
        missing = [c for c in column if c not in header]
        if missing:
            fail(f"{field} header", header, f"must have the columns {', '.join(column)} (missing {missing[0]})")
        idxs = [header.index(c) for c in column]
    elif column is None:
        if len(header) != 1:
            fail("data.column", None, f"is required: the file has columns {header}; name the one with the records")
        idxs = [0]
    else:
        if column not in header:
            fail("data.column", column, f"must be one of the file's columns {header}")
        idxs = [header.index(column)]
    values = []
    for row in reader:  # streamed, so an oversized file is refused as soon as it passes the limit
        if _blank(row):
            continue
        if len(values) == MAX_RECORDS:
            fail(field, label, f"has more than {MAX_RECORDS:,} records; at most {MAX_RECORDS:,} are allowed")
        vals = []
        for idx in idxs:
            cell = row[idx].strip() if idx < len(row) else ""
            where = f"{field} line {reader.line_num} column {header[idx]!r}"
            try:  # with ';' between cells (a spreadsheet's export where the comma is the decimal mark), 0,5 is 0.5
                v = float(cell.replace(",", ".") if delimiter == ";" else cell)
            except ValueError:
                fail(where, cell, "must be a number")
            if not math.isfinite(v):
                fail(where, cell, "must be a finite number")
            vals.append(v)
        values.append(vals if multi else vals[0])
    if not values:
        fail(field, label, "has a header but no records; it needs at least one record")
    return np.asarray(values)


def _delimiter(text: str) -> str:
    """The cell separator, read off the header line: a comma, or where the header has none, a semicolon (the
    export of spreadsheets whose decimal mark is the comma) or a tab. A one-column file has none: a comma."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    if "," in first:
        return ","
    if ";" in first:
        return ";"
    return "\t" if "\t" in first else ","


def _blank(row) -> bool:
    """Blank lines are skipped; a line with empty cells is a record whose cells must be numbers."""
    return not row or (len(row) == 1 and not row[0].strip())
