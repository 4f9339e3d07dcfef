"""DP Posterior Lab: the router. Pages live in pages/, helpers in ui/, computation in engine/.

``streamlit run app.py`` finds ``app`` below (an ``st.App``) and serves it; its lifespan warms the
engine once per server process before the server reports healthy (ui/warmup.py). Every session then
runs this file as its script (``__name__ == "__main__"``): the router.
"""
import streamlit as st

if __name__ == "__main__":
    from ui.routing import routed
    from ui.style import add_focus_ring

    st.set_page_config(page_title="DP Posterior Lab", page_icon=":material/lock:", layout="wide")
    add_focus_ring()

    pages = [
        st.Page("pages/compare.py", title="Compare methods", icon=":material/compare:", default=True),
        st.Page("pages/privacy_budget.py", title="Privacy budget", icon=":material/tune:"),
        st.Page("pages/protection.py", title="What it protects", icon=":material/shield:"),
        st.Page("pages/diagnostics.py", title="Diagnostics", icon=":material/monitor_heart:"),
        st.Page("pages/calibration.py", title="Calibration", icon=":material/verified:"),
        st.Page("pages/learn.py", title="Learn", icon=":material/school:"),
    ]
    page = st.navigation(pages)
    with routed():
        page.run()
else:
    from ui.warmup import lifespan

    app = st.App(__file__, lifespan=lifespan)
