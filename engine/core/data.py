"""Confidential records from a CSV file (privatizing them is :func:`engine.mechanisms.release.privatize`).

CSV files are parsed as data only (no pickle, no eval): bytes must be UTF-8, there must be a header
row and at least one record, every cell of the chosen column must be a number, column names must
be unique, and the file may hold at most ``MAX_RECORDS`` records and ``MAX_BYTES`` bytes. Blank lines are
skipped and counted (:class:`CsvRecords`); a missing value (an empty cell, ``NA``, ``NaN``, ...) is refused with
what to do about it.

Around the reading, what an upload's page says about a file before anything runs: its columns, those that hold
numbers first (:func:`csv_columns`), and how many records lie outside a clamp's bounds (:func:`outside`).
"""
from __future__ import annotations

import csv
import io
import math
import os

import numpy as np

from dataclasses import dataclass

from .validation import fail

__all__ = ["load_records_csv", "read_records_csv", "csv_columns", "outside", "CsvRecords", "CsvColumns", "Outside",
           "MAX_RECORDS", "MAX_BYTES"]

#: The most records a dataset may have, everywhere: a CSV file, a typed n, a link's n (``engine.models.MAX_N``
#: is this number), so one limit holds whatever way the records arrive.
MAX_RECORDS = 10_000_000
MAX_BYTES = 50 * 1024 * 1024

#: cells that stand for a missing value (compared lower-case): refused with what to do instead of "not a number"
MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "missing", "-", "?", "."})
_MISSING_HELP = ("missing values are not supported: drop the rows that hold them (which changes n) or fill them in "
                 "with a value")


@dataclass(frozen=True)
class CsvRecords:
    """The records of a CSV file, what :func:`load_records_csv` returns, with what was skipped to read them."""

    records: np.ndarray
    blank_lines: int = 0  # blank lines skipped between the records (not counted in n)
    columns: tuple[str, ...] = ()  # the file's header


@dataclass(frozen=True)
class CsvColumns:
    """A file's header: ``numeric`` the columns whose every cell is a number, in the file's order."""

    columns: tuple[str, ...]
    numeric: tuple[str, ...]

    @property
    def ordered(self) -> tuple[str, ...]:
        """The columns with numbers first, then the others, each in the file's order."""
        return self.numeric + tuple(c for c in self.columns if c not in self.numeric)


@dataclass(frozen=True)
class Outside:
    """How many of ``n`` records lie below ``lo`` or above ``hi`` (a clamp's bounds), and the records' range."""

    n: int
    below: int
    above: int
    lo: float | None
    hi: float | None
    min: float
    max: float

    @property
    def count(self) -> int:
        return self.below + self.above


def outside(records, lo: float | None = None, hi: float | None = None) -> Outside:
    """How many ``records`` (a 1-D array) a clamp to ``[lo, hi]`` changes; a bound of None is no bound."""
    r = np.asarray(records, dtype=float).ravel()
    below = int(np.count_nonzero(r < lo)) if lo is not None else 0
    above = int(np.count_nonzero(r > hi)) if hi is not None else 0
    return Outside(n=int(r.size), below=below, above=above, lo=lo, hi=hi,
                   min=float(r.min()) if r.size else math.nan, max=float(r.max()) if r.size else math.nan)


def load_records_csv(source, column: str | list | None = None, field: str = "data.csv") -> np.ndarray:
    """Records from a CSV file path, its bytes or an open file object; returns a 1-D float array. Cells are
    separated by commas, or by semicolons or tabs where the header has no comma (:func:`_delimiter`).

    ``column`` picks a column by name; without it the file must have exactly one column. A list of
    names (multi-column records, e.g. ``y, x1..xK``) returns a 2-D array with those columns in order.
    """
    return read_records_csv(source, column, field).records


