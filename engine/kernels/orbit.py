r"""Orbit moves for the clamped linear regression's DA-MCMC chain: every record moved at once by one
lower-triangular affine map, beta moved with it, at a cost that does not grow with n.

Why. At large n and narrow noise the Gibbs cycle beta | records -> records | beta mixes slowly: beta given
the records is pinned to the records' sums T = sum_i z_i z_i^T (z = (1, x, y)), and the sums move only as
record moves renew them, O(n) record moves per effective draw. An orbit move changes T and beta together.

The move. Write the records as z_i = (1, x_i, y_i) in R^k (k = p + 2) and let g be a k x k lower-triangular
matrix whose first row is e_0 (so g z keeps the constant: x' depends on (1, x), y' on (1, x, y)). The
auxiliary variables are E (lower-triangular, zero first row: its (k - 1)(k + 2) / 2 entries) and D in
R^{p+1}, drawn (E, D) ~ N(0, C), a law symmetric under (E, D) -> (-E, -D). The map

    (records, beta, E, D)  ->  (exp(E) records, beta + D, -E, -D)

is an involution (exp(-E) exp(E) = I), so by involutive MCMC (Neklyudov et al. 2020; the deterministic
map with a symmetric auxiliary of Green 1995 / Tierney 1998) the move leaves the joint target
p(beta, records | s_dp) invariant when accepted with probability min(1, a),

    a = pi(exp(E) records, beta + D) / pi(records, beta) * |det J|,

J the Jacobian of the involution. It is block-triangular (the auxiliaries' part is (E, D) -> (-E, -D),
|det| = 1; the records' part is n copies of the map (x, y) -> the last k - 1 rows of exp(E) (1, x, y),
each of determinant det exp(E)[1:, 1:] = exp(tr E[1:, 1:]) as exp(E) is lower-triangular), so
|det J| = exp(n tr E[1:, 1:]). With pi the model times the noise,

    log pi = -|beta|^2 / (2 tau^2) - sum_i (x_i - m)^T Sigma^-1 (x_i - m) / 2 - RSS(beta) / (2 sigma^2)
             + log eta(s_dp - s(records)),

and every term but the last is a function of T alone: sum_i (x_i - m)^T P (x_i - m) = tr(P Sxx) - 2 m^T P Sx
+ n m^T P m and RSS = T_yy - 2 beta^T T_Xy + beta^T T_XX beta; under g, T -> g T g^T. So a move costs
O(k^3) plus the released statistic s(g records), which is exact (clamping included) and also cheap:

The split. The records are stored as base records b_i with the current records g_i = G b_i, G the accepted
moves' product (every record written once, at the call's end). For a box of ellipsoids, row r of G - G_c in
{L_r w : |w| <= 1}, each record is classified by Cauchy-Schwarz, |((G - G_c) z)_r| <= |L_r^T z|: class 0 when
no coordinate can reach a clamp bound for any G in the box, class 1 / 2 when no x coordinate can and y stays
below / above its bound, class 3 (unsafe) otherwise (their base values kept contiguous for the pass). With the
normalisation z~ = N z (v~ = 2 (v - lo) / (hi - lo) - 1 is affine, N lower-triangular with first row e_0),
class 0's part of s is read off N G T_0 G^T N^T (T_0 its sums of b b^T), class 1 and 2's off N_x G_x S_c G_x^T
N_x^T (S_c their sums of (1, x)(1, x)^T, y~ = -1 or +1), and class 3's records are evaluated one by one. A
proposal outside the box is evaluated over all records (O(n)) and, when accepted, the split is rebuilt around
it. The box sets the cost, never the value.

The rest of the cycle is Algorithm 1's, on the current records: beta (and sigma^2) from the conjugate
update on T = G T_base G^T, the Tobit refresh of clamped records' raw y (``censored_refresh``'s
derivation; the candidates are all records whose current y is clamped, a set the refresh keeps), and the
record moves over a window; each changed record is written back as G^-1 z and reclassified in O(1).

Ancillary moves (``ancillary_moves``, issue 23). Hold the residual parametrisation w_i = (x_i, e_i) with
e_i = (y_i - beta_0 - x_i^T beta_{1:}) / sigma: under the model the w_i are i.i.d. N(mu_w, Sigma_w), mu_w = (m, 0),
Sigma_w = blockdiag(Sigma, 1), independent of beta. Write them as (w-bar, S, A): the mean, the scatter
S = sum (w_i - w-bar)(w_i - w-bar)^T = L L^T (L its lower Cholesky factor) and the configuration
a_i = L^-1 (w_i - w-bar). The lower-triangular affine group w -> c + B w acts transitively on (mu_w, Sigma_w)
and leaves A unchanged (chol(B S B^T) = B L), so A is ancillary, and (w-bar, S) is complete and sufficient: by
Basu's theorem A is independent of (w-bar, S), whose laws are N(mu_w, Sigma_w / n) and Wishart_q(n - 1, Sigma_w).
The records are a function of theta = (beta, w-bar, L) and A (x = w_x, y = beta_0 + x^T beta_{1:} + sigma e),
so the joint posterior, written in (theta, A), has density

    pi(theta, A) ∝ N(beta; 0, tau^2 I) N(w-bar; mu_w, Sigma_w / n) W(S; n - 1, Sigma_w) |dS / dL|
                   eta(s_dp - s(theta, A))

against Lebesgue measure on theta times A's law (the change of variables (log L_rr, L_rc) -> S has Jacobian
2^q prod_r L_rr^(q - r + 1), r = 0..q-1). Given A the conditional of theta is this density with A fixed, so a
Metropolis-Hastings step on theta alone, A held, leaves the joint posterior invariant for any proposal q, with
ratio pi(theta') q(theta | theta') / (pi(theta) q(theta' | theta)) (``frame_log_prior`` is the model part). The
proposals: a random walk theta + R z (symmetric), or an independence draw from a t mixture fitted to the
chain over warm-up (its density in the ratio), each picked with a fixed probability; each is a valid kernel and
a state-independent random choice between them keeps the target. The move writes no record: with A held the
records go to w' = w-bar' + L' L^-1 (w - w-bar), a lower-triangular affine map g of (1, x, y)
(``frame_map``; g = H(beta')^-1 M H(beta) with H the map (1, x, y) -> (1, x, e)), so G' = g G and s' comes from
the split as for the orbit moves, with a first stage (Christen & Fox 2005) in which only the unsafe records are
held at their current share. sigma (known, or the chain's current draw) is held by the move. Where the moves
run, the chain carries beta from iteration to iteration instead of drawing it from beta | records (both are
valid kernels; the draw undid what the moves gained, as the frame of w is defined through beta).

Tail moves (``tail_records``, issue 23). What the frame moves leave to the record moves at n = 10^6 is which
records the clamp reaches: the number of records with y clamped and their x sums, renewed only as record moves
renew the records, about once per n record updates. A tail move renews the records near a bound directly. Given
beta (and sigma), (x, y) is normal: y ~ N(mu_y, v_y), mu_y = beta_0 + m^T beta_{1:}, v_y = beta_{1:}^T Sigma
beta_{1:} + sigma^2, and x | y ~ N(m + c (y - mu_y), Sigma - c c^T v_y), c = Sigma beta_{1:} / v_y. Fix a
threshold c_lo and let T = {(x, y) : y <= c_lo}. For record i (all others, beta and sigma held), the kernel: if
the current record is not in T, stay; else propose r' from the model restricted to T (y' from its normal law
truncated to y' <= c_lo, Robert 1995, then x' | y'), accepted with min(1, eta(s_dp - s') / eta(s_dp - s)). The
proposal density is f(r') 1_T(r') / P(T) with f the model's density of one record, so the Metropolis-Hastings
ratio is

    f(r') eta(s_dp - s') q(r | r') / (f(r) eta(s_dp - s) q(r' | r)) = eta(s_dp - s') / eta(s_dp - s),

and as r' is in T whenever r is, the move is reversible with respect to the records' conditional and so keeps the
joint posterior. The upper tail {y > c_hi} likewise (c_lo <= c_hi, so the two never overlap). A window of records
is scanned in order, each with its own kernel (a composition of invariant kernels); the threshold is
c_lo = lo_y + h sd_y, c_hi = hi_y - h sd_y with h drawn uniformly on a fixed range once an iteration, independent
of the state (a state-independent mixture of invariant kernels; with a fixed h the count beyond c_lo could not
change), and sd_y, a function of beta, is held by every move of the scan. Each accepted move is written back and
reclassified like a record move.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .da_mcmc import (_is_clamped, _list_add, _list_remove, _record_log_ratio, _regression_record_move, _tobit_draw,
                      beta_draw, sigma2_draw, truncated_normal_above)
from .shared import (cholesky_into, log_eta, log_t_mixture, plain_inverse, random_walk_point, record_stat,
                     statistics, t_mixture_point, t_mixture_weights)

__all__ = ["orbit_chain", "orbit_free", "free_index", "normaliser", "frame", "frame_map", "frame_log_prior",
           "frame_size"]


def orbit_free(p: int) -> int:
    """Entries of an orbit move's E (lower-triangular k x k, k = p + 2, zero first row)."""
    k = p + 2
    return k * (k + 1) // 2 - 1


