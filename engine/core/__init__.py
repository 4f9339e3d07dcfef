"""The engine's ground floor: the records every layer shares and the checks at its boundary.

=====================  ==========================================================================
module                 holds
=====================  ==========================================================================
:mod:`.spec`           ``Spec``, a frozen scenario, and its plain forms (dict, TOML, the file's text)
:mod:`.results`        ``Problem`` (model, mechanism, release) and ``Result`` (draws, stats, info)
:mod:`.validation`     the one error shape: ``<field> = <value> is invalid: <what is allowed>``
:mod:`.chains`         independent chains on threads, progress and stop (``Cancelled``)
:mod:`.data`           confidential records read from CSV, as data only
:mod:`.scenarios`      the demo and the papers' worked examples as spec dicts
=====================  ==========================================================================

Nothing here imports the rest of the engine.
"""
