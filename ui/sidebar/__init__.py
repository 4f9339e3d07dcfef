"""The scenario sidebar shared by the Compare, Privacy budget and Diagnostics pages.

:func:`ui.sidebar.inputs.scenario_inputs` renders the widgets, reads them into a frozen
:class:`~ui.params.scenario.Scenario`, validates it in the order a reader fills it in (model, mechanism,
data, methods) through the engine, and puts each ``ValueError`` message in an ``st.error`` directly
under the section whose field it names. The widgets keep what the user typed; only the results wait
for a valid input.

State: the canonical scenario lives in ``st.session_state[keys.SCENARIO]``; widget keys are seeded
from it when missing (first visit, after a page switch, after a preset), and the scenario is
mirrored into the URL query string so a copied link reopens it (:mod:`ui.sidebar.state`).

From the bottom up:

``state``        the canonical scenario, the widgets seeded from it, the URL mirrored from it
``model``, ``size``, ``mechanism``, ``data``, ``methods``
                 one section of widgets each, in the order they are drawn
``release``      "How was it released?" and a library's form (inside the mechanism section)
``dpwizard``     a dp-wizard package's statistics to load (inside the data section)
``validation``   the scenario through the engine, each message assigned to its section
``inputs``       the sidebar as a whole: what a page calls
``controls``     what acts on the sidebar's state from a page: Stop / Run again, "use settings that fit"

Underscore names (the sections, the seeding) are shared by the modules of this package only.
"""
