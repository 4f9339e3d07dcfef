"""The one style the app adds to Streamlit's: a focus ring a keyboard user can see.

Streamlit marks the focused sidebar link with the grey it also gives the current page and a hovered link, and a
focused help icon with a faint glow; a keyboard user tabbing through the sidebar could not tell where they were
(phone and accessibility audit, WCAG 2.4.7). Every focused element now gets a 3 px outline in a blue at 3.5:1 or
more against the light theme's white and grey and the dark theme's near-blacks (WCAG 1.4.11), outside the element
so that it hides nothing. ``:focus-visible``: a mouse click on a button or a link draws no ring (a text box, where
the caret is, shows it as it shows Streamlit's own focus border)."""
from __future__ import annotations

import streamlit as st

__all__ = ["FOCUS_RING", "FOCUS_CSS", "add_focus_ring"]

FOCUS_RING = "#2f7ee8"
#: a text box's or a select box's own <input> sits inside a box that clips its outline: the box gets the ring, the
#: input none (a clipped sliver of it showed at the select box's edge)
_BOXES = ("[data-testid='stTextInputRootElement']", "[data-testid='stTextAreaRootElement']",
          "[data-testid='stSelectbox'] > div > div", "[data-testid='stMultiSelect'] > div > div")
FOCUS_CSS = ("<style>"
             + ", ".join([":focus-visible"] + [f"{box}:focus-within" for box in _BOXES])
             + f" {{ outline: 3px solid {FOCUS_RING} !important; outline-offset: 2px !important; }} "
             + ", ".join(f"{box} :focus-visible" for box in _BOXES) + " { outline: none !important; }</style>")


def add_focus_ring() -> None:
    """Add :data:`FOCUS_CSS` to the page (a style alone takes no room in the layout)."""
    st.html(FOCUS_CSS)
