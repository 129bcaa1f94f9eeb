#pragma once
// SPDX-License-Identifier: MIT
/// @file plan/exact.hpp The exact planner: the cheapest cluster meeting the SLO (or the fastest within a
/// budget), proven optimal by branch and bound over worker totals and instance types.
///
/// **Reformulation** (docs/model.md section 2). For a fixed total n of workers the contention P(n), the worker bandwidth
/// B_wk(n) and every type's iteration time T_k(n) are fixed (docs/model.md eqs. (1)–(3)). With a_k = 1/T_k(n), a
/// cluster has I = Σ n_k·a_k PS updates per second (eq. 4), weighted batch b_w = Σ n_k·a_k·b_k / I, hourly
/// price P = P_ps + Σ n_k·p_k (P_ps = 0 when the PS is not charged) and, by eq. 7,
///   j = s·(γ2·b_w + γ3) − γ1,  s = sqrt(n)/(L − asymptote) for the seed form,
///                              s = sqrt(n)·sqrt(R + γ4)/(L − asymptote) for the CC form.
/// Let ĵ_k = ŝ·(γ2·b_k + γ3) − γ1 with ŝ = sqrt(n)/(L − asymptote) (seed) or
/// ŝ = sqrt(n)·sqrt(R_lb(n) + γ4)/(L − asymptote) (CC, R_lb below). Because b_w is the a-weighted average of
/// the b_k, Σ_k n_k·a_k·ĵ_k / I = ŝ·(γ2·b_w + γ3) − γ1, which equals j for the seed form and is <= j for
/// the CC form whenever the cluster reaches the target (then γ2·b_w + γ3 > 0 and R >= R_lb). So with the
/// three sums I, P and J = Σ n_k·a_k·ĵ_k (all linear in the counts), every cluster reaching the target obeys
///   time T = j/I >= J/I²   and   3600·cost = P·T >= P·J/I²   (equalities for the seed form).
/// A cluster with j <= 0 (met at start) has J <= 0, which the bounds below turn into a bound of 0.
///
/// **Search.** The totals n in [min_workers, max_workers] (at most the sum of the quotas and limits.hpp's
/// kMaxClusterWorkers) are searched best first as ranges. A priority queue holds ranges of totals, each
/// keyed by a lower bound on the objective of every cluster whose total lies in it ((g) below); the range
/// with the smallest key is taken out and, where the quotas bind and the rates barely vary across it, keyed
/// again by the box relaxation over its totals ((g') below; only the coupled constraint's bound before an
/// incumbent exists, as the objective's cannot prune yet); a second visit splits it in two at the
/// geometric mean of its ends, or, when it is one total n, gives it the root bound of that n (the
/// relaxation below over all types), and a further visit of that n searches it. The visit stops when the smallest key exceeds the incumbent's threshold (ties
/// within detail::kPlanTieRelative are still visited); a range whose time bound exceeds the deadline or
/// whose cost bound exceeds the budget is dropped. So only totals whose own bound can beat the incumbent
/// are looked at one by one: the thousands of totals a large quota allows, where contention and the √n
/// growth of j make every cluster slow and dear, cost a few range bounds, not one root bound each.
/// For one n, a depth-first search fixes the count of one type per level (types in increasing order of the
/// objective of a homogeneous cluster of n workers — Lagrangian with μ of (d) — those violating the
/// coupled constraint last); a node is pruned when a lower bound on the
/// time of every completion exceeds the deadline, a lower bound on the cost exceeds the budget, or a lower
/// bound on the objective exceeds the incumbent's threshold. The counts the branching type may take are
/// split in halves, the larger half first, and a half is dropped as a whole when the bound of "this type
/// gets between lo and hi workers" (the same relaxation with that type's range narrowed) prunes it; a
/// range of at most kDirectChildren counts is expanded child by child, counts from large to small. So a
/// node costs O(types) per bound and O(log quota) bounds per surviving child, not O(quota). A node first
/// bounds all counts of its type above the lowest as one range, then enters the lowest-count child: most
/// types of a large catalog take their lowest count (0) in every good cluster, so along such a run one
/// bound per type rules its other counts out. That child's completions are the node's less one vertex
/// of (f)'s simplex; when the node was a simplex node whose bound's minima lie at other vertices, the
/// child's bound equals the node's, which is reused (Witness). Leaves are
/// evaluated with PerformanceModel::estimate, the function the brute-force planner uses, and offered to the
/// same tie-breaking (detail::PlanIncumbents), so both return the same plan. A total's root, first-visit
/// key or range that (a)–(d) do not prune also offers its nearest completion: the greedy fill minimizing the ratio of (b')'s last
/// tangent, an integer completion (the fill of (a) takes whole workers) at which the relaxation's minimum
/// lies when the relaxation is tight. Without the coupled constraint the relaxed objective is quasi-concave
/// ((f)), so its minimum over the box ∩ {Σ = m} is at a vertex of that polytope, all of which are integer:
/// the bound is then the best completion's value and this offer makes it the incumbent at once. Offering
/// more feasible clusters never changes the answer (the tie-breaking does not depend on the order).
///
/// **Step limit.** Every bound counts the types it looks at (PlanSearchStats::search_steps); a search that
/// reaches PlanProblem::max_search_steps stops where it is and reports the key of the range it was visiting
/// as its lower bound: ranges leave the queue by increasing key and enter it keyed at least their parent's,
/// so every cluster not yet ruled out lies in that range or a later one. assemble_plan turns that into
/// status feasible with the best plan found (or undecided without one).
///
/// **Bounds.** A node fixes counts of some types and leaves m workers for the others, each within its
/// [min, max] range; its completions are the integer points of a box intersected with Σ n_k = m.
///  (a) Ratio bound. For a linear numerator N(x) = c0 + Σ n_k·f_k and I(x) = I0 + Σ n_k·a_k > 0, the
///      minimum of N/I over the completions is computed by Dinkelbach's method: for a trial λ, the
///      minimum g(λ) of N − λ·I over the box ∩ {Σ = m} is a greedy fill (the m smallest f_k − λ·a_k,
///      capacity-capped; the LP has an integral optimum). For every completion N − λI >= g(λ), hence
///      N/I >= λ + min(g(λ), 0)/I_min with I_min the smallest completion rate (the greedy slowest fill).
///      That value is a valid bound at every step (not only at convergence), and at convergence (g = 0)
///      it is the exact minimum.
///  (b) Product bound. For x = X/I with X = c0 + c_p·Σ n_k·p_k (c0, c_p >= 0) and y = J/I: with x_L, y_L
///      the ratio bounds of x and y, every completion has (x − x_L)(y − y_L) >= 0, i.e.
///      x·y >= x_L·y + y_L·x − x_L·y_L (McCormick), and x_L·y + y_L·x = (x_L·J + y_L·X)/I is again a ratio
///      of linear functions, bounded by (a). So X·J/I² >= max(x_L·y_L, S − x_L·y_L) with S the ratio bound
///      of (x_L·J + y_L·X)/I. This couples the price and the iterations under the same weights n_k·a_k/I:
///      it is exact when the minimum lies on a segment between a cheapest and a fewest-iterations
///      completion. If y_L <= 0 (some completion may meet the target at start) the bound is 0.
///  (b') Tangent cuts. The map from the node's completions (relaxed to the box ∩ {Σ = m}) to (u, v) =
///      (X/I, J/I) is linear-fractional, so their image lies in a convex set K, and every ratio bound (a)
///      of α·X + β·J over I (α, β >= 0) is a half-plane α·u + β·v >= s holding K. McCormick's bound is the
///      smallest u·v over the region cut by u >= x_L, v >= y_L and the line of (b); u·v is quasi-concave
///      on the positive quadrant, so that smallest value is at a vertex of the region. Each refinement adds
///      the half-plane whose normal (v*, u*) is the tangent of the hyperbola u·v = const at the lowest
///      vertex (u*, v*), which cuts that vertex off whenever it lies outside K, and takes the lowest vertex
///      again (at most kProductRefinements times, fewer once the bound prunes or the vertex is not cut).
///      Every cut holds K, so every step is a valid bound, rising towards the relaxation's minimum.
///  (c) Time: T >= J/I² = (1/I)·(J/I), the product bound with X = 1. Cost: 3600·cost >= (P_ps + P)·J/I².
///  (d) Lagrangian coupling of objective and constraint (weak duality): for μ >= 0 every completion with
///      T <= D has 3600·cost >= (P_ps + μ + Σ n_k p_k)·J/I² − μ·D (the product bound with c0 = P_ps + μ);
///      in budget mode every completion with cost <= B has T >= (1 + μ·P_ps + μ·Σ n_k p_k)·J/I² − 3600·μ·B.
///      μ is chosen per n at the root when the root is not a simplex node (f) (a geometric grid refined by
///      golden-section search on the root bound); any μ >= 0 gives a valid bound, so it affects speed only.
///      A range's relaxation (g') and, before any incumbent exists, a total's first-visit key use a μ too
///      once (a)–(c) have not pruned: the first such bound chooses it, the later ones reuse it (nearby
///      totals have nearby multipliers). Without it the keys ignore the coupled constraint and order first
///      the totals that cannot meet it (a workload without PS contention searched 121 such totals, 57k nodes).
///  (e) CC form: R_lb(n) = (1 − w1_ub)·sqrt(n/(n − 1)) with w1_ub = s_max/(s_max + (n − 1)·s_min),
///      s_k = b_k/T_k(n) over all usable types: by Cauchy–Schwarz Σ_{i>=2} w_i² >= (1 − w1)²/(n − 1), so
///      R² >= (1 − w1)²·n/(n − 1), and the largest share w1 is at most w1_ub.
///  (f) Simplex nodes (the case of most nodes once the quotas exceed the worker totals that matter).
///      When every free type can take all `extra` remaining workers, the completions are the integer
///      points of the simplex whose u vertices put all of them on one type. On it the relaxed cost
///      (P_ps + P)·J/I² and time J/I² are quasi-concave: their superlevel sets {sqrt(X·J) >= sqrt(c)·I}
///      (X = P_ps + P or 1, X >= 0, J > 0 on the simplex, I > 0) are superlevel sets of concave functions.
///      So (i) the minimum of either over the simplex is the smallest vertex value (exact relaxation), and
///      (ii) the set violating the coupled constraint ({J > D·I²}, resp. {P·J > 3600·B·I²}) is convex, so
///      the feasible part is the simplex minus a convex set. A quasi-concave function's minimum over a
///      compact set equals its minimum over the extreme points of the set's convex hull, and those are
///      feasible vertices or points where an edge leaves the convex set (a boundary point inside a face of
///      dimension >= 2 lies on a feasible tangent segment, so it is not extreme; an edge between two
///      feasible vertices needs no crossing since the objective along it is at least its smaller end).
///      Hence the relaxed optimum is the minimum over the feasible vertices and over the crossings on
///      edges from a feasible to an infeasible vertex. Each crossing (a root of a quadratic in the edge
///      parameter, with exactly one sign change) is bracketed with a certified margin, and the smaller
///      objective at the bracket's ends is used (quasi-concavity along the edge). An edge is skipped when
///      the objective at any crossing, price·D/3600 (resp. 3600·B/price), cannot beat the running
///      minimum. Vertices count as feasible up to the relative slack, which only adds candidates.
///      Only an edge whose crossing can beat the minimum so far is computed: the infeasible vertices t are
///      taken by increasing floor (the objective at the limit at t's price: no crossing of t's edges is
///      lower, and an edge to a vertex s on the other side of t's price cannot beat s itself), and an edge
///      is skipped when the point of it whose price gives the minimum so far is certainly infeasible (the
///      one crossing is then beyond it). A bound asked only whether it prunes stops once its minimum is at
///      or below the value it must exceed; a first visit's key (header, Search) stops after 4 crossings per
///      vertex and returns the smaller of the minimum and the floor of the vertex at hand, still a bound.
///      If J <= 0 at a vertex, the bound is 0. The other constraint and the non-objective figure use the
///      vertex minima (i). A node that is not a simplex (some free type's cap is below `extra`) takes the
///      larger of (a)–(d) and this minimum over the simplex that drops the caps, a superset of its
///      completions.
///  (g) Ranges of totals. For every cluster whose total n lies in N = [n1, n2]:
///      - Network. Eq. 2 reads B_wk(n) = B_req − P(n)·max(0, B_req − B_ps/n). P(n) = clamp(α1·√n + β1, 0, 1)
///        is monotone in n and the second factor is >= 0 and non-decreasing, so on N
///        B_req − max(P(n1), P(n2))·max(0, B_req − B_ps/n2) <= B_wk(n) <= B_req − min(P(n1), P(n2))·max(0, B_req − B_ps/n1)
///        (the left side is >= min(B_req, B_ps/n2) > 0). This bounds the network time 2S/B_wk(n), which every
///        type shares, by [net_lo, net_hi], and every rate by a_k(n) <= a_k^U = 1/(c_k + net_lo), with c_k
///        the type's compute plus PCIe time.
///      - Iterations. ĵ_k^L(n) = σ·√n·β_k − γ1 with β_k = γ2·b_k + γ3 and σ = 1/(L − asymptote) (seed form)
///        or σ = sqrt(R_N + γ4)/(L − asymptote) (CC form), where R_N = 1 − ρ/(ρ + n1 − 1) for n1 >= 2 (0 for
///        n1 = 1) and ρ bounds the ratio of two types' per-worker sample rates b_k/(c_k + net) on N: for a
///        pair the ratio is monotone in net, so ρ is the larger of the ratios at net_lo and net_hi. By (e),
///        R >= 1 − w1 >= 1 − ρ/(ρ + n − 1) >= R_N, so ĵ_k^L(n) <= ĵ_k(n). ĵ_k^L is monotone in n, so its
///        minimum on N is at n1 or n2.
///      - Vertices. For one n, drop the minimum counts and the quotas (a superset of the completions): the
///        clusters of n workers form (f)'s simplex, on which, when every ĵ_k^L(n) > 0, the relaxed time
///        (with ĵ^L, which only lowers J) is at least its smallest vertex value ĵ_k^L(n)/(n·a_k(n)) >=
///        (c_k + net_lo)·f_k(n) with f_k(n) = ĵ_k^L(n)/n = A_k·u − γ1·u², u = n^(−1/2), A_k = σ·β_k; the
///        relaxed cost's vertex values are (P_ps + n·p_k)·ĵ_k^L(n)/(n·a_k(n)) >= (c_k + net_lo)·(P_ps·f_k(n) +
///        p_k·ĵ_k^L(n)), so 3600·cost is at least the smallest of these over k. On N, f_k
///        is smallest at an end: for γ1 >= 0 it is concave in u; for γ1 < 0 it is convex with vertex value
///        A_k²/(4·γ1) < 0, impossible where f_k > 0. The cost term takes each part's minimum on N (at an
///        end; the sum of the minima is at most the minimum of the sum). If some ĵ_k^L is <= 0 on N, the
///        vertex bounds are 0.
///      - Capacity. j is an a-weighted average of the ĵ_k >= ĵ_k^L, so j >= j_min = min_k min_N ĵ_k^L; the
///        rate I is at most G(n2), the largest rate of n2 workers within the minimum counts and the quotas
///        at rates a^U (greedy, fastest first; it grows with n). So time = j/I >= j_min/G(n2), and, as P/I
///        is an a-weighted average of p_k/a_k(n) >= p_k·(c_k + net_lo),
///        3600·cost = (P_ps + P)·j/I >= j_min·(P_ps/G(n2) + min_k p_k·(c_k + net_lo)) (when j_min > 0).
///      A range's bound is the larger of its vertex and capacity bounds. A single total also gets its root
///      bound before it is searched, and its key is the larger of the two.
///  (g') Ranges of totals, the box relaxation. (g) drops the quotas, which is weak once the totals that
///      matter exceed them. For n in N = [n1, n2] every rate is a_k(n) <= a_k^U = 1/(c_k + net_lo) and
///      >= a_k^L = 1/(c_k + net_hi), and ĵ_k(n) >= ĵ_k^L of (g). So with I' = Σ n_k·a_k^U >= I and
///      J' = Σ n_k·a_k^*·ĵ_k^L <= J (a^* = a^L where ĵ_k^L >= 0, a^U where it is negative), every cluster
///      of N reaching the target has T >= J/I² >= J'/I'² when J' >= 0 (else the bound is 0), and 3600·cost
///      >= (P_ps + P)·J'/I'²: the forms of (b)–(d) with these sums, over the box with n1 <= Σ n_k <= n2
///      (group caps (k) included), a convex set on which (a)'s fill is the m smallest values for the m in
///      [n1, n2] that takes every negative one that fits (an integral LP optimum again). Without PS
///      contention a^L = a^U, and the bound loses only √n1 against √n. It costs (a)–(d) over all types,
///      so a range gets it only where it pays (TotalsBounds::relaxation_pays): where (g) is loose because
///      some total exceeds every quota, and the network time varies by at most 0.1% across the range.
/// Every bound is loosened by a relative kPlanBoundSlack (and ĵ_k by an absolute |γ1|·kPlanBoundSlack) so
/// rounding can never prune the optimum.
///
/// **vCPU quota groups** (docs/model.md, "vCPU quota groups"). A group g with value Q_g adds the linear
/// constraint Σ_{k in g} v_k·n_k <= Q_g (v_k the vCPUs of type k; a type belongs to at most one group, the
/// one of the market it is planned in). Write F for the clusters feasible without the groups (the box,
/// the minimum counts, the totals) and F_Q ⊆ F for those within the groups too.
///  (h) Box. Every cluster of F_Q has v_k·(n_k − min_k) <= Q_g − Σ_{l in g} v_l·min_l, so the caps
///      max_k are lowered to min_k + floor((Q_g − the group's minimum use)/v_k), and the largest total to
///      the largest total within the groups (per group the greedy fill of its spare vCPUs by the types
///      with the fewest vCPUs, which maximizes a count with unit values; groups share no type). The new
///      box still holds F_Q (PlanProblem, plan/detail/plan_problem.hpp).
///  (i) Bounds. Every bound (a)–(g) is a lower bound over a set that holds a node's (a range's)
///      completions in F; the completions in F_Q are a subset of those, and a minimum over a superset is
///      at most the minimum over the subset. So each bound stays a valid lower bound, computed without
///      the groups: (a) the greedy fill and Dinkelbach over the box ∩ {Σ = m}, (b)–(d) over the same set,
///      (f) the simplex minus the coupled constraint's convex set, (g) over all clusters of the range's
///      totals. (Weak duality in (d) needs only a set the optimum lies in.) Incumbents come only from
///      F_Q, so the threshold O*·(1 + tol) is the constrained optimum's, and every cluster of F_Q within
///      it lies in a node whose bound is at most its objective: none is pruned.
///  (j) Leaves and completions. Leaves are offered only when within the groups (offer_if_feasible). A
///      child that fixes the count c of its type is entered only if some completion of it lies in F_Q:
///      with the fixed counts' use u_g of each group, each group's spare s_g = Q_g − u_g − Σ_{free k in g}
///      v_k·min_k must be >= 0, and the free types must be able to take exactly the m' remaining workers.
///      Per group the achievable numbers of extra workers form an interval [0, x_g] (remove one worker from
///      any feasible fill and it stays feasible) with x_g the greedy fill of s_g by the fewest vCPUs first,
///      so the totals achievable by the free types are [Σ min, Σ min + Σ_g x_g + Σ_ungrouped (max − min)]:
///      the test is exact, so no feasible child is dropped and no subtree without a feasible cluster is
///      entered. The count range of a grouped type is also capped by floor(s_g'/v_k) + min_k, s_g' its
///      group's spare without its own minimum: the same necessary condition.
///  (k) Group caps and rate. At a node, each group g has s_g = Q_g − (the fixed positions' use) − Σ_{free k
///      in g} v_k·lo_k spare vCPUs for the free types beyond their lower counts, so every completion in F_Q
///      has n_k <= lo_k + floor(s_g/v_k): the node's box is lowered to that before any bound (a superset of
///      its completions in F_Q still, so (i) holds), and a node with some s_g < 0 has none. The rate I of
///      a completion is at most its base rate plus, per group, the fractional knapsack of s_g (most rate
///      per vCPU first, the LP optimum) plus every ungrouped type at its cap: rate_max (a), (b) is the
///      smaller of that and the greedy fastest fill. The ranges of totals (g) take G(n2) as the smaller of
///      the same knapsack over the whole problem and the greedy fill.
///  A cluster of F_Q that could be chosen (within the threshold) is thus never pruned by (i), never cut
///  by (j), and offered at its leaf: the search returns the optimum over F_Q with the same tie-breaking.
///  Without groups (h)–(j) change nothing: the box, the children and the leaves are those of F.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "spotdnn/plan/detail/plan_problem.hpp"
#include "spotdnn/model/iteration_time.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/plan/plan_options.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/plan/slo.hpp"
#include "spotdnn/units.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn {
namespace detail {

/// Relative loosening of every bound of the exact search, far above the rounding of the few operations
/// that compute them, so no bound can exceed the value PerformanceModel::estimate computes.
inline constexpr double kPlanBoundSlack = 1e-9;

/// Lower bounds on the training time (s) and the cost (USD) of a set of clusters.
struct PlanBound {
  double time_lb = 0;
  double cost_lb = 0;
};

/// Per-type constants of total n for the worker types `types` (the usable ones): the rate a_k = 1/T_k(n)
/// and ĵ_k (header, Reformulation; CC form with R_lb(n) of (e) over `types`), loosened by kPlanBoundSlack.
inline void total_constants(const PlanProblem& problem, const std::vector<std::size_t>& types, int n,
                            std::vector<double>& rate, std::vector<double>& jhat) {
  const PerformanceModel& model = problem.model();
  const auto& worker_types = model.worker_types();
  const LossModel& loss = model.workload().loss_model;
  const std::vector<double>& g = loss.gamma;
  const double network_s = network_time_s(model.workload().param_bytes, model.worker_bandwidth_bytes_per_s(n));
  double s_hat = std::sqrt(double(n)) / (problem.target_loss - loss.asymptote());
  if (loss.form == LossForm::cc) {
    double r_lb = 0;
    if (n >= 2) {
      double s_lo = std::numeric_limits<double>::infinity();
      double s_hi = 0;
      for (std::size_t k : types) {
        const WorkerType& w = worker_types[k];
        const double s = w.batch / (w.compute_time_s + network_s + w.pcie_time_s);
        s_lo = std::min(s_lo, s);
        s_hi = std::max(s_hi, s);
      }
      const double w1_ub = s_hi / (s_hi + (n - 1) * s_lo);
      const double r = (1.0 - w1_ub) * std::sqrt(double(n) / double(n - 1));
      r_lb = std::max(0.0, r * (1.0 - kPlanBoundSlack) - kPlanBoundSlack);
    }
    s_hat *= std::sqrt(std::max(0.0, r_lb + g[3]));
  }
  rate.resize(types.size());
  jhat.resize(types.size());
  for (std::size_t q = 0; q < types.size(); ++q) {
    const WorkerType& w = worker_types[types[q]];
    rate[q] = 1.0 / (w.compute_time_s + network_s + w.pcie_time_s);
    const double positive = s_hat * (g[1] * w.batch + g[2]);
    jhat[q] = positive - std::abs(positive) * kPlanBoundSlack - g[0] - std::abs(g[0]) * kPlanBoundSlack;
  }
}

/// Header (g), network: [net_lo, net_hi] bounding the network time 2S/B_wk(n) (s) of every total n in
/// [n1, n2] (1 <= n1 <= n2).
inline std::pair<double, double> network_time_range_s(const PerformanceModel& model, int n1, int n2) {
  const double required = model.workload().required_bandwidth_bytes_per_s;
  const double ps = model.catalog().parameter_server.bandwidth_bytes_per_s;
  const double p1 = model.contention_probability(n1);
  const double p2 = model.contention_probability(n2);
  const double excess1 = std::max(0.0, required - ps / n1);
  const double excess2 = std::max(0.0, required - ps / n2);
  const double bytes = 2 * model.workload().param_bytes;
  return {bytes / (required - std::min(p1, p2) * excess1), bytes / (required - std::max(p1, p2) * excess2)};
}

/// Header (g): lower bounds on the time and cost of every cluster of a problem whose worker total lies in
/// a range [n1, n2]. O(types) per range.
class TotalsBounds {
 public:
  explicit TotalsBounds(const PlanProblem& problem) : model_(problem.model()) {
    const auto& types = model_.worker_types();
    const LossModel& loss = model_.workload().loss_model;
    cc_ = loss.form == LossForm::cc;
    gamma1_ = loss.gamma[0];
    gamma4_ = cc_ ? loss.gamma[3] : 0.0;
    loss_gap_ = problem.target_loss - loss.asymptote();
    ps_price_ = problem.ps_price_usd_per_hour;
    for (std::size_t k = 0; k < types.size(); ++k) {
      if (problem.max_count[k] <= 0) continue;
      const WorkerType& w = types[k];
      const int group = problem.quota_groups.empty() ? -1 : problem.quota_group_of[k];
      const int vcpus = group >= 0 ? problem.vcpus[k] : 0;
      types_.push_back(Type{w.compute_time_s + w.pcie_time_s, w.price_usd_per_hour, loss.gamma[1] * w.batch + loss.gamma[2],
                            w.batch, problem.min_count[k], problem.max_count[k] - problem.min_count[k],
                            vcpus > 0 ? group : -1, vcpus, types_.size()});
      minimum_total_ += problem.min_count[k];
      capacity_total_ += problem.max_count[k] - problem.min_count[k];
      largest_capacity_ = std::max<long long>(largest_capacity_, problem.max_count[k] - problem.min_count[k]);
      if (vcpus > 0) grouped_ = true;
    }
    group_spare_.assign(problem.quota_groups.size(), 0);
    for (std::size_t g = 0; g < problem.quota_groups.size(); ++g) group_spare_[g] = problem.quota_groups[g].limit_vcpus;
    for (const Type& t : types_) {
      if (t.group >= 0) group_spare_[std::size_t(t.group)] -= std::int64_t(t.minimum) * t.vcpus;
    }
    // Fastest first (the same order for every network time): the greedy fill of G.
    std::stable_sort(types_.begin(), types_.end(), [](const Type& a, const Type& b) { return a.fixed_s < b.fixed_s; });
  }