def frame_size(p: int) -> int:
    """Frame coordinates of the ancillary moves: beta and w-bar (p + 1 each) and L's (p + 1)(p + 2) / 2 entries."""
    q = p + 1
    return 2 * q + q * (q + 1) // 2


def free_index(p: int) -> list:
    """(row, column) of E's free entries, in the order of the moves' auxiliary vector: row 1..k-1, column
    0..row."""
    k = p + 2
    return [(a, b) for a in range(1, k) for b in range(a + 1)]


@njit(cache=True, nogil=True)
def normaliser(lo, hi):
    """N with z~ = N z for z = (1, x, y): each column's v~ = 2 (v - lo) / (hi - lo) - 1 (lower-triangular, first
    row e_0)."""
    q = lo.size
    nmat = np.zeros((q + 1, q + 1))
    nmat[0, 0] = 1.0
    for a in range(q):
        nmat[a + 1, a + 1] = 2.0 / (hi[a] - lo[a])
        nmat[a + 1, 0] = -(hi[a] + lo[a]) / (hi[a] - lo[a])
    return nmat


@njit(cache=True, nogil=True, inline="always")
def _current(G, rec, i, out):
    """Record i's current coordinates (x, y) = the last k - 1 rows of G (1, b_i)."""
    q = rec.shape[1]
    for a in range(q):
        v = G[a + 1, 0]
        for b in range(a + 1):
            v += G[a + 1, b + 1] * rec[i, b]
        out[a] = v


@njit(cache=True, nogil=True, inline="always")
def _load(rec, i, z):
    """z = (1, b_i): record i's base values behind a constant, read once by the split's helpers."""
    z[0] = 1.0
    for a in range(rec.shape[1]):
        z[a + 1] = rec[i, a]


@njit(cache=True, nogil=True, inline="always")
def _classify(z, gc, box, lo, hi):
    """The class of the record with base values z = (1, b) for the box around ``gc`` (module docstring): 0 inside,
    1 / 2 y below / above its bound, 3 unsafe. Row r's reach is max |(G - G_c)[r] z| over its ellipsoid
    {L w : |w| <= 1}, L = box[r] (lower-triangular, (r + 1) x (r + 1)): |L^T z[0..r]|."""
    q = z.size - 1
    p = q - 1
    side = 0
    for a in range(q):
        r = a + 1
        v = gc[r, 0]
        for b in range(r):
            v += gc[r, b + 1] * z[b + 1]
        tot = 0.0
        for j in range(r + 1):
            u = 0.0
            for m in range(j, r + 1):
                u += box[r, m, j] * z[m]
            tot += u * u
        reach = math.sqrt(tot)
        if v - reach > lo[a] and v + reach < hi[a]:
            continue
        if a == p and v + reach < lo[a]:
            side = 1
        elif a == p and v - reach > hi[a]:
            side = 2
        else:
            return 3
    return side


@njit(cache=True, nogil=True, inline="always")
def _put(z, i, c, sign, t0, sc, uidx, upos, ur, cidx, cpos, cnt):
    """Add (sign 1) or take out (sign -1) the part of record i (base values z = (1, b_i)) in its class c: class 0's
    sums of b b^T (t0), class 1 / 2's sums of (1, x)(1, x)^T (sc[0] / sc[1]) and the clamped list (cidx, cnt[1]),
    class 3's list (uidx, cnt[0]) and its base values (ur)."""
    q = z.size - 1
    if c == 3:  # ur keeps the unsafe records' base values in the list's order, for a contiguous pass
        if sign > 0:
            for a in range(q):
                ur[cnt[0], a] = z[a + 1]
            _list_add(i, uidx, upos, cnt, 0)
        else:
            k = upos[i]
            last = cnt[0] - 1
            for a in range(q):
                ur[k, a] = ur[last, a]
            _list_remove(i, uidx, upos, cnt, 0)
        return
    if c == 0:
        for a in range(q + 1):
            for b in range(a + 1):
                t0[a, b] += sign * z[a] * z[b]
        return
    s = sc[c - 1]
    for a in range(q):
        for b in range(a + 1):
            s[a, b] += sign * z[a] * z[b]
    if sign > 0:
        _list_add(i, cidx, cpos, cnt, 1)
    else:
        _list_remove(i, cidx, cpos, cnt, 1)


@njit(cache=True, nogil=True, inline="always")
def _row_p2(gc, box, r, z1, z2, z3):
    """Row r of G_c (1, x1, x2, y) and its reach over the box (``_classify``'s v and reach, p = 2), each summed in
    _classify's order."""
    v = gc[r, 0] + gc[r, 1] * z1
    if r >= 2:
        v += gc[r, 2] * z2
    if r >= 3:
        v += gc[r, 3] * z3
    tot = 0.0
    for j in range(r + 1):
        u = 0.0
        for m in range(j, r + 1):
            zm = 1.0 if m == 0 else (z1 if m == 1 else (z2 if m == 2 else z3))
            u += box[r, m, j] * zm
        tot += u * u
    return v, math.sqrt(tot)


