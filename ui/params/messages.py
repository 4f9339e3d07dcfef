"""The engine's errors in the sidebar's words: the box's label, what is allowed, and what was entered.

The engine speaks in spec fields (``mechanism.epsilon = 0.0 is invalid: must be a finite number > 0``),
which is right for a spec file and the command line but means nothing to someone who typed into a
box labelled "ε (epsilon)". :func:`in_words` rewrites a message of that shape as
``ε (epsilon) must be a finite number > 0 (you entered 0)``, a record of an uploaded file as its line
(``Line 4 of the uploaded file (record 3) …``), and leaves any other message as it is. Pure.
"""
from __future__ import annotations

import re

from figures.labels import METHOD_LABELS, MODEL_LABELS, PRIOR_LABELS

__all__ = ["FIELD_LABELS", "CLAMP_LABEL", "in_words", "readable", "why_not_run"]

#: spec field -> the sidebar label of the box that holds it
FIELD_LABELS = {
    "model.n": "n (number of confidential records)",
    **{f"model.{k}": v for k, v in PRIOR_LABELS.items()},
    "model.class_levels": "classes I", "model.feature_levels": "levels of each feature",
    "model.alpha": "Dirichlet prior α", "model.p": "predictors p", "model.sigma": "noise sd σ",
    "model.x_mean": "predictor mean m", "model.x_cov": "predictor covariance Σ", "model.lo": "clamp low",
    "model.hi": "clamp high", "model.prior_sd": "prior sd", "model.upper": "clamp records at",
    "model.sigma_prior.a": "σ² prior a (shape)", "model.sigma_prior.b": "σ² prior b (scale)",
    "model.n_prior.mean": "prior mean of n", "model.n_prior.dispersion": "dispersion r",
    "model.n_prior": "prior on n",
    "mechanism.epsilon": "ε (epsilon)", "mechanism.delta": "δ (delta)", "mechanism.rho": "ρ (rho, zCDP)",
    "mechanism.sensitivity": "sensitivity Δ", "mechanism.truth_prob": "P(first coin says: answer truthfully)",
    "mechanism.scale": "noise scale", "mechanism.sigma": "noise sd",
    # a release made with a library: its boxes are labelled with the library's own parameter names
    "release.library": "How was it released?", "release.mechanism": "Library mechanism",
    **{f"release.{k}": k for k in ("domain", "scale", "k", "sensitivity", "clip", "epsilon", "delta", "lower",
                                    "upper", "value0", "value1")},
    "n_mechanism.epsilon": "ε for n", "n_mechanism.scale": "noise scale on n",
    "data.s_dp": "Released s_dp", "data.n_dp": "Released n_dp", "data.column": "Column",
    "data.simulate": "True parameters", "seed": "Seed",
    "method.chains": "chains", "method.draws": "draws", "method.warmup": "warmup",
    "method.max_seconds": "ABC: stop after (seconds)", "method.max_proposals": "ABC: at most this many proposals",
    "method.k": "OPS: number of released samples k",
}
_SHAPE = re.compile(r"^(?P<field>[A-Za-z_][\w.\[\]]*(?: line \d+)?(?: column '?[^=']*'?)?(?: record \d+)?"
                    r"(?: header)?) = "
                    r"(?P<value>.*?) "
                    r"is invalid: (?P<allowed>.*)$", re.S)
_RECORD = re.compile(r"^data\.(?:records|csv)(?: column (?P<col>\w+))? record (?P<k>\d+)$")
_LINE = re.compile(r"^data\.csv line (?P<line>\d+)(?: column '?(?P<col>[^']*)'?)?$")
_TRUTH = re.compile(r"^data\.simulate\.(?P<name>\w+)(?P<index>(?:\[\d+\])*)$")


def _value(text: str) -> str:
    """A value as the person typed it: no quotes, whole floats without ``.0``; a list without its brackets and, where
    it has several numbers, with how many ("17 numbers: 0, 1, 2, 3, 4, …, 15, 16"): a release of the wrong length
    said what was typed but not how much of it, which is what the message is about. Nothing (None, an empty text)
    is "nothing"."""
    text = text.strip()
    if text in ("None", "''", '""'):  # nothing chosen or typed (``data.column = None``): no Python words
        return "nothing"
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text.startswith("[") and text.endswith("]") and "[" not in text[1:-1]:  # a flat list: typed "3, 4"
        items = [t.strip() for t in text[1:-1].split(",")]
        shown = items if len(items) <= 12 else items[:5] + ["…"] + items[-2:]  # a long release: its ends
        text = ", ".join(shown) if len(items) < 2 else f"{len(items)} numbers: " + ", ".join(shown)
    return re.sub(r"(?<![\d.])(-?\d+)\.0(?![\d])", r"\1", text)