  /// Bounds for every cluster with n1 <= total <= n2 (1 <= n1 <= n2).
  [[nodiscard]] PlanBound operator()(int n1, int n2) const {
    PlanBound b;
    if (types_.empty() || !(loss_gap_ > 0)) return b;
    const auto [net_lo, net_hi] = network_time_range_s(model_, n1, n2);
    const double sigma = iterations_scale(n1, net_lo, net_hi);
    const double root1 = std::sqrt(double(n1));
    const double root2 = std::sqrt(double(n2));
    double vertex_time = kInf;
    double vertex_cost = kInf;
    double j_min = kInf;
    double price_per_rate = kInf;
    bool positive = true;
    for (const Type& t : types_) {
      const auto [j1, j2] = iterations_at_ends(t, sigma, root1, root2);
      const double j_lo = std::min(j1, j2);
      j_min = std::min(j_min, j_lo);
      if (!(j_lo > 0)) positive = false;
      const double period = t.fixed_s + net_lo;  // <= the type's iteration time at every n in N
      const double f = std::min(j1 / n1, j2 / n2);
      vertex_time = std::min(vertex_time, period * f);
      vertex_cost = std::min(vertex_cost, period * (ps_price_ * f + t.price * j_lo));
      price_per_rate = std::min(price_per_rate, t.price * period);
    }
    if (!positive) vertex_time = vertex_cost = 0;
    if (j_min > 0) {
      const double rate = greatest_rate(n2, net_lo);
      b.time_lb = std::max(vertex_time, j_min / rate);
      b.cost_lb = std::max(vertex_cost, j_min * (ps_price_ / rate + price_per_rate)) / units::kSecondsPerHour;
    }
    b.time_lb = std::max(0.0, b.time_lb) * (1.0 - kPlanBoundSlack);
    b.cost_lb = std::max(0.0, b.cost_lb) * (1.0 - kPlanBoundSlack);
    return b;
  }