@njit(cache=True, nogil=True)
def _resplit_p2(rec, gc, box, lo, hi, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt):
    """``_resplit``'s pass for p = 2 with scalars: each record read once, classified as ``_classify`` does (the same
    sums in the same order) and its part summed in the records' order as ``_put`` sums it (class 0's, nearly every
    record, into scalars written to t0 at the end), so the split is the same to the bit (about three times as fast).
    t0, sc and cnt are zero on entry."""
    z0 = 1.0
    # class 0's sums of z z^T (lower triangle, z = (1, x1, x2, y))
    a00 = a10 = a11 = a20 = a21 = a22 = a30 = a31 = a32 = a33 = 0.0
    for i in range(rec.shape[0]):
        upos[i] = -1
        cpos[i] = -1
        z1, z2, z3 = rec[i, 0], rec[i, 1], rec[i, 2]
        side = 0
        for r in range(1, 4):  # _classify's rows in its order
            v, reach = _row_p2(gc, box, r, z1, z2, z3)
            if v - reach > lo[r - 1] and v + reach < hi[r - 1]:
                continue
            if r == 3 and v + reach < lo[2]:
                side = 1
            elif r == 3 and v - reach > hi[2]:
                side = 2
            else:
                side = 3
                break
        cls[i] = side
        if side == 3:
            ur[cnt[0], 0] = z1
            ur[cnt[0], 1] = z2
            ur[cnt[0], 2] = z3
            _list_add(i, uidx, upos, cnt, 0)
        elif side == 0:
            a00 += 1.0 * z0 * z0
            a10 += 1.0 * z1 * z0
            a11 += 1.0 * z1 * z1
            a20 += 1.0 * z2 * z0
            a21 += 1.0 * z2 * z1
            a22 += 1.0 * z2 * z2
            a30 += 1.0 * z3 * z0
            a31 += 1.0 * z3 * z1
            a32 += 1.0 * z3 * z2
            a33 += 1.0 * z3 * z3
        else:  # y clamped for every G in the box (a few % of the records): summed in place
            s = sc[side - 1]
            s[0, 0] += 1.0 * z0 * z0
            s[1, 0] += 1.0 * z1 * z0
            s[1, 1] += 1.0 * z1 * z1
            s[2, 0] += 1.0 * z2 * z0
            s[2, 1] += 1.0 * z2 * z1
            s[2, 2] += 1.0 * z2 * z2
            _list_add(i, cidx, cpos, cnt, 1)
    t0[0, 0], t0[1, 0], t0[1, 1], t0[2, 0], t0[2, 1], t0[2, 2] = a00, a10, a11, a20, a21, a22
    t0[3, 0], t0[3, 1], t0[3, 2], t0[3, 3] = a30, a31, a32, a33


@njit(cache=True, nogil=True)
def _resplit(rec, gc, box, lo, hi, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt):
    """The split around ``gc`` from scratch: O(n) (for p = 2 ``_resplit_p2``, the same split to the bit)."""
    q = rec.shape[1]
    z = np.empty(q + 1)
    t0[:, :] = 0.0
    sc[:, :, :] = 0.0
    cnt[:] = 0
    if q == 3:
        _resplit_p2(rec, gc, box, lo, hi, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt)
        return
    for i in range(rec.shape[0]):
        upos[i] = -1
        cpos[i] = -1
        _load(rec, i, z)
        c = _classify(z, gc, box, lo, hi)
        cls[i] = c
        _put(z, i, c, 1.0, t0, sc, uidx, upos, ur, cidx, cpos, cnt)


@njit(cache=True, nogil=True, inline="always")
def _write_back(rec, i, ginv, cur, tall, gc, box, lo, hi, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt, z):
    """Record i := G^-1 (1, cur), its old base values taken out of the running sums (tall, the sums of b b^T,
    lower triangle) and of its class, the new ones added to both, reclassified for the box around ``gc``: O(1)."""
    q = rec.shape[1]
    _load(rec, i, z)
    _put(z, i, cls[i], -1.0, t0, sc, uidx, upos, ur, cidx, cpos, cnt)
    for a in range(q + 1):
        for b in range(a + 1):
            tall[a, b] += -1.0 * z[a] * z[b]
    for a in range(q):
        v = ginv[a + 1, 0]
        for b in range(a + 1):
            v += ginv[a + 1, b + 1] * cur[b]
        rec[i, a] = v
        z[a + 1] = v
    for a in range(q + 1):
        for b in range(a + 1):
            tall[a, b] += 1.0 * z[a] * z[b]
    c = _classify(z, gc, box, lo, hi)
    cls[i] = c
    _put(z, i, c, 1.0, t0, sc, uidx, upos, ur, cidx, cpos, cnt)


@njit(cache=True, nogil=True)
def _matmul(a, b, out):
    k = a.shape[0]
    for i in range(k):
        for j in range(b.shape[1]):
            v = 0.0
            for m in range(a.shape[1]):
                v += a[i, m] * b[m, j]
            out[i, j] = v


@njit(cache=True, nogil=True)
def _congruence(g, t, out, tmp):
    """out = g t g^T for a lower-triangle-stored symmetric t (only t[a, b], b <= a, is read)."""
    k = g.shape[0]
    for i in range(k):
        for j in range(k):
            v = 0.0
            for m in range(k):
                tm = t[m, j] if j <= m else t[j, m]
                v += g[i, m] * tm
            tmp[i, j] = v
    for i in range(k):
        for j in range(k):
            v = 0.0
            for m in range(k):
                v += tmp[i, m] * g[j, m]
            out[i, j] = v


@njit(cache=True, nogil=True)
def _add_stats(G, base, m, lo, hi, out, row, z, t):
    """out += the released statistic's part of the records whose base values are base[0..m-1], at G: each record's
    current value G (1, b) (``_current``) and its t (``record_stat``), added entry by entry in the records' order.
    For p = 2 (the papers' design) the same operations in the same order are written out with scalars, so the same
    sums to the bit at about 10 ns a record instead of 50 (no scratch array between the steps)."""
    q = base.shape[1]
    if q != 3:
        for u in range(m):
            _current(G, base, u, row)
            record_stat(row, lo, hi, z, t)
            for c in range(out.size):
                out[c] += t[c]
        return
    g10, g11, g20, g21, g22 = G[1, 0], G[1, 1], G[2, 0], G[2, 1], G[2, 2]
    g30, g31, g32, g33 = G[3, 0], G[3, 1], G[3, 2], G[3, 3]
    l0, l1, l2, h0, h1, h2 = lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]
    o0, o1, o2, o3, o4, o5, o6, o7, o8 = out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7], out[8]
    for u in range(m):
        b0, b1, b2 = base[u, 0], base[u, 1], base[u, 2]
        v0 = g10 + g11 * b0
        v1 = g20 + g21 * b0
        v1 += g22 * b1
        v2 = g30 + g31 * b0
        v2 += g32 * b1
        v2 += g33 * b2
        v0 = l0 if v0 < l0 else (h0 if v0 > h0 else v0)
        v1 = l1 if v1 < l1 else (h1 if v1 > h1 else v1)
        v2 = l2 if v2 < l2 else (h2 if v2 > h2 else v2)
        z1 = 2.0 * (v0 - l0) / (h0 - l0) - 1.0
        z2 = 2.0 * (v1 - l1) / (h1 - l1) - 1.0
        yt = 2.0 * (v2 - l2) / (h2 - l2) - 1.0
        o0 += 1.0 * yt  # record_stat's order: z_j y~ (j = 0..p), y~^2, then z_j z_k (k = 1..p, j = 0..k)
        o1 += z1 * yt
        o2 += z2 * yt
        o3 += yt * yt
        o4 += 1.0 * z1
        o5 += z1 * z1
        o6 += 1.0 * z2
        o7 += z1 * z2
        o8 += z2 * z2
    out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7], out[8] = o0, o1, o2, o3, o4, o5, o6, o7, o8


