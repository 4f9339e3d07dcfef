"""The yardstick of bench/app.py: a bare Streamlit page with one plotly chart and one table.

Served and opened exactly like the app (``streamlit run``, Debian's chromium), it measures what any
Streamlit page with a chart costs on this machine: server start-up work, the frontend bundle, the
websocket round trip, plotly.js drawing. The app's first view is judged against it.
"""
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="bare", layout="wide")
st.title("Bare page")
grid = np.linspace(0.0, 1.0, 400)
fig = go.Figure([go.Scatter(x=grid, y=np.exp(-((grid - c) ** 2) / 0.01), name=f"curve {i}")
                 for i, c in enumerate(np.linspace(0.2, 0.8, 6))])
fig.update_layout(title="six curves", height=480)
st.plotly_chart(fig, width="stretch")
st.dataframe(pd.DataFrame({"method": [f"curve {i}" for i in range(6)], "mean": np.linspace(0.2, 0.8, 6)}),
             hide_index=True)