  /// Whether the range [n1, n2] is worth (g')'s relaxation (speed only): some of its totals exceed every
  /// type's quota beyond the minimum counts ((g)'s vertex bound, one type taking all, is then loose), and
  /// the network time barely varies on it (without PS contention it does not at all), so that the
  /// relaxation's rates a^L and a^U nearly agree.
  [[nodiscard]] bool relaxation_pays(int n1, int n2) const {
    if (n2 - minimum_total_ <= largest_capacity_) return false;
    const auto [net_lo, net_hi] = network_time_range_s(model_, n1, n2);
    return net_hi <= net_lo * (1.0 + kSteadyNetworkRelative);
  }

  /// Header (g'): per usable type (indexed as ExactPlanSearch's usable_: the types with a positive count
  /// limit, catalog order), for every total n in [n1, n2]: rate_hi = a_k^U >= a_k(n) and jrate_lo with
  /// jrate_lo·n_k <= n_k·a_k(n)·ĵ_k(n) for every count n_k >= 0 (a_k^L·ĵ_k^L, or a_k^U·ĵ_k^L where ĵ_k^L < 0).
  void range_constants(int n1, int n2, std::vector<double>& rate_hi, std::vector<double>& jrate_lo) const {
    rate_hi.assign(types_.size(), 0.0);
    jrate_lo.assign(types_.size(), 0.0);
    if (!(loss_gap_ > 0)) return;
    const auto [net_lo, net_hi] = network_time_range_s(model_, n1, n2);
    const double sigma = iterations_scale(n1, net_lo, net_hi);
    const double root1 = std::sqrt(double(n1));
    const double root2 = std::sqrt(double(n2));
    for (const Type& t : types_) {
      const auto [j1, j2] = iterations_at_ends(t, sigma, root1, root2);
      const double j_lo = std::min(j1, j2);
      const double fast = 1.0 / (t.fixed_s + net_lo) * (1.0 + kPlanBoundSlack);
      const double slow = 1.0 / (t.fixed_s + net_hi) * (1.0 - kPlanBoundSlack);
      rate_hi[t.usable] = fast;
      jrate_lo[t.usable] = j_lo >= 0 ? slow * j_lo : fast * j_lo;
    }
  }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  struct Type {
    double fixed_s;  ///< compute + PCIe time (s)
    double price;    ///< $/h
    double beta;     ///< γ2·b + γ3
    double batch;
    int minimum;
    int capacity;  ///< quota (or cap) − minimum
    int group;     ///< its vCPU quota group (header (h)), or -1 (none, or no vCPU count)
    int vcpus;     ///< vCPUs of one instance when grouped
    std::size_t usable;  ///< its index among the usable types (catalog order)
  };

  /// σ of header (g), iterations: ĵ_k^L(n) = σ·√n·β_k − γ1 on [n1, n2] with network times in [net_lo, net_hi].
  [[nodiscard]] double iterations_scale(int n1, double net_lo, double net_hi) const {
    double sigma = 1.0 / loss_gap_;
    if (cc_) {
      double r = 0;
      if (n1 >= 2) {
        const double rho = std::max(rate_ratio(net_lo), rate_ratio(net_hi));
        r = 1.0 - rho / (rho + (n1 - 1));
        r = std::max(0.0, r * (1.0 - kPlanBoundSlack) - kPlanBoundSlack);
      }
      sigma *= std::sqrt(std::max(0.0, r + gamma4_));
    }
    return sigma;
  }

  /// ĵ_t^L at the range's ends (√n1, √n2), loosened by kPlanBoundSlack.
  [[nodiscard]] std::pair<double, double> iterations_at_ends(const Type& t, double sigma, double root1, double root2) const {
    const double offset = gamma1_ + std::abs(gamma1_) * kPlanBoundSlack;
    double a = sigma * t.beta;
    a -= std::abs(a) * kPlanBoundSlack;
    return {a * root1 - offset, a * root2 - offset};
  }

  /// The largest over the types of b_k/(c_k + net) divided by the smallest.
  [[nodiscard]] double rate_ratio(double net) const {
    double lo = kInf;
    double hi = 0;
    for (const Type& t : types_) {
      const double s = t.batch / (t.fixed_s + net);
      lo = std::min(lo, s);
      hi = std::max(hi, s);
    }
    return hi / lo;
  }

  /// G: an upper bound on Σ n_k/(c_k + net) over clusters of at most n workers within the minimum counts
  /// and quotas (the greedy fill, fastest first: exact) and within the vCPU quota groups (header (k)).
  [[nodiscard]] double greatest_rate(int n, double net) const {
    double rate = 0;
    long long left = std::min<long long>(n, minimum_total_ + capacity_total_) - minimum_total_;
    for (const Type& t : types_) {
      const long long take = std::min<long long>(std::max(0LL, left), t.capacity);
      rate += double(t.minimum + take) / (t.fixed_s + net);
      left -= take;
    }
    return grouped_ ? std::min(rate, greatest_rate_within_groups(net)) : rate;
  }

  /// Header (k): the largest Σ n_k/(c_k + net) within the minimum counts, the quotas and the vCPU quota
  /// groups, whatever the total: per group the fractional knapsack of its spare vCPUs (most rate per vCPU
  /// first; the LP optimum, so an upper bound on every integer fill), every other type at its quota.
  [[nodiscard]] double greatest_rate_within_groups(double net) const {
    double rate = 0;
    knapsack_.clear();
    for (std::size_t q = 0; q < types_.size(); ++q) {
      const Type& t = types_[q];
      const double a = 1.0 / (t.fixed_s + net);
      rate += t.minimum * a;
      if (t.group < 0) {
        rate += t.capacity * a;
      } else if (t.capacity > 0) {
        knapsack_.emplace_back(a / t.vcpus, q);
      }
    }
    std::sort(knapsack_.begin(), knapsack_.end(), [&](const auto& x, const auto& y) {
      return types_[x.second].group != types_[y.second].group ? types_[x.second].group < types_[y.second].group
                                                             : x.first > y.first;
    });
    spare_scratch_ = group_spare_;
    for (const auto& [per_vcpu, q] : knapsack_) {
      const Type& t = types_[q];
      double& spare = spare_scratch_[std::size_t(t.group)];
      if (!(spare > 0)) continue;
      const double vcpus = std::min(spare, double(t.capacity) * t.vcpus);
      rate += vcpus * per_vcpu;
      spare -= vcpus;
    }
    return rate * (1.0 + kPlanBoundSlack);
  }

  const PerformanceModel& model_;
  std::vector<Type> types_;
  bool grouped_ = false;
  std::vector<double> group_spare_;  ///< per quota group: its limit less its types' minimum counts (vCPUs)
  mutable std::vector<std::pair<double, std::size_t>> knapsack_;  ///< scratch: (rate per vCPU, type)
  mutable std::vector<double> spare_scratch_;
  long long minimum_total_ = 0;
  long long capacity_total_ = 0;
  long long largest_capacity_ = 0;  ///< the largest quota (or cap) less minimum of one type
  /// relaxation_pays: the largest relative spread of the network time on a range worth (g').
  static constexpr double kSteadyNetworkRelative = 1e-3;
  bool cc_ = false;
  double gamma1_ = 0;
  double gamma4_ = 0;
  double loss_gap_ = 0;
  double ps_price_ = 0;
};

/// How ExactPlanSearch visits totals and counts.
enum class ExactSearchOrder {
  ranges,      ///< ranges of totals best first by bound (g), count ranges halved: the planner's search
  every_total  ///< the root bound of every total, then totals by it, every count one by one: a slower
               ///< reference for tests (the search before (g)), with the same bounds (a)–(f) and leaves
};

/// One branch-and-bound search of a PlanProblem for one objective, deadline and budget.
class ExactPlanSearch {
 public:
  ExactPlanSearch(const PlanProblem& problem, PlanObjective objective, double deadline_s, double budget_usd,
                  PlanSearchStats& stats, ExactSearchOrder order = ExactSearchOrder::ranges)
      : problem_(problem),
        objective_(objective),
        deadline_s_(deadline_s),
        budget_usd_(budget_usd),
        stats_(stats),
        incumbents_(objective),
        every_total_(order == ExactSearchOrder::every_total),
        groups_(!problem.quota_groups.empty()),
        first_step_(stats.search_steps) {
    const auto& types = problem.model().worker_types();
    counts_.assign(types.size(), 0);
    for (std::size_t k = 0; k < types.size(); ++k) {
      if (problem.max_count[k] > 0) usable_.push_back(k);
    }
    const LossModel& loss = problem.model().workload().loss_model;
    loss_gap_ = problem.target_loss - loss.asymptote();
    costed_ = objective_ == PlanObjective::min_cost || std::isfinite(budget_usd_);
    timed_ = objective_ == PlanObjective::min_time || std::isfinite(deadline_s_);
    ps_price_ = problem.ps_price_usd_per_hour;
    used_.assign(problem.quota_groups.size(), 0);
    spare_.assign(problem.quota_groups.size(), 0);
  }