@njit(cache=True, nogil=True)
def _split_stat(G, nmat, t0, sc, ur, cnt, lo, hi, out, ng, mm, tmp, row, z, t):
    """s at G for a G inside the box: class 0 and 1 / 2 from their sums (``_class_stat``), class 3 record by record."""
    _class_stat(G, nmat, t0, sc, cnt, out, ng, mm, tmp)
    _add_stats(G, ur, cnt[0], lo, hi, out, row, z, t)


@njit(cache=True, nogil=True)
def _class_stat(G, nmat, t0, sc, cnt, out, ng, mm, tmp):
    """Class 0 and 1 / 2's part of s at G, from their sums: O(k^3)."""
    k = G.shape[0]
    q = k - 1
    p = q - 1
    _matmul(nmat, G, ng)
    _unclamped(ng, t0, out, mm, tmp)  # class 0: N G T_0 G^T N^T, no record clamped
    ngx = ng[:q, :q]
    for c in range(2 if cnt[1] > 0 else 0):
        _congruence(ngx, sc[c], mm[:q, :q], tmp[:q, :q])
        sgn = -1.0 if c == 0 else 1.0
        for j in range(p + 1):
            out[j] += sgn * mm[j, 0]
        out[p + 1] += mm[0, 0]
        idx = p + 2
        for kk in range(1, p + 1):
            for j in range(kk + 1):
                out[idx] += mm[j, kk]
                idx += 1


@njit(cache=True, nogil=True)
def _unclamped(nmat, tc, out, mm, tmp):
    """F(T): the released statistic's entries as if no record were clamped, read off N T N^T (T = sum z z^T)."""
    k = nmat.shape[0]
    q = k - 1
    p = q - 1
    _congruence(nmat, tc, mm, tmp)
    for j in range(p + 1):
        out[j] = mm[j, q]
    out[p + 1] = mm[q, q]
    idx = p + 2
    for kk in range(1, p + 1):
        for j in range(kk + 1):
            out[idx] = mm[j, kk]
            idx += 1


@njit(cache=True, nogil=True)
def _stat_at(G, gc, box, nmat, t0, sc, ur, cnt, rec, lo, hi, out, ng, mm, tmp, row, z, t):
    """s at G into ``out``: from the split where G is in the box (True), else over every record (False)."""
    if _in_box(G, gc, box):
        _split_stat(G, nmat, t0, sc, ur, cnt, lo, hi, out, ng, mm, tmp, row, z, t)
        return True
    _full_stat(G, rec, lo, hi, out, row, z, t)
    return False


@njit(cache=True, nogil=True)
def _full_stat(G, rec, lo, hi, out, row, z, t):
    """s at any G, over every record: O(n)."""
    out[:] = 0.0
    _add_stats(G, rec, rec.shape[0], lo, hi, out, row, z, t)


@njit(cache=True, nogil=True)
def _log_model(G, tall, beta, sigma, x_mean, x_prec, prior_sd, n, tc, tmp):
    """The model part of log pi at records G b (module docstring), from T = G T_base G^T; also leaves T in
    ``tc``."""
    k = G.shape[0]
    q = k - 1
    p = q - 1
    _congruence(G, tall, tc, tmp)
    qx = 0.0
    for a in range(p):
        for b in range(p):
            qx += x_prec[a, b] * (tc[a + 1, b + 1] - x_mean[a] * tc[b + 1, 0] - x_mean[b] * tc[a + 1, 0]
                                  + n * x_mean[a] * x_mean[b])
    rss = tc[q, q]
    bb = 0.0
    for a in range(q):
        rss -= 2.0 * beta[a] * tc[a, q]
        bb += beta[a] * beta[a]
        for b in range(q):
            rss += beta[a] * tc[a, b] * beta[b]
    return -0.5 * bb / (prior_sd * prior_sd) - 0.5 * qx - 0.5 * rss / (sigma * sigma)


@njit(cache=True, nogil=True)
def _expm(e, out, term, tmp):
    """exp(e) for a small square matrix: Taylor series on e / 2^j, then j squarings."""
    k = e.shape[0]
    nrm = 0.0
    for i in range(k):
        r = 0.0
        for j in range(k):
            r += abs(e[i, j])
        nrm = max(nrm, r)
    sq = 0
    while nrm > 0.125:
        nrm *= 0.5
        sq += 1
    f = 0.5 ** sq
    for i in range(k):
        for j in range(k):
            out[i, j] = 1.0 if i == j else 0.0
            term[i, j] = out[i, j]
    for m in range(1, 20):
        _matmul(term, e, tmp)
        big = 0.0
        for i in range(k):
            for j in range(k):
                term[i, j] = tmp[i, j] * f / m
                out[i, j] += term[i, j]
                big = max(big, abs(term[i, j]))
        if big < 1e-18:
            break
    for _ in range(sq):
        _matmul(out, out, tmp)
        out[:, :] = tmp


@njit(cache=True, nogil=True)
def _lower_inverse(G, out):
    """The inverse of a lower-triangular matrix (forward substitution, column by column)."""
    k = G.shape[0]
    out[:, :] = 0.0
    for j in range(k):
        out[j, j] = 1.0 / G[j, j]
        for i in range(j + 1, k):
            v = 0.0
            for m in range(j, i):
                v += G[i, m] * out[m, j]
            out[i, j] = -v / G[i, i]


@njit(cache=True, nogil=True)
def _in_box(G, gc, box):
    """Whether every row r of G - G_c is in its ellipsoid {L w : |w| <= 1}, L = box[r] (forward substitution)."""
    k = G.shape[0]
    w = np.empty(k)
    for r in range(1, k):
        r2 = 0.0
        for j in range(r + 1):
            v = G[r, j] - gc[r, j]
            for m in range(j):
                v -= box[r, j, m] * w[m]
            if box[r, j, j] <= 0.0:
                return False
            w[j] = v / box[r, j, j]
            r2 += w[j] * w[j]
        if r2 > 1.0:
            return False
    return True