def csv_columns(source, field: str = "data.csv") -> CsvColumns:
    """The header of a CSV file (path or bytes) and the columns whose every cell is a number (as
    :func:`read_records_csv` reads them), for a choice of column; the file's rules are checked as there."""
    text, label = _text(source, field)
    delimiter = _delimiter(text)
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = _header(reader, field)
    ok = [True] * len(header)
    for row in reader:
        if _blank(row):
            continue
        for i in range(len(header)):
            if ok[i]:
                cell = row[i].strip() if i < len(row) else ""
                try:
                    ok[i] = math.isfinite(float(cell.replace(",", ".") if delimiter == ";" else cell))
                except ValueError:
                    ok[i] = False
    return CsvColumns(columns=tuple(header), numeric=tuple(h for h, good in zip(header, ok) if good))


def read_records_csv(source, column: str | list | None = None, field: str = "data.csv") -> CsvRecords:
    """:func:`load_records_csv` with what it skipped: the number of blank lines, and the file's header."""
    text, label = _text(source, field)
    delimiter = _delimiter(text)
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = _header(reader, field)
    multi = isinstance(column, (list, tuple))
    if multi:
        missing = [c for c in column if c not in header]
        if missing:
            fail(f"{field} header", header, f"must have the columns {', '.join(column)} (missing {missing[0]})")
        idxs = [header.index(c) for c in column]
    elif column is None:
        if len(header) != 1:
            fail("data.column", None, f"is required: the file has columns {', '.join(header)}; name the one with the "
                                    "records")
        idxs = [0]
    else:
        if column not in header:
            fail("data.column", column, f"must be one of the file's columns {', '.join(header)}")
        idxs = [header.index(column)]
    values = []
    blank_lines = 0
    for row in reader:  # streamed, so an oversized file is refused as soon as it passes the limit
        if _blank(row):
            blank_lines += 1
            continue
        if len(values) == MAX_RECORDS:
            fail(field, label, f"has more than {MAX_RECORDS:,} records; at most {MAX_RECORDS:,} are allowed")
        vals = []
        for idx in idxs:
            cell = row[idx].strip() if idx < len(row) else ""
            where = f"{field} line {reader.line_num} column {header[idx]!r}"
            missing = cell.lower() in MISSING
            try:  # with ';' between cells (a spreadsheet's export where the comma is the decimal mark), 0,5 is 0.5
                v = float(cell.replace(",", ".") if delimiter == ";" else cell)
            except ValueError:
                fail(where, cell, "must be a number" + (f"; {_MISSING_HELP}" if missing else ""))
            if not math.isfinite(v):
                fail(where, cell, "must be a finite number" + (f"; {_MISSING_HELP}" if missing else ""))
            vals.append(v)
        if len(row) != len(header):  # a short or long row (after its cells: an empty one says what is missing)
            fail(f"{field} line {reader.line_num}", delimiter.join(row), f"must have {len(header)} cells, one per "
                 f"column of the header ({delimiter.join(header)}); it has {len(row)}")
        values.append(vals if multi else vals[0])
    if not values:
        fail(field, label, "has a header but no records; it needs at least one record")
    return CsvRecords(records=np.asarray(values), blank_lines=blank_lines, columns=tuple(header))


def _text(source, field: str) -> tuple[str, str]:
    """The file's text (UTF-8, BOM dropped) and how messages name it: its path, or "uploaded file" (bytes, or a file
    object without a name)."""
    if isinstance(source, (bytes, bytearray)):
        raw = bytes(source)
        label = "uploaded file"
    elif callable(getattr(source, "read", None)):  # an open file or io.StringIO / BytesIO: read as data, like bytes
        raw = source.read(MAX_BYTES + 1)
        raw = raw.encode("utf-8") if isinstance(raw, str) else raw
        if not isinstance(raw, (bytes, bytearray)):
            fail(field, type(source).__name__, "must be a file object whose read() gives text or bytes")
        label = str(getattr(source, "name", "uploaded file"))
    elif not isinstance(source, (str, os.PathLike)):
        fail(field, source, "must be a CSV file's path, its bytes, or an open file object")
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
    return text, label


def _header(reader, field: str) -> list[str]:
    """The first non-blank row, stripped; column names must be unique."""
    header = next((row for row in reader if not _blank(row)), None)
    header = [h.strip() for h in header or []]
    if len(set(header)) != len(header):
        dup = next(h for h in header if header.count(h) > 1)
        fail(f"{field} header", dup, "column names must be unique")
    return header


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