  [[nodiscard]] std::optional<PlanCandidate> run() {
    if (usable_.empty() || !(loss_gap_ > 0) || problem_.min_workers > problem_.max_workers) return std::nullopt;
    if (every_total_) return run_every_total();
    const TotalsBounds totals(problem_);
    // Ranges of totals by increasing key (then smaller totals first). A range enters keyed by (g); `refined`
    // marks one whose key also holds its relaxation: the root bound of a single total, (g') of a range.
    struct Range {
      double key;
      int n1, n2;
      bool refined;
    };
    auto later = [](const Range& a, const Range& b) { return a.key != b.key ? a.key > b.key : a.n1 > b.n1; };
    std::priority_queue<Range, std::vector<Range>, decltype(later)> queue(later);
    auto offer_range = [&](int n1, int n2, double floor, const Bound& b, bool refined) {
      if (b.time_lb > deadline_s_ || b.cost_lb > budget_usd_) return;
      const double key = std::max(floor, objective_ == PlanObjective::min_cost ? b.cost_lb : b.time_lb);
      if (key > incumbents_.objective_threshold()) return;
      queue.push(Range{key, n1, n2, refined});
    };
    offer_range(problem_.min_workers, problem_.max_workers, 0.0, totals(problem_.min_workers, problem_.max_workers), false);
    while (!queue.empty()) {
      Range r = queue.top();
      queue.pop();
      if (r.key > incumbents_.objective_threshold()) break;
      // Ranges leave the queue by increasing key and enter it keyed at least their parent's, so r.key
      // bounds every cluster not yet ruled out: what a search stopped here (or in r's totals) reports.
      if (out_of_steps()) return stop(r.key);
      if (const auto w = incumbents_.unbeatable_above_workers()) {
        if (r.n1 > *w) continue;
        r.n2 = std::min(r.n2, *w);
      }
      if (r.n1 < r.n2 && !r.refined && totals.relaxation_pays(r.n1, r.n2)) {  // first visit: the box relaxation of the range (g')
        offer_range(r.n1, r.n2, r.key, range_bound(totals, r.n1, r.n2, incumbents_.empty()), true);
        continue;
      }
      if (r.n1 < r.n2) {  // split at the geometric mean
        const int mid = std::clamp(static_cast<int>(std::sqrt(double(r.n1) * double(r.n2))), r.n1, r.n2 - 1);
        offer_range(r.n1, mid, r.key, totals(r.n1, mid), false);
        offer_range(mid + 1, r.n2, r.key, totals(mid + 1, r.n2), false);
        continue;
      }
      const int n = r.n1;
      if (!r.refined) {  // first visit: the root bound of n
        prepare(n, false);
        key_only_ = true;
        const Bound key = bound(0, n, Part{}, -1, 0, 0, false);
        key_only_ = false;
        offer_range(n, n, r.key, key, true);
        continue;
      }
      ++stats_.worker_totals;
      prepare(n, true);
      if (!completable(0, n)) continue;  // header (j): no cluster of n workers within the quota groups
      if (prunable(0, n, Part{}, -1, 0, 0, true)) continue;
      const Witness witness = witness_;
      dfs(0, n, Part{}, &witness);
      if (stopped_) return stop(r.key);
    }
    return incumbents_.best();
  }

  /// The search's step limit (PlanProblem::max_search_steps) is reached: stop_ then makes dfs unwind.
  [[nodiscard]] bool out_of_steps() {
    if (stats_.search_steps - first_step_ >= problem_.max_search_steps) stopped_ = true;
    return stopped_;
  }

  /// The answer of a search stopped with every cluster not yet ruled out costing (taking) at least `key`.
  [[nodiscard]] std::optional<PlanCandidate> stop(double key) {
    stats_.stopped = true;
    stats_.stopped_lower_bound = key;
    return incumbents_.best();
  }

 private:
  /// Header (g'): bounds (a)–(d) on every cluster whose total lies in [n1, n2] (n1 < n2), over the box
  /// (minimum counts, quotas, group caps (k)) with n1 <= Σ n_k <= n2, at the range's rate and iteration
  /// constants; only the coupled constraint's (the deadline's time, the budget's cost) when
  /// `constraint_only` (before an incumbent: the objective's bound cannot prune yet, the constraint's can).
  /// Sets the per-n state (the next total's visit prepares its own).
  [[nodiscard]] PlanBound range_bound(const TotalsBounds& totals, int n1, int n2, bool constraint_only) {
    ++stats_.total_ranges;
    totals.range_constants(n1, n2, rate_k_, jrate_k_);
    std::vector<std::size_t>& order = order_scratch_;
    order.resize(usable_.size());
    for (std::size_t q = 0; q < order.size(); ++q) order[q] = q;
    set_positions(order);
    witness_.valid = false;
    mu_ = 0;
    if (!load_node(0, n1, Part{}, -1, 0, 0, n2)) return PlanBound{kInf, kInf};
    objective_direction_ = Direction{};
    const PlanBound b = general_bound(false, true, constraint_only);
    if (!prune(b)) offer_nearest_completion();
    return b;
  }

  /// ExactSearchOrder::every_total: root bounds of every total first, then the totals by increasing bound.
  [[nodiscard]] std::optional<PlanCandidate> run_every_total() {
    std::vector<std::pair<double, int>> totals;
    for (int n = problem_.min_workers; n <= problem_.max_workers; ++n) {
      prepare(n, false);
      const Bound b = bound(0, n, Part{}, -1, 0, 0, false);
      if (b.time_lb > deadline_s_ || b.cost_lb > budget_usd_) continue;
      totals.emplace_back(objective_ == PlanObjective::min_cost ? b.cost_lb : b.time_lb, n);
    }
    std::sort(totals.begin(), totals.end());
    for (const auto& [key, n] : totals) {
      if (key > incumbents_.objective_threshold()) break;
      if (out_of_steps()) return stop(key);
      if (const auto w = incumbents_.unbeatable_above_workers(); w && n > *w) continue;
      ++stats_.worker_totals;
      prepare(n, true);
      if (!completable(0, n)) continue;
      if (prunable(0, n, Part{}, -1, 0, 0, true)) continue;
      dfs(0, n, Part{});
      if (stopped_) return stop(key);
    }
    return incumbents_.best();
  }

  static constexpr double kInf = std::numeric_limits<double>::infinity();
  static constexpr int kDinkelbachSteps = 60;
  /// Tangent cuts added to McCormick's product bound (header (b')); 0 keeps McCormick's alone.
  static constexpr int kProductRefinements = 4;
  /// choose_mu's search: grid points every kMuGridStep powers of 2, then kMuGoldenSteps golden sections.
  static constexpr int kMuGridStep = 4;
  static constexpr int kMuGoldenSteps = 6;
  /// Count ranges of a branching type up to this size are expanded child by child; larger ones are halved.
  static constexpr int kDirectChildren = 4;

  using Bound = PlanBound;

  /// Sums of a partial assignment: Σ n·a, Σ n·a·ĵ, Σ n·p.
  struct Part {
    double rate = 0;
    double jrate = 0;
    double price = 0;
  };

  /// Where a simplex node's bound (header (f)) found its minima: the positions of the vertices (or the
  /// edge's two vertices) achieving the time and cost figures it returned, -1 for none. A child that
  /// only drops one free position at its lowest count keeps the node's base and extra, so its vertices
  /// are the node's less that position's: when the position is none of these, the child's bound
  /// computation would find the same figures (header, Search).
  struct Witness {
    bool valid = false;
    Bound bound;
    int time_pos = -1, cost_pos = -1, edge_from = -1, edge_to = -1;
    [[nodiscard]] bool involves(int pos) const {
      return pos == time_pos || pos == cost_pos || pos == edge_from || pos == edge_to;
    }
  };

  /// The ratio (c0 + cp·Σ n·p + cj·Σ n·a·ĵ)/Σ n·a whose minimizing completion is nearest a product bound's
  /// minimum: the tangent at its lowest vertex (header (b')).
  struct Direction {
    double c0 = 0, cp = 0, cj = 0;
  };

  /// A cut a·u + b·v >= s (a, b >= 0) on u = X/I and v = J/I over a node's completions (header (b')).
  struct Cut {
    double a, b, s;
  };

  /// A type's share of a node's free capacity.
  struct Item {
    double rate;
    double jrate;
    double price;
    int cap;
    int pos;
  };

  /// A point of a simplex node: sums, total hourly price (PS included), relaxed time and cost.
  struct Vertex {
    double rate, jrate, price, time, cost;
    bool feasible = false;
  };

  /// Per-n constants: rates, ĵ, the branching order (positions) and suffix sums over it.
  void prepare(int n, bool full) {
    const PerformanceModel& model = problem_.model();
    const auto& types = model.worker_types();
    total_constants(problem_, usable_, n, rate_k_, jhat_k_);
    jrate_k_.resize(rate_k_.size());
    for (std::size_t q = 0; q < rate_k_.size(); ++q) jrate_k_[q] = rate_k_[q] * jhat_k_[q];
    const std::size_t u = usable_.size();
    std::vector<std::size_t>& order = order_scratch_;
    order.resize(u);
    for (std::size_t q = 0; q < u; ++q) order[q] = q;
    if (full) {
      // Branching order: the Lagrangian price of a homogeneous cluster of n workers, using μ of the root.
      set_positions(order);
      const bool simplex = load_node(0, n, Part{}, -1, 0, 0) && simplex_node();
      mu_ = simplex ? 0.0 : choose_mu(n);
      // A homogeneous cluster's objective (Lagrangian with μ), those violating the coupled constraint last.
      auto key = [&](std::size_t q) {
        const double price = types[usable_[q]].price_usd_per_hour;
        const double time = jhat_k_[q] / (n * rate_k_[q]);
        const double cost = (ps_price_ + n * price) * time / units::kSecondsPerHour;
        const bool violates = objective_ == PlanObjective::min_cost ? time > deadline_s_ : cost > budget_usd_;
        const double value = objective_ == PlanObjective::min_cost ? (ps_price_ + mu_ + n * price) * time
                                                                   : (1.0 + mu_ * (ps_price_ + n * price)) * time;
        return std::make_pair(simplex && violates, value);
      };
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
    } else {
      mu_ = 0;
    }
    set_positions(order);
  }

