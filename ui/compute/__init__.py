"""Cached wrappers around the engine: the only place the app calls engine functions that compute.

From the bottom up:

``records``      what the wrappers return (:class:`~ui.compute.records.MethodRun`, ``Prepared``) and the
                 plain form a run is cached in; no streamlit
``progress``     the progress callback that also stops a run, the cache-miss flag, and the handover
                 of a stopped run's work to the session's next run; no streamlit at import
``problems``     validation stages and the prepared-problem cache
``budget``       the server's work budget and the cached cost estimates checked against it
``method_runs``  one method's run, every method of a scenario, the confidential-data posterior
``sweeps``       an epsilon sweep, with Stop and the cells a stopped sweep finished
``files``        files in and out: the CSV upload, the NetCDF and TOML downloads

Errors
    The engine raises ``ValueError`` naming the field; a failed method run is cached as its
    message (``MethodRun.error``) so the page can say why quietly and keep the other methods.
"""