@njit(cache=True, nogil=True)
def _moves(rng, rec, s, G, gc, tall, beta, sigma, x_mean, x_prec, prior_sd, lo, hi, s_dp, kernel, scale, moves,
           move_chol, box, nmat, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt, counts, delayed):
    """``moves`` orbit moves (module docstring); G, beta and s are updated in place on acceptance. Delayed
    acceptance (Christen & Fox 2005, with an approximation that may depend on the current state): the first
    stage takes the target with s replaced by s~_x(y) = s(x) + F(T_y) - F(T_x), F the statistic as if no record
    were clamped (the clamped records' share of a move's change is all it misses), so a proposal costs O(k^3)
    until it passes; the second accepts with the exact ratio times min(1, a1(y -> x)) / min(1, a1(x -> y)),
    a1(y -> x) the reverse move's first stage from y (with s~_y(x) = s(y) + F(T_x) - F(T_y)). The pair is a
    Metropolis-Hastings step with proposal density q(x, y) a1(x, y), reversible for any such s~. ``delayed`` 0:
    one stage, the exact ratio alone (where many records are clamped s~ misses much and the filter costs mixing).
    ``counts``: proposed, accepted, evaluated outside the box, passed the first stage."""
    n, q = rec.shape
    k = q + 1
    d = move_chol.shape[0]
    nfree = d - q
    e = np.zeros((k, k))
    g = np.empty((k, k))
    g2 = np.empty((k, k))
    term = np.empty((k, k))
    tmp = np.empty((k, k))
    tc = np.empty((k, k))
    ng = np.empty((k, k))
    mm = np.empty((k, k))
    u = np.empty(d)
    v = np.empty(d)
    b2 = np.empty(q)
    s2 = np.empty(s.size)
    row = np.empty(q)
    z = np.empty(q + 1)
    t = np.empty(s.size)
    f_cur = np.empty(s.size)
    f2 = np.empty(s.size)
    lm_cur = _log_model(G, tall, beta, sigma, x_mean, x_prec, prior_sd, n, tc, tmp)
    _unclamped(nmat, tc, f_cur, mm, tmp)
    lp = lm_cur + log_eta(s, s_dp, kernel, scale)
    for _ in range(moves):
        for j in range(d):
            u[j] = rng.standard_normal()
        for j in range(d):
            acc = 0.0
            for m in range(j + 1):
                acc += move_chol[j, m] * u[m]
            v[j] = acc
        idx = 0
        trace = 0.0
        for a in range(1, k):
            for b in range(a + 1):
                e[a, b] = v[idx]
                idx += 1
            trace += e[a, a]
        for j in range(q):
            b2[j] = beta[j] + v[nfree + j]
        _expm(e, g, term, tmp)
        _matmul(g, G, g2)
        counts[0] += 1
        # first stage (delayed acceptance): s moved by the change of the unclamped statistic, F(T') - F(T)
        lm2 = _log_model(g2, tall, b2, sigma, x_mean, x_prec, prior_sd, n, tc, tmp)
        _unclamped(nmat, tc, f2, mm, tmp)
        for c in range(s.size):
            t[c] = s[c] + f2[c] - f_cur[c]
        l1 = lm2 + log_eta(t, s_dp, kernel, scale) - lp + n * trace if delayed else 0.0
        if l1 < 0.0 and math.log(rng.random()) >= l1:
            continue
        counts[3] += 1
        inside = _stat_at(g2, gc, box, nmat, t0, sc, ur, cnt, rec, lo, hi, s2, ng, mm, tmp, row, z, t)
        if not inside:
            counts[2] += 1
        lp2 = lm2 + log_eta(s2, s_dp, kernel, scale)
        for c in range(s.size):  # the reverse move's first stage, from the proposed state
            t[c] = s2[c] + f_cur[c] - f2[c]
        l1_rev = lm_cur + log_eta(t, s_dp, kernel, scale) - lp2 - n * trace if delayed else 0.0
        la = lp2 - lp + n * trace + min(0.0, l1_rev) - min(0.0, l1)
        if la >= 0.0 or math.log(rng.random()) < la:
            counts[1] += 1
            G[:, :] = g2
            beta[:] = b2
            s[:] = s2
            lp = lp2
            lm_cur = lm2
            f_cur[:] = f2
            if not inside:
                gc[:, :] = G
                _resplit(rec, gc, box, lo, hi, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt)


@njit(cache=True, nogil=True)
def _refresh(rng, rec, G, ginv, tall, beta, sigma, lo, hi, gc, box, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt, k,
             ids):
    """The Tobit refresh (``censored_refresh``) of the records whose current y is clamped: all of them
    (k = -1) or k picked uniformly with replacement. The candidates are listed first (class 1 and 2, and
    the class 3 records whose current y is clamped); a refresh keeps a record clamped, so the set it picks
    from is the same before and after every refresh."""
    q = rec.shape[1]
    p = q - 1
    cur = np.empty(q)
    zb = np.empty(q + 1)
    nc = 0
    for j in range(cnt[1]):
        ids[nc] = cidx[j]
        nc += 1
    for j in range(cnt[0]):  # ur[j] holds record uidx[j]'s base values in the list's order: read in turn
        _current(G, ur, j, cur)
        if _is_clamped(cur[p], lo[p], hi[p]):
            ids[nc] = uidx[j]
            nc += 1
    if nc == 0:
        return
    picks = nc if k < 0 else k
    for j in range(picks):
        i = ids[j] if k < 0 else ids[int(rng.random() * nc)]
        _current(G, rec, i, cur)
        mu = beta[0]
        for a in range(p):
            mu += beta[a + 1] * cur[a]
        cur[p] = _tobit_draw(rng, cur[p], mu, sigma, lo[p], hi[p])
        _write_back(rec, i, ginv, cur, tall, gc, box, lo, hi, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt, zb)


@njit(cache=True, nogil=True)
def _sweep(rng, rec, s, G, ginv, tall, beta, chol, x_mean, sigma, lo, hi, s_dp, kernel, scale, start, m, gc, box,
           cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt):
    """Algorithm 1's record moves over the window start..start + m - 1 (mod n), on the current records."""
    n, q = rec.shape
    p = q - 1
    d = s.size
    z = np.empty(q + 1)
    t_old = np.empty(d)
    t_new = np.empty(d)
    prop = np.empty(q)
    cur = np.empty(q)
    zb = np.empty(q + 1)
    e = np.empty(p)
    asum = 0.0
    nacc = 0
    fast, inv = plain_inverse(kernel, scale)
    for k_rec in range(m):
        i = start + k_rec
        if i >= n:
            i -= n
        _current(G, rec, i, cur)
        al = _regression_record_move(rng, cur, beta, chol, x_mean, sigma, lo, hi, s, s_dp, fast, inv,
                                     kernel, scale, e, prop, z, t_old, t_new)
        asum += al
        if al >= 1.0 or rng.random() < al:
            _write_back(rec, i, ginv, prop, tall, gc, box, lo, hi, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt, zb)
            for c in range(d):
                s[c] += t_new[c] - t_old[c]
            nacc += 1
    return asum, nacc