  /// Lays the usable types out in `order` (indices into usable_) with their suffix sums.
  void set_positions(const std::vector<std::size_t>& order) {
    const auto& types = problem_.model().worker_types();
    const std::size_t u = order.size();
    type_.resize(u);
    rate_.resize(u);
    jrate_.resize(u);
    price_.resize(u);
    lo_.resize(u);
    hi_.resize(u);
    for (std::size_t t = 0; t < u; ++t) {
      const std::size_t q = order[t];
      const std::size_t k = usable_[q];
      type_[t] = k;
      rate_[t] = rate_k_[q];
      jrate_[t] = jrate_k_[q];
      price_[t] = types[k].price_usd_per_hour;
      lo_[t] = problem_.min_count[k];
      hi_[t] = problem_.max_count[k];
    }
    suf_lo_.assign(u + 1, 0);
    suf_hi_.assign(u + 1, 0);
    for (std::size_t t = u; t-- > 0;) {
      suf_lo_[t] = suf_lo_[t + 1] + lo_[t];
      suf_hi_[t] = suf_hi_[t + 1] + hi_[t];
    }
    by_rate_.resize(u);
    for (std::size_t t = 0; t < u; ++t) by_rate_[t] = static_cast<int>(t);
    std::stable_sort(by_rate_.begin(), by_rate_.end(), [&](int a, int b) { return rate_[a] > rate_[b]; });
    if (groups_) {
      group_.resize(u);
      vcpu_.resize(u);
      by_vcpus_.clear();
      for (std::size_t t = 0; t < u; ++t) {
        group_[t] = problem_.quota_group_of[type_[t]];
        vcpu_[t] = problem_.vcpus[type_[t]];
        if (group_[t] >= 0) by_vcpus_.push_back(t);
      }
      std::stable_sort(by_vcpus_.begin(), by_vcpus_.end(), [&](std::size_t a, std::size_t b) { return vcpu_[a] < vcpu_[b]; });
      by_rate_per_vcpu_.clear();
      for (std::size_t t : by_vcpus_) {
        if (vcpu_[t] > 0) by_rate_per_vcpu_.push_back(t);
      }
      std::stable_sort(by_rate_per_vcpu_.begin(), by_rate_per_vcpu_.end(),
                       [&](std::size_t a, std::size_t b) { return rate_[a] * double(vcpu_[b]) > rate_[b] * double(vcpu_[a]); });
      free_cap_.assign(u, 0);
    }
  }

  /// Header (j): some completion of positions >= i with exactly m workers (each within its range) keeps
  /// every quota group within its limit, given the use used_ of the fixed positions. Exact.
  [[nodiscard]] bool completable(std::size_t i, int m) {
    if (!groups_) return true;
    const std::size_t u = type_.size();
    for (std::size_t g = 0; g < spare_.size(); ++g) spare_[g] = problem_.quota_groups[g].limit_vcpus - used_[g];
    long long extra = 0;
    for (std::size_t t = i; t < u; ++t) {
      if (group_[t] >= 0) {
        spare_[std::size_t(group_[t])] -= std::int64_t(lo_[t]) * vcpu_[t];
      } else {
        extra += hi_[t] - lo_[t];
      }
    }
    for (std::int64_t s : spare_) {
      if (s < 0) return false;
    }
    for (std::size_t t : by_vcpus_) {
      if (t < i) continue;
      std::int64_t& s = spare_[std::size_t(group_[t])];
      const std::int64_t take = vcpu_[t] > 0 ? std::min<std::int64_t>(hi_[t] - lo_[t], s / vcpu_[t]) : hi_[t] - lo_[t];
      extra += take;
      s -= take * vcpu_[t];
    }
    return m - suf_lo_[i] <= extra;
  }

  /// Header (k): node_spare_[g] = the vCPUs group g has left for the free positions >= i beyond their
  /// minimum counts (position `narrow`, if >= 0, at least narrow_lo), given the fixed positions' use.
  /// False when some group is already over its limit: no completion exists.
  bool group_spare(std::size_t i, int narrow, int narrow_lo) {
    node_spare_.resize(spare_.size());
    for (std::size_t g = 0; g < node_spare_.size(); ++g) node_spare_[g] = problem_.quota_groups[g].limit_vcpus - used_[g];
    for (std::size_t t = i; t < type_.size(); ++t) {
      if (group_[t] < 0) continue;
      const int lo = static_cast<int>(t) == narrow ? narrow_lo : lo_[t];
      node_spare_[std::size_t(group_[t])] -= std::int64_t(lo) * vcpu_[t];
    }
    for (std::int64_t s : node_spare_) {
      if (s < 0) return false;
    }
    return true;
  }

  /// Header (j): the largest count position i may take within its quota group, given the fixed
  /// positions' use and the minimum counts of the later positions of the same group.
  [[nodiscard]] int group_cap(std::size_t i) const {
    const int g = group_[i];
    if (g < 0 || vcpu_[i] <= 0) return hi_[i];
    std::int64_t spare = problem_.quota_groups[std::size_t(g)].limit_vcpus - used_[std::size_t(g)];
    for (std::size_t t = i + 1; t < type_.size(); ++t) {
      if (group_[t] == g) spare -= std::int64_t(lo_[t]) * vcpu_[t];
    }
    return static_cast<int>(std::min<std::int64_t>(hi_[i], std::max<std::int64_t>(-1, spare / vcpu_[i])));
  }

  /// Sets up node_ for the completions of positions >= i with `m` workers (between m and m_max when
  /// m_max > m: a range of totals, header (g')), the fixed part `fixed`, and position `narrow` (if >= 0)
  /// restricted to [narrow_lo, narrow_hi]. False when no completion exists.
  bool load_node(std::size_t i, int m, const Part& fixed, int narrow, int narrow_lo, int narrow_hi, int m_max = -1) {
    node_.base = fixed;
    node_.first = i;
    node_.workers = std::max(m, m_max);
    node_.narrow = narrow;
    node_.narrow_lo = narrow_lo;
    items_.clear();
    stats_.search_steps += static_cast<std::int64_t>(by_rate_.size());
    if (groups_ && !group_spare(i, narrow, narrow_lo)) return false;
    int low_total = 0;
    int cap_total = 0;
    for (int t : by_rate_) {
      if (t < static_cast<int>(i)) continue;
      const int lo = t == narrow ? narrow_lo : lo_[t];
      int hi = t == narrow ? narrow_hi : hi_[t];
      if (groups_ && group_[t] >= 0 && vcpu_[t] > 0) {  // header (k): the group's spare caps the count
        hi = static_cast<int>(std::min<std::int64_t>(hi, lo + node_spare_[std::size_t(group_[t])] / vcpu_[t]));
      }
      if (lo > hi) return false;
      if (groups_) free_cap_[std::size_t(t)] = hi - lo;
      low_total += lo;
      node_.base.rate += lo * rate_[t];
      node_.base.jrate += lo * jrate_[t];
      node_.base.price += lo * price_[t];
      if (hi > lo) {
        items_.push_back(Item{rate_[t], jrate_[t], price_[t], hi - lo, t});
        cap_total += hi - lo;
      }
    }
    node_.extra = m - low_total;
    node_.extra_max = node_.extra;
    if (m_max > m) {
      node_.extra = std::max(node_.extra, 0);
      node_.extra_max = std::min(m_max - low_total, cap_total);
    }
    if (node_.extra < 0 || node_.extra > cap_total || node_.extra_max < node_.extra) return false;
    // The fastest completion (of the most workers) and the slowest (of the fewest); items_ is in decreasing rate.
    node_.fast = Part{};
    int left = node_.extra_max;
    for (const Item& it : items_) {
      if (left == 0) break;
      const int take = std::min(left, it.cap);
      node_.fast.rate += take * it.rate;
      node_.fast.jrate += take * it.jrate;
      node_.fast.price += take * it.price;
      left -= take;
    }
    double slow = 0;
    left = node_.extra;
    for (auto it = items_.rbegin(); it != items_.rend() && left > 0; ++it) {
      const int take = std::min(left, it->cap);
      slow += take * it->rate;
      left -= take;
    }
    node_.rate_max = node_.base.rate + node_.fast.rate;
    node_.rate_min = node_.base.rate + slow;
    if (groups_) node_.rate_max = std::min(node_.rate_max, node_.base.rate + greatest_extra_rate_within_groups(i));
    return node_.rate_min > 0;
  }

  /// Header (k): an upper bound on the extra rate Σ (n_t − lo_t)·a_t the free positions >= i of the loaded
  /// node can add within their caps and their groups' spare vCPUs, whatever their number: per group the
  /// fractional knapsack (most rate per vCPU first, the LP optimum), every ungrouped position at its cap.
  [[nodiscard]] double greatest_extra_rate_within_groups(std::size_t i) {
    double rate = 0;
    spare_ = node_spare_;
    for (std::size_t t = i; t < type_.size(); ++t) {
      if (group_[t] < 0 || vcpu_[t] <= 0) rate += free_cap_[t] * rate_[t];
    }
    for (std::size_t t : by_rate_per_vcpu_) {
      if (t < i) continue;
      std::int64_t& spare = spare_[std::size_t(group_[t])];
      if (spare <= 0) continue;
      const std::int64_t take = std::min<std::int64_t>(free_cap_[t], spare / vcpu_[t]);
      rate += double(take) * rate_[t];
      spare -= take * vcpu_[t];
      if (take < free_cap_[t] && spare > 0) {  // the fractional part of the next instance
        rate += double(spare) / double(vcpu_[t]) * rate_[t];
        spare = 0;
      }
    }
    return rate * (1.0 + kPlanBoundSlack);
  }

  /// Header (a): a lower bound on min over the node's completions of (c0 + cp·Σ n·p + cj·Σ n·a·ĵ)/Σ n·a.
  [[nodiscard]] double min_ratio(double c0, double cp, double cj) {
    const double n0 = c0 + cp * node_.base.price + cj * node_.base.jrate;
    double lambda = (n0 + cp * node_.fast.price + cj * node_.fast.jrate) / node_.rate_max;
    double best = -kInf;
    const std::size_t count = items_.size();
    value_.resize(count);
    taken_.resize(count);
    for (int step = 0; step < kDinkelbachSteps; ++step) {
      for (std::size_t q = 0; q < count; ++q) {
        value_[q] = cp * items_[q].price + cj * items_[q].jrate - lambda * items_[q].rate;
      }
      double g = n0 - lambda * node_.base.rate;
      double num = n0;
      double den = node_.base.rate;
      select_smallest(range_fill());
      for (std::size_t q = 0; q < count; ++q) {
        if (taken_[q] == 0) continue;
        g += taken_[q] * value_[q];
        num += taken_[q] * (cp * items_[q].price + cj * items_[q].jrate);
        den += taken_[q] * items_[q].rate;
      }
      best = std::max(best, g < 0 ? lambda + g / node_.rate_min : lambda);
      if (!(g < 0)) break;
      const double next = num / den;
      if (!(next < lambda)) break;
      lambda = next;
    }
    return best;
  }

  /// How many extra workers the greedy fill of min_ratio takes: node_.extra, or for a range of totals
  /// (header (g')) as many as have a negative value_, within [extra, extra_max] (the smallest Σ value
  /// over the box with that many workers: the smallest values first, the negative ones all if they fit).
  [[nodiscard]] int range_fill() const {
    if (node_.extra_max == node_.extra) return node_.extra;
    long long negative = 0;
    for (std::size_t q = 0; q < items_.size(); ++q) {
      if (value_[q] < 0) negative += items_[q].cap;
    }
    return static_cast<int>(std::clamp<long long>(negative, node_.extra, node_.extra_max));
  }

  /// taken_[q] = how many of item q the greedy fill of `extra` workers by smallest value_ takes.
  void select_smallest(int extra) {
    const std::size_t count = items_.size();
    stats_.search_steps += static_cast<std::int64_t>(count);
    std::fill(taken_.begin(), taken_.end(), 0);
    int left = extra;
    for (int scan = 0; scan < 2 && left > 0; ++scan) {  // one or two types needed: minimum scans
      std::size_t best = count;
      for (std::size_t q = 0; q < count; ++q) {
        if (taken_[q] == 0 && (best == count || value_[q] < value_[best])) best = q;
      }
      if (best == count) return;
      taken_[best] = std::min(left, items_[best].cap);
      left -= taken_[best];
    }
    if (left == 0) return;
    // Many types needed: a capacity-weighted quickselect over the others (expected linear time): items
    // below the pivot value are taken whole if they fit, else the fill ends among them.
    rank_.clear();
    for (std::size_t q = 0; q < count; ++q) {
      if (taken_[q] == 0) rank_.push_back(q);
    }
    std::size_t lo = 0;
    std::size_t hi = rank_.size();
    while (left > 0 && lo < hi) {
      const double pivot = value_[rank_[lo + (hi - lo) / 2]];
      std::size_t below = lo;  // [lo, below) < pivot, [below, i) == pivot, [above, hi) > pivot
      std::size_t i = lo;
      std::size_t above = hi;
      while (i < above) {
        const double v = value_[rank_[i]];
        if (v < pivot) {
          std::swap(rank_[below++], rank_[i++]);
        } else if (v > pivot) {
          std::swap(rank_[i], rank_[--above]);
        } else {
          ++i;
        }
      }
      long long capacity = 0;
      for (std::size_t r = lo; r < below; ++r) capacity += items_[rank_[r]].cap;
      if (capacity > left) {
        hi = below;
        continue;
      }
      for (std::size_t r = lo; r < above && left > 0; ++r) {
        const std::size_t q = rank_[r];
        taken_[q] = std::min(left, items_[q].cap);
        left -= taken_[q];
      }
      lo = above;
    }
  }

