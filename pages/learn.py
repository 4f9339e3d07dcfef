"""Learn page: a short guided walkthrough with presets that load into the Compare page's widgets."""
import streamlit as st

from ui import keys
from ui.presets import BAYES_VS_MLE, EPSILON_ONE, PRESETS
from ui.routing import ensure_routed
from ui.sidebar.state import load_scenario

ensure_routed()


def preset_card(preset, button: str, page: str = "pages/compare.py") -> None:
    """A preset's title and blurb, and the button that loads it into the sidebar and opens ``page``."""
    with st.container(border=True):
        st.markdown(f"**{preset.title}**  \n{preset.blurb}")
        if st.button(button, key=keys.preset_key(preset.name)):
            load_scenario(preset.scenario)
            st.session_state[keys.PRESET_NOTE] = f"Loaded the preset “{preset.title}”."
            st.switch_page(page)


st.title("Learn: inference from privatized data")
with st.expander("What am I looking at?"):
    st.markdown("A five-minute walkthrough of why analysing a differentially private release as if it were exact "
                "goes wrong, and how the exact methods fix it. Each preset button loads a worked example from the "
                "papers into the sidebar and opens it on the Compare page.")

st.markdown("""
**1. What is released.** A data holder computes a statistic *s* of *n* confidential records (a count, a sum,
a table of counts) and publishes a noisy version **s_dp** instead. The noise comes from a *mechanism* —
Laplace or Gaussian noise on *s*, their discrete versions, or randomized response on every record — whose
scale is set by the privacy budget: **ε** for pure differential privacy, **ρ** for zero-concentrated DP, or
**(ε, δ)**. Smaller budgets mean more noise.

**2. The naive analysis.** Plugging s_dp into the usual posterior as if it were *s* ignores the noise: the
posterior is centred in the wrong place (after clipping s_dp to the possible range) and far too narrow,
because it only knows about sampling variation (Gong 2020; Bernstein & Sheldon 2018).

**3. Exact private posteriors.** The posterior that accounts for the mechanism is
p(θ | s_dp) ∝ p(θ) ∫ η(s_dp | s) p(s | θ) ds. The lab computes it four ways, all exact:

* **DA-MCMC** (Ju et al. 2022, Alg. 1) treats the records as unknowns and alternates θ | records with a
  record-by-record Metropolis sweep; for pure ε-DP the acceptance rate never drops below exp(-ε).
* **ABC rejection** (Gong 2020, Alg. 3) proposes θ and *s* from the model and accepts with probability
  η(s_dp | s) / max η — exact, but slow when the noise is small.
* **Pseudo-marginal** (Andrieu & Roberts 2009) runs a Markov chain on θ alone, with the likelihood
  p(s_dp | θ) replaced by an unbiased estimate from statistics drawn given θ — fast where the noise is wide.
* **Exact (closed form)**: where it exists, the posterior itself — for counts with a conjugate prior a finite
  mixture of conjugate posteriors, elsewhere a numerical grid — and independent draws from it.

**Exact (best method)** picks among them, for your model, mechanism and release, the one with the lowest
estimated cost per effective draw, and says which it picked and why.

**OPS** (one-posterior sampling) is a different release altogether: the data holder publishes draws from a
tempered posterior instead of s_dp. It needs the confidential records, so it runs only on simulated or
uploaded data.

**4. Try it.** Each button below loads a scenario into the sidebar widgets and opens the Compare page;
change anything there afterwards.
""")

for preset in PRESETS:
    preset_card(preset, f"Load “{preset.title}”")

st.markdown("""
**What to look for.** In *Gong's privatized count* the naive posterior trusts 37.4 as the true count
(posterior mean about 31 with sd 4) although the noise alone has standard deviation 7; the exact posterior is
wider (sd about 4.7) and pulled further towards the prior (mean about 28.6). In the *admissions table*
the naive analysis takes the randomized answers at face value, while DA-MCMC recovers the uncertainty the
coin flips add; with *discrete Gaussian* noise on the cells instead, the exact posterior is available too
and DA-MCMC should match it. In *naive analysis is biased* compare the naive curve with the dashed true value, then open
**Privacy budget** to see the gap close as ε grows. In *linear regression* the naive posterior is off the axis
(its label says where): inverting a noisy x̃ᵀx̃ as if it were exact is unstable and confidently wrong. The exact
posterior is wide instead: at n = 100 the release says little beyond the prior (sd 2) at any ε from 0.1 to 10 (its
nine sums carry noise of scale 13/ε against sums of 100 records normalised to [−1, 1]; **Privacy budget** shows the sd
barely moving). Set n to 10,000 and it narrows towards the confidential-data posterior as ε grows (beta[1]'s sd about
0.55 at ε = 0.1, 0.065 at ε = 1, 0.021 at ε = 10, against 0.014 from the confidential records). Open
**Diagnostics** on DA-MCMC to see why it needs far longer chains than the pseudo-marginal sampler here (switch
DA-MCMC on in the sidebar first: the preset opens on the methods that converge).
""")

st.subheader("Bayesian vs MLE answers from the same release", divider="gray")
st.markdown("""
The same release supports two kinds of answer. The **posterior** (every curve on Compare) is a distribution
for θ given s_dp and the prior; its 90% interval is a probability statement about θ. The **maximum-likelihood
estimate** maximises p(s_dp | θ) = Σ_s η(s_dp − s) p(s | θ), which no closed form gives: *Monte Carlo EM*
(*Statistical Inference for Privatized Data with Unknown Sample Size*, Alg. 2) fills in the confidential records
by MCMC in each E-step and reports the estimate with a standard error from Louis's method and a 90% **Wald**
interval, drawn on Compare as a marker with a horizontal
bar under the curves. With much data and little noise the two agree; with strong noise or few records the
likelihood is flat and skewed, the Wald interval (symmetric by construction) can spill past the parameter's
range, and the posterior's prior matters.

When the number of records is private too (*unbounded* DP), the curator also releases a noisy size n_dp.
**RJMCMC** treats n as unknown and adds or deletes records as it samples (reversible jump), so its posterior
for θ carries the uncertainty about n, and it gives a posterior for n itself. The other methods can only plug
in n = round(n_dp), and Compare labels them so.
""")
preset_card(BAYES_VS_MLE, f"Load “{BAYES_VS_MLE.title}”")

st.subheader("What ε = 1 means", divider="gray")
st.markdown("""
The budget ε is a promise about **one person**: whatever the release, it changes the odds of any guess about that
person's record by at most a factor e^ε (2.7 at ε = 1). Concretely, someone who already knew everyone else's
record and was 50/50 about the last one could end, at ε = 1, at most 73% sure (e/(1+e)). The **What it protects**
page computes this exactly for the mechanism in the sidebar: the best possible attack's trade-off between false
accusations and misses, against the curve the guarantee allows; the informed adversary's belief over releases;
and what someone who knows only the model learns about one record. Each example below is the same survey of 100
people released at ε = 1 by a different mechanism family; compare how close each comes to its guarantee.
""")
for preset in EPSILON_ONE:
    preset_card(preset, f"Open “{preset.title}” in What it protects", "pages/protection.py")
