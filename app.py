"""DP Posterior Lab: the router. Pages live in pages/, helpers in ui/, computation in engine/."""
import streamlit as st

from ui.routing import routed

st.set_page_config(page_title="DP Posterior Lab", page_icon=":material/lock:", layout="wide")

pages = [
    st.Page("pages/compare.py", title="Compare methods", icon=":material/compare:", default=True),
    st.Page("pages/privacy_budget.py", title="Privacy budget", icon=":material/tune:"),
    st.Page("pages/diagnostics.py", title="Diagnostics", icon=":material/monitor_heart:"),
    st.Page("pages/learn.py", title="Learn", icon=":material/school:"),
    st.Page("pages/calibration.py", title="Calibration", icon=":material/verified:"),
]
page = st.navigation(pages)
with routed():
    page.run()