@njit(cache=True, nogil=True)
def _tail_moves(rng, rec, s, G, ginv, tall, beta, chol, x_mean, sigma, lo, hi, s_dp, kernel, scale, start, m, h,
                gc, box, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt):
    """Tail moves over the window start..start + m - 1 (mod n) (module docstring, "Tail moves"): with sd_y the
    sd of y's marginal given beta, each record whose current y is <= c_lo = lo_y + h sd_y (or > c_hi = hi_y - h sd_y)
    gets a new record from the model given beta restricted to that same tail, accepted with the noise's ratio
    alone (c_lo <= c_hi: both are capped at the clamp's midpoint). Returns (records moved, accepted)."""
    n, q = rec.shape
    p = q - 1
    d = s.size
    z = np.empty(q + 1)
    t_old = np.empty(d)
    t_new = np.empty(d)
    prop = np.empty(q)
    cur = np.empty(q)
    zb = np.empty(q + 1)
    # (x, y) | beta is normal: y ~ N(mu_y, v_y) and x | y ~ N(m + c (y - mu_y), Sigma - c c^T v_y), c = Sigma b / v_y
    sig_x = np.zeros((p, p))
    for a in range(p):
        for b in range(p):
            for j in range(p):
                sig_x[a, b] += chol[a, j] * chol[b, j]
    sb = np.zeros(p)
    mu_y = beta[0]
    for a in range(p):
        mu_y += beta[a + 1] * x_mean[a]
        for b in range(p):
            sb[a] += sig_x[a, b] * beta[b + 1]
    v_y = sigma * sigma
    for a in range(p):
        v_y += beta[a + 1] * sb[a]
    sd_y = math.sqrt(v_y)
    mid = 0.5 * (lo[p] + hi[p])
    c_lo = min(lo[p] + h * sd_y, mid)
    c_hi = max(hi[p] - h * sd_y, mid)
    cond = np.empty((p, p))
    for a in range(p):
        for b in range(p):
            cond[a, b] = sig_x[a, b] - sb[a] * sb[b] / v_y
    cchol = np.zeros((p, p))
    cholesky_into(cond, cchol)
    e = np.empty(p)
    fast, inv = plain_inverse(kernel, scale)
    tried = 0
    nacc = 0
    for k_rec in range(m):
        i = start + k_rec
        if i >= n:
            i -= n
        y = G[q, 0]
        for b in range(q):
            y += G[q, b + 1] * rec[i, b]
        if y <= c_lo:
            prop[p] = mu_y - sd_y * truncated_normal_above(rng, (mu_y - c_lo) / sd_y)
            if prop[p] > c_lo:
                continue  # rounding at the threshold only
        elif y > c_hi:
            prop[p] = mu_y + sd_y * truncated_normal_above(rng, (c_hi - mu_y) / sd_y)
            if prop[p] <= c_hi:
                continue
        else:
            continue
        tried += 1
        for a in range(p):
            e[a] = rng.standard_normal()
        for a in range(p):
            v = x_mean[a] + sb[a] * (prop[p] - mu_y) / v_y
            for b in range(a + 1):
                v += cchol[a, b] * e[b]
            prop[a] = v
        _current(G, rec, i, cur)
        record_stat(cur, lo, hi, z, t_old)
        record_stat(prop, lo, hi, z, t_new)
        lr = _record_log_ratio(t_old, t_new, s, s_dp, fast, inv, kernel, scale)
        if lr >= 0.0 or rng.random() < math.exp(lr):
            _write_back(rec, i, ginv, prop, tall, gc, box, lo, hi, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt, zb)
            for c in range(d):
                s[c] += t_new[c] - t_old[c]
            nacc += 1
    return tried, nacc


# ------------------------------------------------------------------ ancillary moves (issue 23, n = 10^6)

@njit(cache=True, nogil=True)
def frame(G, tall, beta, sigma, tc, tmp, th):
    """The frame coordinates theta = (beta, w-bar, L) of the current records into ``th`` (``ancillary_moves``):
    w = (x, e) with e = (y - beta_0 - x^T beta_{1:}) / sigma, w-bar their mean and L the Cholesky factor of
    their scatter S = sum (w - w-bar)(w - w-bar)^T, read off T = G T_base G^T (left in ``tc``) as T_w = H T H^T,
    H the map (1, x, y) -> (1, x, e). L's entries row by row (r = 0..q-1, c = 0..r), its diagonal as log L_rr.
    False where S is not positive definite (fewer than q + 1 distinct records)."""
    k = G.shape[0]
    q = k - 1
    _congruence(G, tall, tc, tmp)
    n = tc[0, 0]
    hm = np.eye(k)
    for a in range(q):
        hm[q, a] = -beta[a] / sigma
    hm[q, q] = 1.0 / sigma
    tw = np.empty((k, k))
    _congruence(hm, tc, tw, tmp)
    wbar = np.empty(q)
    for a in range(q):
        wbar[a] = tw[a + 1, 0] / n
    scat = np.empty((q, q))
    for a in range(q):
        for b in range(q):
            scat[a, b] = tw[a + 1, b + 1] - n * wbar[a] * wbar[b]
    lw = np.zeros((q, q))
    if not cholesky_into(scat, lw):
        return False
    for a in range(q):
        th[a] = beta[a]
        th[q + a] = wbar[a]
    idx = 2 * q
    for r in range(q):
        for c in range(r + 1):
            th[idx] = math.log(lw[r, r]) if c == r else lw[r, c]
            idx += 1
    return True


@njit(cache=True, nogil=True, inline="always")
def _frame_l(th, q, out):
    """L (q x q, lower-triangular) from the frame coordinates (``frame``)."""
    out[:, :] = 0.0
    idx = 2 * q
    for r in range(q):
        for c in range(r + 1):
            out[r, c] = math.exp(th[idx]) if c == r else th[idx]
            idx += 1


@njit(cache=True, nogil=True)
def frame_log_prior(th, q, n, mu_w, p_w, prior_sd):
    """``_frame_log_prior_into`` with its own scratch (for tests and the method layer)."""
    return _frame_log_prior_into(th, q, n, mu_w, p_w, prior_sd, np.empty((q, q)))


