"""Widget values as one frozen record, and its two outside forms: the engine's spec dict and the URL.

Nothing in this package imports streamlit; tests call its functions directly. What each choice is
called in words is :mod:`figures.labels`. From the bottom up:

``scenario``  the :class:`~ui.params.scenario.Scenario` record and the choices its fields take
``parsing``   text typed into a box -> numbers, a matrix, a budget grid (errors name the spec field)
``defaults``  the defaults that follow from the model and its prior (true parameters, CSV columns)
``spec``      Scenario -> the engine's spec dict
``query``     Scenario <-> the URL query string of a shared link
"""