_MODELS = re.compile(r"\b(" + "|".join(MODEL_LABELS) + r")\b")


_KEYS = re.compile(r"\b(?:model|mechanism|method|data)\.[a-z_]+\b")


def readable(allowed: str) -> str:
    """An engine sentence (what is allowed, why something is not computed) for people: ≥ and ≤, thousands
    separators, a model's name instead of its key, a box's label instead of the spec field it sets."""
    allowed = allowed.replace(">=", "≥").replace("<=", "≤")
    allowed = re.sub(r"(?<![\d.,])\d{5,}(?![\d.])", lambda m: f"{int(m[0]):,}", allowed)
    allowed = _KEYS.sub(lambda m: FIELD_LABELS.get(m[0], m[0]), allowed)  # "greater than model.lo": its box
    return _MODELS.sub(lambda m: MODEL_LABELS[m[0]].split(" (")[0], allowed)


def in_words(message: str) -> str:
    """``message`` (the engine's ``<field> = <value> is invalid: <allowed>``) in the sidebar's words."""
    m = _SHAPE.match(message.strip())
    if not m:
        return message
    field, value, allowed = m["field"], _value(m["value"]), readable(m["allowed"].strip())
    record = _RECORD.match(field)
    if record:
        k = int(record["k"])
        column = f", column {record['col']}" if record["col"] else ""
        where = f"Line {k + 1} of the uploaded file (record {k}{column}"
        return f"{where}) holds {value}: {allowed.rstrip('.')}."
    line = _LINE.match(field)
    if line:
        where = f"Line {line['line']} of the uploaded file" + (f" (column {line['col']})" if line["col"] else "")
        return f"{where} holds {value}: {allowed.rstrip('.')}."
    if field in ("data.csv", "data.records", "data.csv header"):
        thing = "The uploaded file's header" if field.endswith("header") else "The uploaded file"
        return f"{thing} {allowed if allowed.startswith(('is ', 'must ', 'needs ', 'has ')) else 'is not usable: ' + allowed}"
    truth = _TRUTH.match(field)
    symbols = {"theta": "θ (theta)", "lam": "λ (lam)", "mu": "μ (mu)", "beta": "coefficients β", "pi": "class probabilities π",
               "p": "probabilities p"}
    label = FIELD_LABELS.get(field) or (f"True {symbols.get(truth['name'], truth['name'])}" if truth else field)
    if truth and truth["index"]:  # one row of the log-linear model's p (``p[k][i]``): which row, in the sidebar's words
        where = [int(i) for i in re.findall(r"\d+", truth["index"])]
        row = f" (the levels of x{where[0] + 1} given y = {where[1]})" if truth["name"] == "p" and len(where) == 2 \
            else ""
        label += f", row {truth['name']}{truth['index']}{row}"
    verb = allowed if allowed.startswith(("must ", "needs ", "is ", "takes ", "has ", "makes ", "lies ", "spreads ")) \
        else f"is not allowed: {allowed}"
    return f"{label} {verb} (you entered {value})."


#: a method's refusal "… is invalid for <method>: <why>", the <why> said to the person at the sidebar
_NOT_FOR = re.compile(r"^[A-Za-z_][\w.\[\]]*(?: = .*?)? is invalid for (?P<what>[^:]+): (?P<why>.*)$", re.S)
#: the sidebar's checkbox that bounds poisson_gamma's records (ui.sidebar.model; the spec's model.upper), as every
#: sentence that asks for it names it
CLAMP_LABEL = "Clamp records (bounded sensitivity)"
#: "set <field>" in a refusal, where the box that sets the field is not simply there to fill
_SET = {"model.upper": f"tick “{CLAMP_LABEL}” in the sidebar"}
#: method keys that are not also English words ("exact", "naive", "auto" are read as words)
_METHODS = re.compile(r"\b(" + "|".join(k for k in sorted(METHOD_LABELS, key=len, reverse=True)
                                         if "_" in k or k in ("ops", "mcem", "rjmcmc")) + r")\b")


def why_not_run(message: str) -> str:
    """Why a method has no result, for the line under Compare's figure: a method's refusal
    (``model.upper = None is invalid for ops: OPS needs bounded records (set model.upper)``) as its reason in the
    sidebar's words ("OPS needs bounded records (tick “Clamp records (bounded sensitivity)” in the sidebar)"), a
    box's bad value as :func:`in_words` says it, method keys as the pages name the methods."""
    m = _NOT_FOR.match(message.strip())
    if m is None:
        text = in_words(message)
    else:
        text = m["why"].strip()
        for field, hint in _SET.items():
            text = text.replace(f"set {field}", hint)
        text = readable(text)
        text = text[:1].upper() + text[1:]
    return _METHODS.sub(lambda k: METHOD_LABELS[k[0]], text)