@njit(cache=True, nogil=True)
def _frame_log_prior_into(th, q, n, mu_w, p_w, prior_sd, lw):
    """The model's log density in the frame coordinates given the ancillary configuration, up to a constant
    (``ancillary_moves``): beta ~ N(0, tau^2 I), w-bar ~ N(mu_w, Sigma_w / n), S = L L^T ~ Wishart_q(n - 1, Sigma_w)
    (Sigma_w^-1 = ``p_w``), with the Jacobian of (log L_rr, L_rc) -> S, 2^q prod_r L_rr^(q - r + 1) (r from 0).
    ``lw``: q x q scratch."""
    _frame_l(th, q, lw)
    out = 0.0
    for a in range(q):
        out -= 0.5 * th[a] * th[a] / (prior_sd * prior_sd)
    for a in range(q):
        for b in range(q):
            out -= 0.5 * n * (th[q + a] - mu_w[a]) * p_w[a, b] * (th[q + b] - mu_w[b])
    trace = 0.0
    for a in range(q):
        for b in range(q):
            sab = 0.0
            for c in range(min(a, b) + 1):
                sab += lw[a, c] * lw[b, c]
            trace += p_w[a, b] * sab
    out -= 0.5 * trace
    for r in range(q):
        out += (n - q - 2.0) * math.log(lw[r, r]) + (q - r + 1.0) * math.log(lw[r, r])
    return out


@njit(cache=True, nogil=True)
def frame_map(th, th2, sigma, G, out):
    """G' = g G with g the map of (1, x, y) that carries the records in frame ``th`` to frame ``th2`` keeping their
    ancillary configuration a = L^-1 (w - w-bar): w' = w-bar' + L' L^-1 (w - w-bar), then y' = beta'_0 + x^T
    beta'_{1:} + sigma e'. g = H(beta')^-1 M H(beta), lower-triangular with first row e_0."""
    k = G.shape[0]
    _frame_map_into(th, th2, sigma, G, out, np.empty((7, k, k)))


@njit(cache=True, nogil=True)
def _frame_map_into(th, th2, sigma, G, out, wk):
    """``frame_map`` with its scratch matrices in ``wk`` (7 x k x k): no allocation per move."""
    k = G.shape[0]
    q = k - 1
    lw, l2, linv, cm = wk[0, :q, :q], wk[1, :q, :q], wk[2, :q, :q], wk[3, :q, :q]
    hm, mm, t1 = wk[4], wk[5], wk[6]
    _frame_l(th, q, lw)
    _frame_l(th2, q, l2)
    _lower_inverse(lw, linv)
    cm[:, :] = 0.0
    for a in range(q):
        for b in range(a + 1):
            v = 0.0
            for c in range(b, a + 1):
                v += l2[a, c] * linv[c, b]
            cm[a, b] = v
    # t1 = M H(beta), then out = H(beta')^-1 t1 G; H and H^-1 differ from I only in row q
    mm[:, :] = 0.0
    mm[0, 0] = 1.0
    for a in range(q):
        v = th2[q + a]
        for b in range(a + 1):
            v -= cm[a, b] * th[q + b]
            mm[a + 1, b + 1] = cm[a, b]
        mm[a + 1, 0] = v
    hm[:, :] = 0.0
    for a in range(k):
        hm[a, a] = 1.0
    for a in range(q):
        hm[q, a] = -th[a] / sigma
    hm[q, q] = 1.0 / sigma
    _matmul(mm, hm, t1)
    for j in range(k):  # row q of H(beta')^-1 t1 (column j alone): beta'_0 t1[0] + sum_a beta'_a t1[a] + sigma t1[q]
        v = sigma * t1[q, j]
        for a in range(q):
            v += th2[a] * t1[a, j]
        t1[q, j] = v
    _matmul(t1, G, out)


@njit(cache=True, nogil=True)
def _ancillary_moves(rng, rec, s, G, gc, tall, beta, sigma, mu_w, p_w, prior_sd, lo, hi, s_dp, kernel, scale,
                     moves, mix, ind_means, ind_chols, ind_log_w, nu, rw_chol, box, nmat, cls, t0, sc, uidx, upos,
                     ur, cidx, cpos, cnt, counts, delayed):
    """``moves`` Metropolis-Hastings steps on the frame coordinates theta = (beta, w-bar, L) given the records'
    ancillary configuration (module docstring of ``ancillary_moves``): with probability ``mix`` an independence
    proposal from the t mixture (ind_means, ind_chols, ind_log_w, nu), else a random walk theta + rw_chol z.
    G, beta and s are updated in place on acceptance. ``delayed``: a first stage like ``_moves``'s, with s moved by
    the change of the class sums' part (``_class_stat``; the unsafe records held at their current share), the
    second stage correcting with the reverse move's first stage, so that a proposal far from the posterior is
    rejected at O(k^3). ``counts`` gains (independence proposed,
    accepted, random walk proposed, accepted, evaluated outside the box)."""
    k = G.shape[0]
    q = k - 1
    d = rw_chol.shape[0]
    n = float(rec.shape[0])
    th = np.empty(d)
    th2 = np.empty(d)
    z = np.empty(d)
    w = np.empty(d)
    tc = np.empty((k, k))
    tmp = np.empty((k, k))
    g2 = np.empty((k, k))
    ng = np.empty((k, k))
    mm = np.empty((k, k))
    s2 = np.empty(s.size)
    row = np.empty(q)
    zz = np.empty(k)
    t = np.empty(s.size)
    cum = np.empty(ind_log_w.size)
    f_cur = np.empty(s.size)
    f2 = np.empty(s.size)
    tot = t_mixture_weights(ind_log_w, ind_chols, cum)
    if not frame(G, tall, beta, sigma, tc, tmp, th):
        return
    _class_stat(G, nmat, t0, sc, cnt, f_cur, ng, mm, tmp)
    wk = np.empty((7, k, k))
    lm = _frame_log_prior_into(th, q, n, mu_w, p_w, prior_sd, wk[0, :q, :q])
    lp = lm + log_eta(s, s_dp, kernel, scale)
    for _ in range(moves):
        for j in range(d):
            z[j] = rng.standard_normal()
        ind = mix > 0.0 and rng.random() < mix
        if ind:
            t_mixture_point(rng, ind_means, ind_chols, cum, tot, nu, z, th2)
            counts[0] += 1
        else:
            random_walk_point(th, rw_chol, z, th2)
            counts[2] += 1
        _frame_map_into(th, th2, sigma, G, g2, wk)
        lm2 = _frame_log_prior_into(th2, q, n, mu_w, p_w, prior_sd, wk[0, :q, :q])
        lq = 0.0  # log q(theta) - log q(theta'): the independence proposal's ratio (a random walk's is 1)
        if ind:
            lq = (log_t_mixture(th, ind_means, ind_chols, ind_log_w, nu, w)
                  - log_t_mixture(th2, ind_means, ind_chols, ind_log_w, nu, w))
        l1 = 0.0
        if delayed:
            _class_stat(g2, nmat, t0, sc, cnt, f2, ng, mm, tmp)
            for c in range(s.size):
                t[c] = s[c] + f2[c] - f_cur[c]
            l1 = lm2 + log_eta(t, s_dp, kernel, scale) - lp + lq
            if l1 < 0.0 and math.log(rng.random()) >= l1:
                continue
        inside = _stat_at(g2, gc, box, nmat, t0, sc, ur, cnt, rec, lo, hi, s2, ng, mm, tmp, row, zz, t)
        if not inside:
            counts[4] += 1
        lp2 = lm2 + log_eta(s2, s_dp, kernel, scale)
        la = lp2 - lp + lq
        if delayed:  # the reverse move's first stage, from the proposed state
            for c in range(s.size):
                t[c] = s2[c] + f_cur[c] - f2[c]
            l1_rev = lm + log_eta(t, s_dp, kernel, scale) - lp2 - lq
            la += min(0.0, l1_rev) - min(0.0, l1)
        if la >= 0.0 or math.log(rng.random()) < la:
            counts[1 if ind else 3] += 1
            G[:, :] = g2
            for a in range(q):
                beta[a] = th2[a]
            th[:] = th2
            s[:] = s2
            lp = lp2
            lm = lm2
            if not inside:
                gc[:, :] = G
                _resplit(rec, gc, box, lo, hi, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt)
            _class_stat(G, nmat, t0, sc, cnt, f_cur, ng, mm, tmp)