  /// Header (b): a lower bound on (c0 + cp·Σ n·p)·J/I² over the node's completions, given y_L: McCormick's
  /// bound, then `refinements` tangent cuts of header (b'), each one ratio bound (a).
  /// Refining stops early once the bound exceeds `stop` (the value above which the caller prunes).
  [[nodiscard]] double product_lower(double c0, double cp, double y_lo, int refinements = kProductRefinements,
                                     double stop = kInf) {
    return product_lower_from(cp == 0 ? c0 / node_.rate_max : min_ratio(c0, cp, 0), c0, cp, y_lo, refinements, stop);
  }

  /// product_lower given x_L, the ratio bound (a) of (c0 + cp·Σ n·p)/Σ n·a.
  [[nodiscard]] double product_lower_from(double x_lo, double c0, double cp, double y_lo, int refinements, double stop) {
    if (!(x_lo > 0)) return 0;
    const double corner = x_lo * y_lo;
    const double s = min_ratio(y_lo * c0, y_lo * cp, x_lo);
    if (refinements == 0) return std::max(corner, s - corner);
    cuts_.clear();
    cuts_.push_back(Cut{1, 0, x_lo});
    cuts_.push_back(Cut{0, 1, y_lo});
    cuts_.push_back(Cut{y_lo, x_lo, s});
    double best = 0;
    for (int step = 0;; ++step) {
      const auto [value, u, v] = lowest_vertex();
      best = value;
      last_direction_ = Direction{v * c0, v * cp, u};
      if (step == refinements || !(u > 0) || !(v > 0) || !std::isfinite(value) || value > stop) break;
      // The hyperbola u·v = value touches the region at (u, v); the cut with its tangent's normal (v, u).
      const double cut = min_ratio(v * c0, v * cp, u);
      if (!(cut > 2 * value * (1 + 1e-9))) break;  // the vertex is not cut off: refining stops
      cuts_.push_back(Cut{v, u, cut});
    }
    return std::max(corner, best);
  }

  /// Header (b'): the smallest u·v over the vertices of {u, v >= 0: a·u + b·v >= s for every cut} and that
  /// vertex. A vertex counts as inside with a relative margin, which only adds candidates.
  [[nodiscard]] std::tuple<double, double, double> lowest_vertex() const {
    double best = kInf;
    double best_u = 0;
    double best_v = 0;
    for (std::size_t i = 0; i < cuts_.size(); ++i) {
      for (std::size_t j = i + 1; j < cuts_.size(); ++j) {
        const Cut& p = cuts_[i];
        const Cut& q = cuts_[j];
        const double det = p.a * q.b - q.a * p.b;
        if (det == 0) continue;
        const double u = (p.s * q.b - q.s * p.b) / det;
        const double v = (p.a * q.s - q.a * p.s) / det;
        bool inside = true;
        for (const Cut& c : cuts_) {
          if (c.a * u + c.b * v < c.s - 1e-9 * (std::abs(c.s) + std::abs(c.a * u) + std::abs(c.b * v))) {
            inside = false;
            break;
          }
        }
        if (inside && u * v < best) {
          best = u * v;
          best_u = u;
          best_v = v;
        }
      }
    }
    return {best, best_u, best_v};
  }

  [[nodiscard]] static double loosen(double value) { return std::max(0.0, value) * (1.0 - kPlanBoundSlack); }

  /// Lower bounds on time and cost of every completion of a node (see load_node), cheap ones first;
  /// stops as soon as the node is known to be prunable (unless `root`, which computes all).
  [[nodiscard]] Bound bound(std::size_t i, int m, const Part& fixed, int narrow, int narrow_lo, int narrow_hi,
                            bool root) {
    Bound b;
    witness_.valid = false;
    objective_direction_ = Direction{};
    if (!load_node(i, m, fixed, narrow, narrow_lo, narrow_hi)) {
      b.time_lb = b.cost_lb = kInf;
      return b;
    }
    if (simplex_node()) {
      b = simplex_bound(root);
      witness_.bound = b;
      return b;
    }
    // Not a simplex: the simplex without the caps holds every completion (header, (f)), and (a)–(d).
    const Bound relaxed = simplex_bound(root);
    witness_.valid = false;  // that simplex drops caps: its vertices are not the node's
    if (!root && prune(relaxed)) return relaxed;
    // Before any incumbent, a first visit's key chooses its own μ (header (d)): the keys order the totals,
    // and without the coupled constraint's price they favour totals that cannot meet it.
    b = general_bound(root, key_only_ && incumbents_.empty());
    b.time_lb = std::max(b.time_lb, relaxed.time_lb);
    b.cost_lb = std::max(b.cost_lb, relaxed.cost_lb);
    // Under prune_only_ the figures may be no bound, only "not above the threshold" (header (f)): an
    // incumbent offered now could lower the threshold below them, so prunable() offers after deciding.
    if (!prune_only_ && !prune(b)) offer_nearest_completion();
    return b;
  }

  /// Offers the loaded node's completion that minimizes the ratio of objective_direction_ (the greedy fill
  /// of (a)): the integer point nearest the objective's bound, so that a node whose bound is tight hands
  /// the search an incumbent at once (any completion within the quotas is a valid candidate).
  void offer_nearest_completion() {
    const Direction d = objective_direction_;
    if (!(d.c0 > 0 || d.cp > 0 || d.cj > 0)) return;
    (void)min_ratio(d.c0, d.cp, d.cj);  // taken_: the fill at its last λ
    const std::size_t u = type_.size();
    for (std::size_t t = node_.first; t < u; ++t) {
      counts_[type_[t]] = static_cast<int>(t) == node_.narrow ? node_.narrow_lo : lo_[t];
    }
    for (std::size_t q = 0; q < items_.size(); ++q) counts_[type_[std::size_t(items_[q].pos)]] += taken_[q];
    offer_if_feasible(problem_, counts_.data(), deadline_s_, budget_usd_, incumbents_, stats_);
    for (std::size_t t = node_.first; t < u; ++t) counts_[type_[t]] = 0;
  }

  /// Bounds (a)–(d) of the node loaded by load_node; with `lazy_mu`, μ of (d) is chosen for this node
  /// (choose_mu) only once (a)–(c) have not pruned it; with `constraint_only`, only the coupled
  /// constraint's figure (time under a deadline, cost under a budget) beyond (a).
  [[nodiscard]] Bound general_bound(bool root, bool lazy_mu = false, bool constraint_only = false) {
    Bound b;
    const double y_lo = min_ratio(0, 0, 1);
    if (!(y_lo > 0)) return b;
    const bool timed = timed_ && !(constraint_only && objective_ == PlanObjective::min_time);
    const bool costed = costed_ && !(constraint_only && objective_ == PlanObjective::min_cost);
    b.time_lb = loosen(y_lo / node_.rate_max);
    // x_L of the cost (header (b)): its corner x_L·y_L first, the full product bound below reuses it.
    const double price_lo = costed ? min_ratio(ps_price_, 1.0, 0) : 0.0;
    if (costed && price_lo > 0) b.cost_lb = loosen(price_lo * y_lo / units::kSecondsPerHour);
    if (!root && prune(b)) return b;
    // The values above which a bound prunes (time in s, cost in USD·s/h), loosening undone; none at the root.
    const double threshold = incumbents_.objective_threshold();
    const double time_stop = root ? kInf
                                  : std::min(deadline_s_, objective_ == PlanObjective::min_time ? threshold : kInf) /
                                        (1.0 - kPlanBoundSlack);
    const double cost_stop = root ? kInf
                                  : std::min(budget_usd_, objective_ == PlanObjective::min_cost ? threshold : kInf) *
                                        units::kSecondsPerHour / (1.0 - kPlanBoundSlack);
    if (timed) {
      b.time_lb = std::max(b.time_lb, loosen(product_lower(1.0, 0.0, y_lo, kProductRefinements, time_stop)));
      if (objective_ == PlanObjective::min_time) objective_direction_ = last_direction_;
      if (!root && prune(b)) return b;
    }
    if (costed) {
      b.cost_lb = std::max(b.cost_lb, loosen(product_lower_from(price_lo, ps_price_, 1.0, y_lo, kProductRefinements, cost_stop) /
                                             units::kSecondsPerHour));
      if (objective_ == PlanObjective::min_cost) objective_direction_ = last_direction_;
      if (!root && prune(b)) return b;
    }
    if (constraint_only) return b;
    if (lazy_mu) {  // the first μ chosen serves the later ones (nearby totals have nearby multipliers)
      mu_ = mu_hint_ > 0 ? mu_hint_ : choose_mu_for_loaded(y_lo);
      if (mu_ > 0) mu_hint_ = mu_;
    }
    if (mu_ > 0) {
      if (objective_ == PlanObjective::min_cost && std::isfinite(deadline_s_)) {
        const double lagrangian =
            product_lower(ps_price_ + mu_, 1.0, y_lo, kProductRefinements, cost_stop + mu_ * deadline_s_) - mu_ * deadline_s_;
        b.cost_lb = std::max(b.cost_lb, loosen(lagrangian / units::kSecondsPerHour));
        objective_direction_ = last_direction_;
      } else if (objective_ == PlanObjective::min_time && std::isfinite(budget_usd_)) {
        const double lagrangian =
            product_lower(1.0 + mu_ * ps_price_, mu_, y_lo, kProductRefinements,
                          time_stop + mu_ * units::kSecondsPerHour * budget_usd_) -
            mu_ * units::kSecondsPerHour * budget_usd_;
        b.time_lb = std::max(b.time_lb, loosen(lagrangian));
        objective_direction_ = last_direction_;
      }
    }
    return b;
  }

  /// Every free type can take all `extra` workers: the completions form a simplex whose vertices put
  /// all of them on one type (header, (f)).
  [[nodiscard]] bool simplex_node() const {
    if (node_.extra_max > node_.extra) return false;
    for (const Item& it : items_) {
      if (it.cap < node_.extra) return false;
    }
    return true;
  }

  /// Header (f): the exact minimum of the relaxation over the node's simplex, with the objective's
  /// coupled constraint (deadline for min cost, budget for min time); the other constraint and the
  /// objective's own bound use the vertex minima.
  [[nodiscard]] Bound simplex_bound(bool root) {
    Bound b;
    const bool single = node_.extra == 0 || items_.empty();
    // The vertices and their minima (header (f), (i)).
    double time_min = kInf;
    double cost_min = kInf;
    vertices_.clear();
    witness_ = Witness{};
    auto add = [&](double rate, double jrate, double price, int pos) {
      Vertex v{rate, jrate, ps_price_ + price, 0, 0};
      v.time = jrate / (rate * rate);
      v.cost = v.price * v.time / units::kSecondsPerHour;
      if (v.time < time_min) time_min = v.time, witness_.time_pos = pos;
      if (v.cost < cost_min) cost_min = v.cost, witness_.cost_pos = pos;
      vertices_.push_back(v);
      return jrate > 0;
    };
    if (single) {
      if (!add(node_.base.rate, node_.base.jrate, node_.base.price, -1)) return b;
    } else {
      for (const Item& it : items_) {
        if (!add(node_.base.rate + node_.extra * it.rate, node_.base.jrate + node_.extra * it.jrate,
                 node_.base.price + node_.extra * it.price, it.pos)) {
          return b;  // a completion may meet the target at start: no bound (and no witness)
        }
      }
    }
    witness_.valid = true;
    b.time_lb = loosen(time_min);
    b.cost_lb = loosen(cost_min);
    if (!root && prune(b)) return b;
    const bool coupled_cost = objective_ == PlanObjective::min_cost && std::isfinite(deadline_s_);
    const bool coupled_time = objective_ == PlanObjective::min_time && std::isfinite(budget_usd_);
    if (!coupled_cost && !coupled_time) return b;
    if (coupled_cost) {
      b.cost_lb = std::max(b.cost_lb, loosen(coupled_minimum(true)));
    } else {
      b.time_lb = std::max(b.time_lb, loosen(coupled_minimum(false)));
    }
    return b;
  }