@njit(cache=True, nogil=True)
def orbit_chain(rng, rec, s, sig, chol, x_mean, x_prec, prior_sd, sig_a, sig_b, lo, hi, s_dp, kernel, scale, start,
                m, n_iter, out_theta, out_acc, out_frac, out_t, refresh, moves, move_chol, box, counts, delayed,
                amoves, amix, ind_means, ind_chols, ind_log_w, nu, rw_chol, mu_w, p_w, out_w, acounts, beta_io,
                tail, tcounts):
    """``n_iter`` iterations of the regression chain with ``moves`` orbit moves each (module docstring): beta (and
    sigma^2) | records, the refresh of ``refresh`` clamped records (-1 all, 0 none), the orbit moves (proposal
    (E, D) = ``move_chol`` N(0, I); ``box[r]`` the Cholesky factor of row r's ellipsoid; ``delayed``: with the
    first stage of ``_moves``), then record moves over the window start..start + m - 1. Records ``out_theta``
    (beta after the moves, sigma^2 last when unknown), the sweep's mean acceptance and accepted fraction, and
    ``out_t`` the free entries of T = sum z z^T at the recorded beta (row 1..k-1, column 0..row). ``counts``
    gains (moves proposed, accepted, evaluated outside the box, past the first stage). Returns the next window's
    start; at the end every record is written as its current value."""
    n, q = rec.shape
    k = q + 1
    xtx = np.empty((q, q))
    xty = np.empty(q)
    yty = np.empty(1)
    statistics(rec, lo, hi, s, xtx, xty, yty)
    tall = np.zeros((k, k))
    for a in range(q):
        for b in range(a + 1):
            tall[a, b] = xtx[a, b]
        tall[q, a] = xty[a]
    tall[q, q] = yty[0]
    G = np.eye(k)
    gc = np.eye(k)
    ginv = np.eye(k)
    nmat = normaliser(lo, hi)
    cls = np.empty(n, dtype=np.int64)
    t0 = np.zeros((k, k))
    sc = np.zeros((2, q, q))
    uidx = np.empty(n, dtype=np.int64)
    upos = np.empty(n, dtype=np.int64)
    ur = np.empty((n, q))
    cidx = np.empty(n, dtype=np.int64)
    cpos = np.empty(n, dtype=np.int64)
    cnt = np.zeros(2, dtype=np.int64)
    ids = np.empty(n, dtype=np.int64)
    beta = np.empty(q)
    tc = np.empty((k, k))
    tmp = np.empty((k, k))
    th_w = np.empty(out_w.shape[1])
    if amoves > 0 and amix > 0.0 and math.isfinite(beta_io[0]):
        # after warm-up the box is centred at the fitted frame (the independence proposals' centre), not at the
        # records the call starts from; it sets the cost only
        if frame(G, tall, beta_io, sig[0], tc, tmp, th_w):
            frame_map(th_w, ind_means[0], sig[0], G, gc)
    _resplit(rec, gc, box, lo, hi, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt)
    for it in range(n_iter):
        _congruence(G, tall, tc, tmp)
        for a in range(q):
            for b in range(q):
                xtx[a, b] = tc[a, b]
            xty[a] = tc[a, q]
        if amoves == 0 or (it == 0 and not math.isfinite(beta_io[0])):
            beta_draw(rng, xtx, xty, sig[0], prior_sd, beta)
        elif it == 0:
            beta[:] = beta_io
        if sig_a > 0.0:
            s2 = sigma2_draw(rng, xtx, xty, tc[q, q], beta, n, sig_a, sig_b)
            sig[0] = math.sqrt(s2)
            out_theta[it, q] = s2
        if refresh != 0:
            _refresh(rng, rec, G, ginv, tall, beta, sig[0], lo, hi, gc, box, cls, t0, sc, uidx, upos, ur, cidx,
                     cpos, cnt, refresh, ids)
        if moves > 0:
            _moves(rng, rec, s, G, gc, tall, beta, sig[0], x_mean, x_prec, prior_sd, lo, hi, s_dp, kernel, scale,
                   moves, move_chol, box, nmat, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt, counts, delayed)
            _lower_inverse(G, ginv)
        if amoves > 0:
            _ancillary_moves(rng, rec, s, G, gc, tall, beta, sig[0], mu_w, p_w, prior_sd, lo, hi, s_dp, kernel, scale,
                             amoves, amix, ind_means, ind_chols, ind_log_w, nu, rw_chol, box, nmat, cls, t0, sc, uidx,
                             upos, ur, cidx, cpos, cnt, acounts, delayed)
            _lower_inverse(G, ginv)
        if amoves > 0:  # the frame, for the moves' fits over warm-up
            if not frame(G, tall, beta, sig[0], tc, tmp, th_w):
                th_w[:] = np.nan
            out_w[it, :] = th_w
        if tail[0] > 0:  # the tail moves' threshold h drawn anew each iteration (module docstring)
            tm = int(tail[0])
            h = tail[1] + rng.random() * (tail[2] - tail[1])
            tried, tacc = _tail_moves(rng, rec, s, G, ginv, tall, beta, chol, x_mean, sig[0], lo, hi, s_dp, kernel,
                                      scale, int(tail[3]), tm, h, gc, box, cls, t0, sc, uidx, upos, ur, cidx, cpos,
                                      cnt)
            tcounts[0] += tried
            tcounts[1] += tacc
            tail[3] = (tail[3] + tm) % n
        for j in range(q):
            out_theta[it, j] = beta[j]
        _congruence(G, tall, tc, tmp)
        idx = 0
        for a in range(1, k):
            for b in range(a + 1):
                out_t[it, idx] = tc[a, b]
                idx += 1
        asum, nacc = _sweep(rng, rec, s, G, ginv, tall, beta, chol, x_mean, sig[0], lo, hi, s_dp, kernel, scale,
                            start, m, gc, box, cls, t0, sc, uidx, upos, ur, cidx, cpos, cnt)
        start += m
        while start >= n:
            start -= n
        out_acc[it] = asum / m
        out_frac[it] = nacc / m
    cur = np.empty(q)
    for i in range(n):
        _current(G, rec, i, cur)
        for a in range(q):
            rec[i, a] = cur[a]
    beta_io[:] = beta
    return start