  /// min of the objective (cost in USD if `cost`, else time) over the simplex points meeting the coupled
  /// constraint: over the feasible vertices and the crossings of the constraint's boundary on the edges
  /// from a feasible to an infeasible vertex (header, (f)). +inf when no point is feasible. When
  /// prune_only_, it may stop as soon as the minimum found is at most the value a bound must exceed to
  /// prune (then the node is not pruned by it, and the value it returns is no bound).
  [[nodiscard]] double coupled_minimum(bool cost) {
    const double limit = cost ? deadline_s_ : budget_usd_;
    auto constraint = [&](const Vertex& v) { return cost ? v.time : v.cost; };
    auto objective = [&](const Vertex& v) { return cost ? v.cost : v.time; };
    const double stop = !prune_only_ ? -kInf
                                     : std::min(incumbents_.objective_threshold(), cost ? budget_usd_ : deadline_s_);
    double best = kInf;
    feasible_.clear();
    crossing_.clear();
    for (std::size_t q = 0; q < vertices_.size(); ++q) {
      Vertex& v = vertices_[q];
      v.feasible = constraint(v) <= limit * (1.0 + kPlanBoundSlack);
      if (v.feasible) {
        if (objective(v) < best) best = objective(v), set_edge_witness(q, q);
        feasible_.push_back(q);
      }
    }
    if (best <= stop) return best;
    // At a crossing the constraint is at its limit: cost = price·D/3600, time = 3600·B/price, with the price
    // between s's and t's. A feasible s has cost <= s.price·D/3600 (time >= 3600·B/s.price) up to the
    // vertex slack, so only an edge whose crossing is at least as cheap as t's own floor (t priced below s
    // for cost, above for time) can beat s: the infeasible t are taken by increasing floor, while it is
    // below the minimum (with twice the slack).
    auto floor_of = [&](double price) {
      return cost ? price * limit / units::kSecondsPerHour : units::kSecondsPerHour * limit / price;
    };
    for (std::size_t q = 0; q < vertices_.size(); ++q) {
      const Vertex& t = vertices_[q];
      if (t.feasible || !(objective(t) < best) || !(floor_of(t.price) < best * (1 + 2 * kPlanBoundSlack))) continue;
      crossing_.emplace_back(floor_of(t.price), q);
    }
    std::sort(crossing_.begin(), crossing_.end());
    // Without prune_only_, a first visit's key may stop after `budget` crossings: every crossing not yet
    // computed costs at least the floor of the vertex t at hand (or, for a t priced beyond s, s's own
    // objective, at least best up to the slack), so min(best, that floor) is still a lower bound.
    std::size_t budget = key_only_ ? 4 * vertices_.size() : std::numeric_limits<std::size_t>::max();
    for (const auto& [floor_t, q] : crossing_) {
      if (!(floor_t < best * (1 + 2 * kPlanBoundSlack))) break;
      const Vertex& t = vertices_[q];
      if (!(objective(t) < best)) continue;
      for (std::size_t p : feasible_) {
        const Vertex& s = vertices_[p];
        const double floor = cost ? std::min(s.price, t.price) * limit / units::kSecondsPerHour
                                  : units::kSecondsPerHour * limit / std::max(s.price, t.price);
        if (!(floor < best)) continue;
        if (crossing_beyond(s, t, cost, best)) continue;
        if (budget-- == 0) return std::min(best / (1 + 2 * kPlanBoundSlack), floor_t);
        const double value = crossing_minimum(s, t, cost);
        if (value < best) best = value, set_edge_witness(p, q);
        if (best <= stop) return best;
      }
    }
    return best;
  }

  /// Records vertices p and q (indices into vertices_) as where the coupled minimum was found.
  void set_edge_witness(std::size_t p, std::size_t q) {
    const bool single = node_.extra == 0 || items_.empty();
    witness_.edge_from = single ? -1 : items_[p].pos;
    witness_.edge_to = single ? -1 : items_[q].pos;
  }

  /// The crossing on the edge from feasible s to infeasible t lies, certainly, where the objective at
  /// the constraint's limit (price·D/3600, resp. 3600·B/price) is above `best`: the point of the edge
  /// whose price gives exactly `best` there is infeasible, so the single crossing is on s's side of it.
  /// False when unsure (then the crossing is computed).
  [[nodiscard]] bool crossing_beyond(const Vertex& s, const Vertex& t, bool cost, double best) const {
    const double limit = cost ? deadline_s_ : units::kSecondsPerHour * budget_usd_;
    const double price = cost ? best * units::kSecondsPerHour / deadline_s_ : limit / best;
    const double span = s.price - t.price;
    if (span == 0) return false;
    const double theta = (price - t.price) / span;  // from t towards s
    if (!(theta > 0 && theta < 1)) return false;
    const double rate = t.rate + theta * (s.rate - t.rate);
    const double jrate = t.jrate + theta * (s.jrate - t.jrate);
    const double g = cost ? limit * rate * rate - jrate : limit * rate * rate - price * jrate;
    const double scale = limit * std::max(s.rate, t.rate) * std::max(s.rate, t.rate) +
                         (cost ? std::max(std::abs(s.jrate), std::abs(t.jrate))
                               : std::max(std::abs(s.price * s.jrate), std::abs(t.price * t.jrate)));
    return g < -scale * 1e-9;
  }

  /// Along the edge from feasible s to infeasible t, brackets the crossing of the constraint's boundary
  /// by bisection on the sign of g (certified with a rounding margin) and returns the smaller objective
  /// at the bracket's ends: the objective is quasi-concave along the edge, so that is at most its value
  /// at the crossing.
  [[nodiscard]] double crossing_minimum(const Vertex& s, const Vertex& t, bool cost) const {
    const double limit = cost ? deadline_s_ : units::kSecondsPerHour * budget_usd_;
    auto at = [&](double theta) {
      Vertex v{s.rate + theta * (t.rate - s.rate), s.jrate + theta * (t.jrate - s.jrate),
               s.price + theta * (t.price - s.price), 0, 0};
      v.time = v.jrate / (v.rate * v.rate);
      v.cost = v.price * v.time / units::kSecondsPerHour;
      return v;
    };
    // g >= 0 on the feasible side: D·I² − J (deadline) or 3600·B·I² − P·J (budget).
    auto g = [&](const Vertex& v) {
      return cost ? limit * v.rate * v.rate - v.jrate : limit * v.rate * v.rate - v.price * v.jrate;
    };
    const double scale = limit * std::max(s.rate, t.rate) * std::max(s.rate, t.rate) +
                         (cost ? std::max(s.jrate, t.jrate) : std::max(s.price * s.jrate, t.price * t.jrate));
    const double margin = scale * 1e-12;
    double lo = 0;
    double hi = 1;
    // g along the edge is the quadratic c2·θ² + c1·θ + c0 with exactly one sign change in [0, 1]: try
    // its closed-form root with a certified bracket first, bisect only when the certificate fails.
    const double d_rate = t.rate - s.rate;
    const double d_jrate = t.jrate - s.jrate;
    const double d_price = t.price - s.price;
    const double c2 = limit * d_rate * d_rate - (cost ? 0.0 : d_price * d_jrate);
    const double c1 = 2 * limit * s.rate * d_rate - (cost ? d_jrate : s.price * d_jrate + s.jrate * d_price);
    const double c0 = g(s);
    double root = -1;
    if (c2 == 0) {
      if (c1 != 0) root = -c0 / c1;
    } else {
      const double disc = c1 * c1 - 4 * c2 * c0;
      if (disc >= 0) {
        const double q = -0.5 * (c1 + std::copysign(std::sqrt(disc), c1));
        const double r1 = q / c2;
        const double r2 = q != 0 ? c0 / q : r1;
        root = (r1 >= 0 && r1 <= 1) ? r1 : r2;
      }
    }
    if (root >= 0 && root <= 1) {
      const double a = std::max(0.0, root - 1e-9);
      const double c = std::min(1.0, root + 1e-9);
      if ((a == 0 || g(at(a)) > margin) && (c == 1 || g(at(c)) < -margin)) {
        lo = a;
        hi = c;
      }
    }
    for (int step = 0; step < 40 && hi - lo > 3e-9; ++step) {
      const double mid = 0.5 * (lo + hi);
      const double value = g(at(mid));
      if (value > margin) {
        lo = mid;
      } else if (value < -margin) {
        hi = mid;
      } else {
        break;
      }
    }
    const Vertex a = at(lo);
    const Vertex c = at(hi);
    return cost ? std::min(a.cost, c.cost) : std::min(a.time, c.time);
  }

  /// μ for the Lagrangian bound (header (d)) maximizing the root bound of total n (the positions set for
  /// it); 0 when the objective has no finite constraint to couple.
  [[nodiscard]] double choose_mu(int n) {
    if (!load_node(0, n, Part{}, -1, 0, 0)) return 0;
    const double y_lo = min_ratio(0, 0, 1);
    if (!(y_lo > 0)) return 0;
    return choose_mu_for_loaded(y_lo);
  }

  /// choose_mu for the node loaded by load_node, given its y_L (> 0).
  [[nodiscard]] double choose_mu_for_loaded(double y_lo) {
    const bool min_cost = objective_ == PlanObjective::min_cost;
    if (min_cost ? !std::isfinite(deadline_s_) : !std::isfinite(budget_usd_)) return 0;
    // A μ whose bound already prunes the node is taken at once (the bound with it is at least value(μ),
    // since it adds tangent cuts to the same product bound).
    const double prunes_above =
        std::min(incumbents_.objective_threshold(), min_cost ? budget_usd_ : deadline_s_) *
        (min_cost ? units::kSecondsPerHour : 1.0) / (1.0 - kPlanBoundSlack);
    auto value = [&](double mu) {
      if (min_cost) return product_lower(ps_price_ + mu, 1.0, y_lo, 0) - mu * deadline_s_;
      return product_lower(1.0 + mu * ps_price_, mu, y_lo, 0) - mu * units::kSecondsPerHour * budget_usd_;
    };
    // Scale: an hourly price (min cost) or its inverse (min time).
    double reference = ps_price_;
    for (double p : price_) reference += p;
    reference = std::max(reference * node_.workers / double(price_.size()), 1e-12);
    if (!min_cost) reference = 1.0 / reference;
    // A geometric grid (factor 2^kMuGridStep), then golden-section search in log μ around its best point.
    double best_mu = 0;
    double best = value(0);
    int best_step = -99;
    for (int step = -12; step <= 12; step += kMuGridStep) {
      const double mu = reference * std::ldexp(1.0, step);
      const double v = value(mu);
      if (v > prunes_above) return mu;
      if (v > best) {
        best = v;
        best_mu = mu;
        best_step = step;
      }
    }
    if (best_step == -99) return 0;
    double lo = best_step - kMuGridStep;
    double hi = best_step + kMuGridStep;
    auto at = [&](double log2_mu) { return reference * std::exp2(log2_mu); };
    constexpr double kGolden = 0.6180339887498949;
    double m1 = hi - kGolden * (hi - lo);
    double m2 = lo + kGolden * (hi - lo);
    double v1 = value(at(m1));
    double v2 = value(at(m2));
    for (int step = 0; step < kMuGoldenSteps; ++step) {
      if (v1 < v2) {
        lo = m1;
        m1 = m2;
        v1 = v2;
        m2 = lo + kGolden * (hi - lo);
        v2 = value(at(m2));
      } else {
        hi = m2;
        m2 = m1;
        v2 = v1;
        m1 = hi - kGolden * (hi - lo);
        v1 = value(at(m1));
      }
    }
    m1 = at(m1);
    m2 = at(m2);
    if (v1 > best) best_mu = m1, best = v1;
    if (v2 > best) best_mu = m2, best = v2;
    return best_mu;
  }

  /// Whether the node's bound prunes it (the bound may stop early once it cannot: header (f)).
  [[nodiscard]] bool prunable(std::size_t i, int m, const Part& fixed, int narrow, int narrow_lo, int narrow_hi, bool root) {
    prune_only_ = true;
    const bool pruned = prune(bound(i, m, fixed, narrow, narrow_lo, narrow_hi, root));
    prune_only_ = false;
    // A total's root offers its nearest completion (the node loaded by bound(); none for a simplex node).
    // Deeper nodes do not: on small problems the offers cost more than they save.
    if (!pruned && i == 0) offer_nearest_completion();
    return pruned;
  }

  [[nodiscard]] bool prune(const Bound& b) const {
    const double threshold = incumbents_.objective_threshold();
    if (b.time_lb > deadline_s_ || b.cost_lb > budget_usd_) return true;
    return (objective_ == PlanObjective::min_cost ? b.cost_lb : b.time_lb) > threshold;
  }

  /// `witness`: the node's own bound's witness when it was a simplex node's, else nullptr.
  void dfs(std::size_t i, int m, const Part& part, const Witness* witness = nullptr) {
    if (out_of_steps()) return;
    ++stats_.nodes;
    const std::size_t u = type_.size();
    if (m == suf_lo_[i]) {  // every remaining type at its minimum: one cluster
      for (std::size_t t = i; t < u; ++t) counts_[type_[t]] = lo_[t];
      offer_if_feasible(problem_, counts_.data(), deadline_s_, budget_usd_, incumbents_, stats_);
      for (std::size_t t = i; t < u; ++t) counts_[type_[t]] = 0;
      return;
    }
    if (i == u) return;
    const int lo = std::max(lo_[i], m - suf_hi_[i + 1]);
    int hi = std::min(hi_[i], m - suf_lo_[i + 1]);
    if (groups_) hi = std::min(hi, group_cap(i));
    if (lo > hi) return;
    if (hi > lo + 1 && !every_total_) {
      // The counts above the lowest as one range first, bounded once: along a run of types that take
      // their lowest count (most often 0), one bound per type rules all its other counts out.
      if (!prunable(i, m, part, static_cast<int>(i), lo + 1, hi, false)) branch(i, m, part, lo + 1, hi, true);
      if (stopped_) return;
      if (witness != nullptr && witness->valid && !groups_ && lo == lo_[i] && !witness->involves(static_cast<int>(i)) &&
          !prune(witness->bound)) {
        // The lowest count drops position i from the node's simplex, and i holds none of its bound's
        // minima: the child's bound is the node's (see Witness), which still does not prune.
        lowest_child(i, m, part, lo, *witness);
      } else {
        branch(i, m, part, lo, lo, false);
      }
    } else {
      branch(i, m, part, lo, hi, true);
    }
    counts_[type_[i]] = 0;
  }

  /// The child of a node at position i with that type's lowest count lo, whose bound is known not to prune.
  void lowest_child(std::size_t i, int m, const Part& part, int lo, Witness witness) {
    counts_[type_[i]] = lo;
    Part child = part;
    child.rate += lo * rate_[i];
    child.jrate += lo * jrate_[i];
    child.price += lo * price_[i];
    dfs(i + 1, m - lo, child, &witness);
  }

  /// The children of a node at position i whose count of that type lies in [lo, hi], largest count first
  /// (header, Search). `whole` marks the node's full range, whose bound is the node's own.
  void branch(std::size_t i, int m, const Part& part, int lo, int hi, bool whole) {
    if (stopped_) return;
    if (hi - lo >= kDirectChildren && !every_total_) {
      if (!whole && prunable(i, m, part, static_cast<int>(i), lo, hi, false)) return;
      const int mid = lo + (hi - lo) / 2;
      branch(i, m, part, mid + 1, hi, false);
      branch(i, m, part, lo, mid, false);
      return;
    }
    for (int c = hi; c >= lo && !stopped_; --c) {
      counts_[type_[i]] = c;
      Part child = part;
      child.rate += c * rate_[i];
      child.jrate += c * jrate_[i];
      child.price += c * price_[i];
      if (groups_ && group_[i] >= 0) used_[std::size_t(group_[i])] += std::int64_t(c) * vcpu_[i];
      if (completable(i + 1, m - c) && !prunable(i + 1, m - c, child, -1, 0, 0, false)) {
        const Witness witness = witness_;
        dfs(i + 1, m - c, child, &witness);
      }
      if (groups_ && group_[i] >= 0) used_[std::size_t(group_[i])] -= std::int64_t(c) * vcpu_[i];
    }
  }

  const PlanProblem& problem_;
  PlanObjective objective_;
  double deadline_s_;
  double budget_usd_;
  PlanSearchStats& stats_;
  PlanIncumbents incumbents_;
  bool every_total_ = false;
  bool groups_ = false;  ///< the problem has vCPU quota groups (header, (h)–(j))
  std::int64_t first_step_ = 0;  ///< stats_.search_steps when this search began (stats add up over searches)
  bool stopped_ = false;         ///< the step limit was reached: every loop unwinds
  bool costed_ = false;
  bool timed_ = false;
  double ps_price_ = 0;

  std::vector<std::size_t> usable_;  ///< worker types with a positive count limit, catalog order
  std::vector<int> counts_;          ///< the assignment being built, per worker type
  double loss_gap_ = 0;

  // Per n.
  double mu_ = 0;
  double mu_hint_ = 0;  ///< the μ chosen for the first lazily bounded first visit or range (header (d))
  std::vector<double> rate_k_, jhat_k_, jrate_k_;  ///< per usable type (index into usable_): a, ĵ, a·ĵ
  std::vector<std::size_t> order_scratch_;
  std::vector<std::size_t> type_;  ///< per position: the worker type
  std::vector<double> rate_, jrate_, price_;
  std::vector<int> lo_, hi_, suf_lo_, suf_hi_, by_rate_;
  std::vector<int> group_;                ///< per position: its quota group, or -1
  std::vector<std::int64_t> vcpu_;        ///< per position: vCPUs of one instance
  std::vector<std::size_t> by_vcpus_;     ///< the grouped positions, fewest vCPUs first
  std::vector<std::int64_t> used_, spare_;  ///< per group: the fixed positions' use; scratch
  std::vector<std::int64_t> node_spare_;    ///< per group: the loaded node's spare vCPUs (header (k))
  std::vector<std::size_t> by_rate_per_vcpu_;  ///< grouped positions with vCPUs, most rate per vCPU first
  std::vector<int> free_cap_;                  ///< per position: the loaded node's count range (hi − lo)

  // Per node.
  struct NodeData {
    Part base;  ///< fixed part plus every free type at its minimum
    Part fast;  ///< the extra workers of the fastest completion
    std::size_t first = 0;  ///< the first free position
    int workers = 0;        ///< the node's total (the largest of a range of totals)
    int narrow = -1;        ///< a free position whose lower count is narrow_lo (not lo_), or -1
    int narrow_lo = 0;
    int extra = 0;      ///< the free positions' workers beyond their lower counts
    int extra_max = 0;  ///< a range of totals (header (g')): extra up to this many; else extra
    double rate_max = 0;
    double rate_min = 0;
  } node_;
  std::vector<Item> items_;
  std::vector<Vertex> vertices_;
  std::vector<Cut> cuts_;
  std::vector<std::size_t> feasible_;                      ///< scratch: the feasible vertices
  std::vector<std::pair<double, std::size_t>> crossing_;  ///< scratch: (floor, infeasible vertex)
  bool prune_only_ = false;        ///< the bound being computed only decides a prune (header, (f) early stop)
  bool key_only_ = false;          ///< the bound being computed is a first visit's key (header, (f) work budget)
  Witness witness_;                ///< of the last bound computed (valid only for a simplex node's)
  Direction last_direction_;       ///< of the last product bound (product_lower_from)
  Direction objective_direction_;  ///< of the last general_bound's objective product bound
  std::vector<double> value_;
  std::vector<int> taken_;
  std::vector<std::size_t> rank_;
};

inline std::optional<PlanCandidate> exact_solve(const PlanProblem& problem, PlanObjective objective, double deadline_s,
                                                double budget_usd, PlanSearchStats& stats,
                                                ExactSearchOrder order = ExactSearchOrder::ranges) {
  return ExactPlanSearch(problem, objective, deadline_s, budget_usd, stats, order).run();
}

/// A cluster of `problem` that meets the target at start (j <= 0, TargetOutcome::met_at_start), or none;
/// exact, for planners whose own search may miss one (plan/detail/plan_problem.hpp, assemble_plan). When
/// the range bound (g) on the time of every total is positive, j_min > 0 there, so every cluster needs
/// j >= j_min > 0 iterations and none meets the target at start (O(types)). Otherwise the fastest cluster
/// decides: one meeting the target at start takes 0 s and every other more, so the exact fastest (ties
/// broken as detail::PlanIncumbents does, the cluster the exact planner would name) is one if any exists.
/// Call it after the below-asymptote check.
inline std::optional<PlanCandidate> met_at_start_cluster(const PlanProblem& problem, PlanSearchStats& stats) {
  if (problem.types() == 0 || problem.min_workers > problem.max_workers) return std::nullopt;
  if (TotalsBounds(problem)(problem.min_workers, problem.max_workers).time_lb > 0) return std::nullopt;
  const double inf = std::numeric_limits<double>::infinity();
  PlanSearchStats own;
  std::optional<PlanCandidate> fastest = exact_solve(problem, PlanObjective::min_time, inf, inf, own);
  stats.add_work(own);
  if (fastest && problem.model().estimate(fastest->counts.data(), problem.target_loss, problem.predict).outcome ==
                     TargetOutcome::met_at_start) {
    return fastest;  // proven: this cluster meets the target at start (a stopped search may not name the tie-break winner)
  }
  // Stopped at the step limit: every cluster it had not ruled out takes at least the bound, so a positive
  // bound still proves that none meets the target at start (0 s); otherwise it is not known.
  if (own.stopped && !(own.stopped_lower_bound > 0)) {
    stats.stopped = true;
    stats.stopped_lower_bound = own.stopped_lower_bound;
  }
  return std::nullopt;
}

/// plan_exact with the search order chosen (tests compare the orders).
inline PlanResult plan_exact_in_order(const PerformanceModel& model, const Slo& slo, const PlanOptions& options,
                                      ExactSearchOrder order) {
  const PlanProblem problem(model, slo, options, "plan_exact");
  auto solve = [&](PlanObjective objective, double deadline_s, double budget_usd, PlanSearchStats& stats) {
    return exact_solve(problem, objective, deadline_s, budget_usd, stats, order);
  };
  auto diagnose = [&](const PlanProblem& p, PlanObjective objective, double deadline_s, double budget_usd,
                      PlanSearchStats& stats) { return exact_solve(p, objective, deadline_s, budget_usd, stats, order); };
  return assemble_plan(problem, PlanAlgorithm::exact, solve, diagnose);
}

}  // namespace detail

/// The cheapest cluster (counts 0 <= n_k <= quota_k, n >= 1) whose predicted training reaches
/// `slo.target_loss` within `slo.deadline_s` (docs/model.md section 2); in budget mode (options.budget_usd) the fastest
/// cluster costing at most the budget. Status optimal with the plan and every predicted figure, or
/// infeasible with the reason and its figure (asymptote, fastest achievable time and plan, cheapest
/// cost), or target_met_at_start when some cluster the options allow meets the target at iteration 0 by
/// the loss model (no plan; the message names that cluster: exact, it is the optimum's tie-break winner). Ties break as documented on detail::PlanIncumbents: cheaper, then faster, then fewer workers,
/// then type order. Throws spotdnn::invalid_argument for bad input (naming the field).
[[nodiscard]] inline PlanResult plan_exact(const PerformanceModel& model, const Slo& slo, const PlanOptions& options = {}) {
  return detail::plan_exact_in_order(model, slo, options, detail::ExactSearchOrder::ranges);
}

}  // namespace spotdnn
