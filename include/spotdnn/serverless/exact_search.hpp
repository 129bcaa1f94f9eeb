#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/exact_search.hpp The cheapest serverless configuration, provably: best-first branch and
/// bound over (W, K, memory interval) with bounds proven below. Same answer as plan_serverless_exhaustive,
/// configuration for configuration (and the same fastest configuration and message when infeasible).
///
/// ## The bounds (docs/model.md eqs. (S1)–(S6))
///
/// Write an iteration, eq. (S4), as t(M) = g(M) + T_trans(M) + T_train(M) with
///   g(M) = (K + 1)·up(M) + c_d·down(M) + P,  c_d = W when K = 1, else K + W − 2,
///   P = 0.00119·W·(fs + 33.7)·(2 − K/W) > 0 (independent of M), fs = S/K,
/// and T_agg(M) = up(M) + (W − 1)·down(M) + P. For one chunk size fs, up and down are piecewise linear in
/// M: linear between neighbouring table columns (a convex combination of the two columns, eq. (S3)) and
/// constant below the first and above the last column. So on a memory interval [Ma, Mb], g and T_agg are
/// linear between the points {Ma, the columns strictly inside, Mb}, and
///   (1) their minimum and maximum over [Ma, Mb] are attained at those points;
///   (2) so is the minimum of M·g(M): on a piece g(M) = α + βM ≥ 0, (M·g)' = g + βM > 0 when β ≥ 0
///       (increasing), and M·g is concave when β < 0; either way its minimum is at an end of the piece.
/// T_trans = k1·M^k2 (k1 ≥ 0, any k2) and M·T_trans = k1·M^(1+k2) are monotone in M; T_train = c/(M + m)
/// with c = a·(B + b) and M + m > 0 on the whole grid (ServerlessModel checks 128 + m > 0) is monotone, and
/// so is M·T_train = c·M/(M + m) (its derivative is c·m/(M + m)²). So each has its extremes at Ma and Mb.
/// When c ≥ 0 every term of t is non-negative and
///   t ∈ [t_lo, t_hi] (sums of the terms' minima and maxima),  M·t ≥ mt_lo (sum of the terms' minima of M·term).
///
/// Batches, eq. (S5): A = B when K = W. When K < W, A = min(A_con, round(x)) with
///   x = (T_agg + T_train)·(M + m)/a − b = T_agg·(M + m)/a + B  (since T_train·(M + m)/a = B + b),
/// and T_agg > 0, M + m > 0, so x ∈ [T_agg,min·(Ma + m)/a + B, T_agg,max·(Mb + m)/a + B]; round is
/// monotone, so A ∈ [A_lo, A_hi] (widened by a slack covering the rounding of the computed x, below). A
/// runnable configuration has A ≥ 1, so A_lo ≥ 1. Then K·B + (W − K)·A ∈ [P_lo, P_hi] and the iterations
/// I = n(P) (ServerlessModel::iteration_count: ⌈D·E/P⌉ by default, ⌊D·E/P⌋ under FasDL's rounding, 0 when
/// P > D·E) ∈ [I_lo, I_hi] = [n(P_hi), n(P_lo)] exactly (integer arithmetic; n never rises with P under
/// either rule); runnable needs I ≥ 1, so I ≥ max(1, I_lo).
///
/// Then, for every runnable configuration of the node:
///   T = I·t ≥ T_lo = max(1, I_lo)·t_lo;
///   cost = λ·W·M·T + ρ·W·⌈T/900⌉ + I·(π_put·K·W + π_get·2K(W − 1))
///        ≥ λ·W·max(1, I_lo)·mt_lo + ρ·W·⌈T_lo/900⌉ + max(1, I_lo)·(π_put·K·W + π_get·2K(W − 1)),
/// every price non-negative (checked). A node is dropped when T_lo > deadline, when t_lo > 900 s (nothing
/// in it can run), when I_hi < 1 or A_hi < 1, when its cost bound exceeds the cheapest configuration found
/// so far, or when its bound is at least that cost and every configuration it holds comes after the
/// incumbent in the tie order (more workers; or as many and more memory; or the same W and M and more
/// aggregators). Nodes are expanded least bound first, equal bounds in the tie order; intervals are halved.
/// A bound that comes out NaN (a profile so extreme that the model overflows) counts as −∞: nothing is
/// dropped on it.
///
/// Before a (W, K) pair is bounded through its chunk's transfers, coarser nodes stand for many pairs. Every
/// up and down of the table, interpolated or scaled, is at least the least measured cell (u_min, d_min:
/// interpolation is a convex combination; scaling beyond the last size multiplies by x/x_last ≥ 1); the
/// global batch K·B + (W − K)·A ≤ Bg (A ≤ A_con), so I ≥ max(1, n(Bg)); and P = 0.00119·(S/K + 33.7)·(2W − K)
/// falls with K (both factors do, K ≤ W). So with n_u uploads, n_d downloads and a polling term of at least
/// P_min, t ≥ n_u·u_min + n_d·d_min + P_min + min T_trans + min T_train (minima over the grid's ends),
/// M·t ≥ M_min·(n_u·u_min + n_d·d_min + P_min) + min M·T_trans + min M·T_train, and T and the cost are
/// bounded as above, with the S3 requests of the least K.
///   - A tail stands for every W' ≥ W and all K: n_u = 2, n_d = W − 1 (c_d ≥ W' − 1), P_min = 0.00119·(33.7·W
///     + S) (2W' − K ≥ W' and (S/K)(2W' − K) ≥ S), requests at K = 1. Every part grows with W', so the bound
///     at W holds for all W' ≥ W. No W' > D·E can train a full iteration (K·B + (W' − K)·A ≥ W' when A ≥ 1),
///     so the tail ends there. Expanding the tail of W gives the row of W and the tail of W + 1.
///   - A row stands for one W and K ∈ [K1, K2]: n_u = K1 + 1, n_d = W + max(0, K1 − 2) (c_d = W for K ≤ 2,
///     K + W − 2 above), P_min = P(K2), requests at K1. Rows are halved down to one K, whose pair node
///     covers the whole grid.
/// So the search never lists the (W, K) pairs a bound rules out, however large ⌊Bg/B⌋ is.
///
/// ## Exactly the exhaustive answer
///
/// Each bound is a mathematical bound on the real-valued formula; ServerlessModel::estimate computes the
/// same formula in double precision, a few dozen operations on non-negative terms (relative error below
/// 10⁻¹³), and so do the bounds. A node is dropped only when its bound exceeds the incumbent (or the
/// deadline, or 900 s) by a relative margin of 10⁻⁹, so every configuration it holds computes strictly
/// worse (or, for the tie rule, provably no better and behind the incumbent): no configuration that could
/// win under `preferred()` is skipped. The integer steps are
/// bounded exactly: x is widened by 10⁻⁹·(|x| + |B + b| + |b| + 1) before rounding (far above its rounding
/// error), and ⌈T/900⌉ is taken at T_lo·(1 − 10⁻⁹). Leaves (at most kExactLeafSizes memory sizes) are
/// evaluated with ServerlessModel::estimate and ranked like the enumeration, so the answer is the same
/// configuration with the same figures. The fastest configuration (infeasible answers) comes from a second
/// branch and bound on T with the same bounds, ties as the enumeration (least T, fewest W, least M,
/// fewest K); when nothing can run, a third on t names the quickest iteration, as the enumeration does.
///
/// A profile with B + b < 0 (only with an explicit --batch) makes T_train negative, so the terms are no
/// longer non-negative: the search then enumerates every configuration (plan_serverless_exhaustive's
/// work, reported as `exact`).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <queue>
#include <string_view>
#include <vector>

#include "spotdnn/progress.hpp"
#include "spotdnn/serverless/exhaustive_search.hpp"
#include "spotdnn/serverless/serverless_model.hpp"
#include "spotdnn/serverless/serverless_plan.hpp"

namespace spotdnn::serverless {

/// The exact search evaluates a memory interval outright when it holds at most this many sizes.
inline constexpr int kExactLeafSizes = 8;

namespace search_detail {

/// The relative margin by which a bound must exceed what it is compared with to drop a node.
inline constexpr double kBoundMargin = 1e-9;

/// True when the bound `lower` proves that every value it bounds is strictly above `value`.
inline bool provably_above(double lower, double value) { return lower * (1.0 - kBoundMargin) > value; }

/// True when the bound `lower` proves that every value it bounds is at least `value`.
inline bool provably_at_least(double lower, double value) { return lower * (1.0 - kBoundMargin) >= value; }

/// What a branch-and-bound search minimises.
enum class ExactGoal {
  cost,       ///< cost among runnable configurations with T ≤ deadline (order: preferred())
  time,       ///< training time T among runnable configurations (order: faster())
  iteration,  ///< iteration time t among configurations that train a full batch (order: quicker_iteration())
};

/// Bounds of one node: W workers, K aggregators, memory sizes ia..ib of the grid (see the file comment).
struct ExactBounds {
  bool full_batch_possible = false;  ///< some configuration may have A ≥ 1 and I ≥ 1
  double iteration_lo_s = 0;         ///< t_lo
  double time_lo_s = 0;              ///< T_lo
  double cost_lo_usd = 0;            ///< the cost bound
};

/// The branch and bound of the file comment.
class ExactSearcher {
 public:
  ExactSearcher(const ServerlessModel& model, const ServerlessPlanOptions& options, const spotdnn::ProgressCallback& progress)
      : model_(model), options_(options), progress_(progress), sizes_(options.memory_sizes()), max_w_(model.max_workers()) {
    const ServerlessProfile& p = model.profile();
    samples_ = model.samples_to_train();
    batch_ = model.batch();
    train_c_ = p.a * (double(batch_) + p.b);
    for (const TransferCell& c : model.transfer().cells()) {
      if (columns_mb_.empty() || columns_mb_.back() != c.memory_mb) columns_mb_.push_back(c.memory_mb);
      up_min_ = std::fmin(up_min_, c.upload_s);
      down_min_ = std::fmin(down_min_, c.download_s);
    }
    const double m_lo = options.memory_mb(0), m_hi = last_memory_mb(options);
    const double tr_lo = trans(m_lo), tr_hi = trans(m_hi), tn_lo = train(m_lo), tn_hi = train(m_hi);
    tail_fixed_s_ = nan_low(std::fmin(tr_lo, tr_hi)) + nan_low(std::fmin(tn_lo, tn_hi));
    tail_fixed_mt_ = nan_low(std::fmin(m_lo * tr_lo, m_hi * tr_hi)) + nan_low(std::fmin(m_lo * tn_lo, m_hi * tn_hi));
    rounding_ = model.work().iteration_rounding;
    tail_iterations_ = std::max<std::int64_t>(1, ServerlessModel::iteration_count(samples_, model.work().max_global_batch, rounding_));
  }

  /// The bounds cover the profile: T_train is not negative (see the file comment).
  [[nodiscard]] bool bounds_apply() const { return train_c_ >= 0; }

  /// The best configuration for `goal` (nullopt when there is none), adding to `stats`.
  std::optional<ServerlessEstimate> search(ExactGoal goal, ServerlessSearchStats& stats) {
    goal_ = goal;
    best_.reset();
    std::priority_queue<Node> open;
    if (max_w_ >= 1) push_tail(open, 1);
    std::size_t popped = 0;
    while (!open.empty()) {
      const Node node = open.top();
      open.pop();
      if (best_ && provably_above(node.key, best_value())) break;  // every node left has a key at least this
      if (loses(node)) continue;
      if (++popped % 4096 == 0) spotdnn::detail::report(progress_, "serverless exact search", "nodes", double(nodes_done_ + popped), 0);
      if (node.kind == NodeKind::tail) {
        if (node.w < max_w_) push_tail(open, node.w + 1);
        push_row(open, node.w, 1, node.w);
      } else if (node.kind == NodeKind::row) {
        if (node.k == node.k_last) {
          push(open, node.w, node.k, 0, sizes_ - 1);
        } else {
          const int mid = node.k + (node.k_last - node.k) / 2;
          push_row(open, node.w, node.k, mid);
          push_row(open, node.w, mid + 1, node.k_last);
        }
      } else if (node.ib - node.ia < kExactLeafSizes) {
        evaluate(node, stats);
      } else {
        const int mid = node.ia + (node.ib - node.ia) / 2;
        push(open, node.w, node.k, node.ia, mid);
        push(open, node.w, node.k, mid + 1, node.ib);
      }
    }
    nodes_done_ += popped;
    return best_;
  }

  [[nodiscard]] std::size_t nodes() const { return nodes_done_; }

  /// Pairs scanned and pruned over every search so far.
  void count_pairs(ServerlessSearchStats& stats) const {
    std::size_t scanned = 0;
    for (const auto& w : scanned_all_) scanned += std::size_t(std::count(w.begin(), w.end(), char(1)));
    stats.worker_aggregator_pairs = scanned;
    const std::size_t pairs = std::size_t(max_w_) * (std::size_t(max_w_) + 1) / 2;
    stats.pairs_pruned = pairs - scanned;
  }

  /// Bounds of the node (W, K, sizes ia..ib), file comment.
  [[nodiscard]] ExactBounds bounds(int w, int k, int ia, int ib) {
    const Chunk& chunk = chunk_of(k);
    const double ma = options_.memory_mb(ia), mb = options_.memory_mb(ib);
    const double wd = w, kd = k;
    const double cu = kd + 1, cd = k == 1 ? wd : kd + wd - 2;
    const double poll = kPollingSecondsPerWorkerMb * wd * (model_.chunk_mb(k) + kPollingOffsetMb) * (2.0 - kd / wd);
    double g_lo = kInf, g_hi = -kInf, agg_lo = kInf, agg_hi = -kInf, mg_lo = kInf;
    const auto visit = [&](double memory_mb, double up, double down) {
      const double g = cu * up + cd * down + poll, agg = up + (wd - 1) * down + poll;
      g_lo = std::fmin(g_lo, g);
      g_hi = std::fmax(g_hi, g);
      agg_lo = std::fmin(agg_lo, agg);
      agg_hi = std::fmax(agg_hi, agg);
      mg_lo = std::fmin(mg_lo, memory_mb * g);
    };
    const TransferTime at_a = chunk.transfer.at_memory(ma), at_b = chunk.transfer.at_memory(mb);
    visit(ma, at_a.upload_s, at_a.download_s);
    for (std::size_t j = std::size_t(std::upper_bound(columns_mb_.begin(), columns_mb_.end(), ma) - columns_mb_.begin());
         j < columns_mb_.size() && columns_mb_[j] < mb; ++j) {
      visit(columns_mb_[j], chunk.up[j], chunk.down[j]);
    }
    visit(mb, at_b.upload_s, at_b.download_s);
    const double tr_a = trans(ma), tr_b = trans(mb), tn_a = train(ma), tn_b = train(mb);
    ExactBounds out;
    out.iteration_lo_s = nan_low(g_lo + std::fmin(tr_a, tr_b) + std::fmin(tn_a, tn_b));
    const double mt_lo = nan_low(mg_lo + std::fmin(ma * tr_a, mb * tr_b) + std::fmin(ma * tn_a, mb * tn_b));
    // Batches and iterations.
    std::int64_t a_lo = batch_, a_hi = batch_;
    if (k < w) {
      const ServerlessProfile& p = model_.profile();
      const std::int64_t cap = (std::int64_t(model_.work().max_global_batch) - std::int64_t(k) * batch_) / (w - k);
      const double x_lo = agg_lo * (ma + p.m) / p.a + batch_, x_hi = agg_hi * (mb + p.m) / p.a + batch_;
      const double slack = kBoundMargin * (std::fabs(x_hi) + std::fabs(double(batch_) + p.b) + std::fabs(p.b) + 1.0);
      a_lo = capped_batch(std::round(x_lo - slack), cap);
      a_hi = capped_batch(std::round(x_hi + slack), cap);
      if (std::isnan(x_lo) || std::isnan(x_hi)) a_lo = 1, a_hi = cap;
      if (a_lo < 1) a_lo = 1;
    }
    if (a_hi < 1) return out;  // every configuration leaves its non-aggregators idle
    const std::int64_t fixed = std::int64_t(k) * batch_, others = w - k;
    const std::int64_t i_lo = ServerlessModel::iteration_count(samples_, fixed + others * a_hi, rounding_);
    const std::int64_t i_hi = ServerlessModel::iteration_count(samples_, fixed + others * a_lo, rounding_);
    if (i_hi < 1) return out;  // not one full iteration to train
    out.full_batch_possible = true;
    const double iterations = double(std::max<std::int64_t>(1, i_lo));
    out.time_lo_s = iterations * out.iteration_lo_s;
    out.cost_lo_usd = cost_bound(w, k, iterations, mt_lo, out.time_lo_s);
    return out;
  }

 private:
  enum class NodeKind {
    tail,      ///< every W' ≥ w, every K and M
    row,       ///< W = w, K in k..k_last, every M
    interval,  ///< W = w, K = k, the memory sizes ia..ib of the grid
  };
  struct Node {
    double key = 0;
    int w = 0, k = 0, ia = 0, ib = 0, k_last = 0;
    NodeKind kind = NodeKind::interval;
    /// std::priority_queue puts the greatest on top: least key first, then the tie order (fewest W, least
    /// memory, fewest K), so that on equal bounds the configuration that would win a tie is met first.
    bool operator<(const Node& o) const {
      if (key != o.key) return key > o.key;
      if (w != o.w) return w > o.w;
      if (ia != o.ia) return ia > o.ia;
      return k > o.k;
    }
  };
  struct Chunk {
    ObjectSizeTransfer transfer;
    std::vector<double> up, down;  ///< at each column of the table
  };
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  static double nan_low(double x) { return std::isnan(x) ? -kInf : x; }

  static std::int64_t capped_batch(double busy, std::int64_t cap) {
    if (!(busy < double(cap))) return cap;
    if (busy < 1) return 0;
    return std::int64_t(busy);
  }

  [[nodiscard]] double trans(double memory_mb) const {
    return transform_time_s<double>(memory_mb, model_.profile().k1, model_.profile().k2);
  }
  [[nodiscard]] double train(double memory_mb) const {
    const ServerlessProfile& p = model_.profile();
    return train_time_s<double>(batch_, memory_mb, p.a, p.b, p.m);
  }

  const Chunk& chunk_of(int k) {
    if (chunks_.size() <= std::size_t(k)) chunks_.resize(std::size_t(k) + 1);
    std::optional<Chunk>& c = chunks_[std::size_t(k)];
    if (!c) {
      c = Chunk{model_.transfer().for_object_size(model_.chunk_mb(k)), {}, {}};
      for (double column : columns_mb_) {
        const TransferTime t = c->transfer.at_memory(column);
        c->up.push_back(t.upload_s);
        c->down.push_back(t.download_s);
      }
    }
    return *c;
  }

  /// λ·W·I·mt + ρ·W·⌈T/900⌉ + I·(π_put·K·W + π_get·2K(W − 1)), with ⌈⌉ taken at T·(1 − margin).
  [[nodiscard]] double cost_bound(double w, double k, double iterations, double mt, double time_s) const {
    const ServerlessPricing& pr = model_.work().pricing;
    const double lambda = pr.lambda_usd_per_mb_s * w * iterations * mt;
    const double requests = pr.lambda_usd_per_request * w * invocations_per_function(time_s * (1.0 - kBoundMargin));
    const double s3 = iterations * (pr.s3_usd_per_put * k * w + pr.s3_usd_per_get * 2.0 * k * (w - 1.0));
    return nan_low(lambda + requests + s3);
  }

  /// The key of a node for the goal, or nullopt when the node is dropped whatever the incumbent.
  [[nodiscard]] std::optional<double> key_of(bool full_batch_possible, double iteration_lo_s, double time_lo_s, double cost_lo) const {
    if (!full_batch_possible) return std::nullopt;
    if (goal_ == ExactGoal::iteration) return iteration_lo_s;
    if (provably_above(iteration_lo_s, kLambdaInvocationLimitS)) return std::nullopt;
    if (goal_ == ExactGoal::time) return time_lo_s;
    if (provably_above(time_lo_s, options_.deadline_s)) return std::nullopt;
    return cost_lo;
  }

  [[nodiscard]] double best_value() const {
    switch (goal_) {
      case ExactGoal::cost: return best_->cost_usd();
      case ExactGoal::time: return best_->training_time_s;
      case ExactGoal::iteration: return best_->iteration_time_s;
    }
    return best_->cost_usd();
  }

  /// True when no configuration of the node can replace the incumbent: each is provably worse, or no
  /// better and behind it in the tie order (fewest W, least M, fewest K).
  [[nodiscard]] bool loses(const Node& node) const {
    if (!best_) return false;
    const double value = best_value();
    if (provably_above(node.key, value)) return true;
    if (!provably_at_least(node.key, value)) return false;
    const ServerlessConfiguration& b = best_->configuration;
    if (node.w != b.workers) return node.w > b.workers;  // a tail holds W' ≥ node.w only
    if (node.kind != NodeKind::interval) return false;
    const int least_mb = options_.memory_mb(node.ia);
    if (least_mb != b.memory_mb) return least_mb > b.memory_mb;
    return node.ia == node.ib && node.k > b.aggregators;
  }

  void push_node(std::priority_queue<Node>& open, const Node& node) {
    if (!loses(node)) open.push(node);
  }

  void push(std::priority_queue<Node>& open, int w, int k, int ia, int ib) {
    const ExactBounds b = bounds(w, k, ia, ib);
    const std::optional<double> key = key_of(b.full_batch_possible, b.iteration_lo_s, b.time_lo_s, b.cost_lo_usd);
    if (key) push_node(open, Node{*key, w, k, ia, ib, k, NodeKind::interval});
  }

  /// Pushes a node bounded without the transfer of its chunk: every up and down at least the table's
  /// least cell, at least `up_coefficient` uploads and `down_coefficient` downloads, a polling term of at
  /// least `poll_s`, and the S3 requests of K = `least_k` (file comment: tails and rows).
  void push_coarse(std::priority_queue<Node>& open, const Node& node, double up_coefficient, double down_coefficient, double poll_s,
                   int least_k) {
    const double rest = up_coefficient * up_min_ + down_coefficient * down_min_ + poll_s;
    const double t_lo = nan_low(rest + tail_fixed_s_);
    const double iterations = double(tail_iterations_);
    const double time_lo = iterations * t_lo;
    const double mt_lo = nan_low(options_.memory_mb(0) * rest + tail_fixed_mt_);
    const double cost_lo = cost_bound(node.w, least_k, iterations, mt_lo, time_lo);
    const std::optional<double> key = key_of(true, t_lo, time_lo, cost_lo);
    if (!key) return;
    Node keyed = node;
    keyed.key = *key;
    push_node(open, keyed);
  }

  /// The tail node of every W' ≥ w: K + 1 ≥ 2 uploads, c_d ≥ W − 1 downloads, polling ≥ 0.00119·(33.7·W + S).
  /// Nothing with W' > D·E can train a full iteration (K·B + (W' − K)·A ≥ W' when A ≥ 1).
  void push_tail(std::priority_queue<Node>& open, int w) {
    if (double(w) > samples_) return;
    const double wd = w;
    push_coarse(open, Node{0, w, 1, 0, 0, w, NodeKind::tail}, 2, wd - 1,
                kPollingSecondsPerWorkerMb * (kPollingOffsetMb * wd + model_.profile().model_size_mb), 1);
  }

  /// The row W = w, K ∈ first..last: K + 1 ≥ first + 1 uploads, c_d ≥ W + max(0, first − 2) downloads,
  /// polling 0.00119·(S/K + 33.7)·(2W − K) ≥ its value at K = last (both factors fall with K ≤ W).
  void push_row(std::priority_queue<Node>& open, int w, int first, int last) {
    const double wd = w, kd = last;
    push_coarse(open, Node{0, w, first, 0, 0, last, NodeKind::row}, first + 1.0, wd + std::max(0, first - 2),
                kPollingSecondsPerWorkerMb * (model_.profile().model_size_mb / kd + kPollingOffsetMb) * (2 * wd - kd), first);
  }

  void evaluate(const Node& node, ServerlessSearchStats& stats) {
    const Chunk& chunk = chunk_of(node.k);
    if (scanned_all_.size() <= std::size_t(node.w)) scanned_all_.resize(std::size_t(node.w) + 1);
    auto& all = scanned_all_[std::size_t(node.w)];
    if (all.empty()) all.assign(std::size_t(node.w) + 1, 0);
    all[std::size_t(node.k)] = 1;
    for (int i = node.ia; i <= node.ib; ++i) {
      const ServerlessEstimate e = model_.estimate({node.w, options_.memory_mb(i), node.k}, chunk.transfer);
      ++stats.configurations_evaluated;
      switch (goal_) {
        case ExactGoal::cost:
          if (candidate(e) && e.training_time_s <= options_.deadline_s && (!best_ || preferred(e, *best_))) best_ = e;
          break;
        case ExactGoal::time:
          if (candidate(e) && (!best_ || faster(e, *best_))) best_ = e;
          break;
        case ExactGoal::iteration:
          if (over_invocation_limit(e) && (!best_ || quicker_iteration(e, *best_))) best_ = e;
          break;
      }
    }
  }

  const ServerlessModel& model_;
  const ServerlessPlanOptions& options_;
  spotdnn::ProgressCallback progress_;
  int sizes_ = 0, max_w_ = 0, batch_ = 1;
  double samples_ = 0, train_c_ = 0;
  std::vector<double> columns_mb_;
  double up_min_ = kInf, down_min_ = kInf;
  double tail_fixed_s_ = 0, tail_fixed_mt_ = 0;
  std::int64_t tail_iterations_ = 1;
  IterationRounding rounding_ = IterationRounding::up;
  std::vector<std::optional<Chunk>> chunks_;
  std::vector<std::vector<char>> scanned_all_;  ///< [W][K]: pairs with a leaf evaluated
  ExactGoal goal_ = ExactGoal::cost;
  std::optional<ServerlessEstimate> best_;
  std::size_t nodes_done_ = 0;
};

}  // namespace search_detail

/// The cheapest configuration finishing by the deadline, by the branch and bound of the file comment:
/// status `optimal` with the same configuration and figures as plan_serverless_exhaustive, or `infeasible`
/// with the same fastest configuration and message. Progress: task "serverless exact search", unit
/// "nodes" (total unknown). Throws spotdnn::invalid_argument for bad options or negative prices.
/// @note docs/model.md eqs. (S1)–(S6) through ServerlessModel::estimate.
[[nodiscard]] inline ServerlessPlanResult plan_serverless_exact(const ServerlessModel& model, const ServerlessPlanOptions& options,
                                                                const spotdnn::ProgressCallback& progress = {}) {
  constexpr std::string_view task = "serverless exact search";
  search_detail::validate("plan_serverless_exact", model, options);
  search_detail::ExactSearcher searcher(model, options, progress);
  if (!searcher.bounds_apply()) return search_detail::enumerate(model, options, progress, task, ServerlessAlgorithm::exact);
  spotdnn::detail::report(progress, task, "nodes", 0, 0);
  ServerlessPlanResult r;
  r.algorithm = ServerlessAlgorithm::exact;
  r.deadline_s = options.deadline_s;
  const std::optional<ServerlessEstimate> best = searcher.search(search_detail::ExactGoal::cost, r.stats);
  std::optional<ServerlessEstimate> fastest, quickest;
  if (!best) fastest = searcher.search(search_detail::ExactGoal::time, r.stats);
  if (!best && !fastest) quickest = searcher.search(search_detail::ExactGoal::iteration, r.stats);
  searcher.count_pairs(r.stats);
  spotdnn::detail::report(progress, task, "nodes", double(searcher.nodes()), 0);
  search_detail::conclude(r, model, best, fastest, quickest);
  return r;
}

/// The fastest runnable configuration of the grid (least T; ties fewest W, least M, fewest K), by the
/// branch and bound on T of the file comment; nullopt when nothing can run. The deadline is not used.
/// Throws spotdnn::invalid_argument for bad options or negative prices.
[[nodiscard]] inline std::optional<ServerlessEstimate> fastest_serverless_configuration(const ServerlessModel& model,
                                                                                       ServerlessPlanOptions options) {
  if (!(options.deadline_s > 0)) options.deadline_s = 1;  // unused here; validate() wants a positive deadline
  search_detail::validate("fastest_serverless_configuration", model, options);
  search_detail::ExactSearcher searcher(model, options, {});
  ServerlessSearchStats stats;
  if (searcher.bounds_apply()) return searcher.search(search_detail::ExactGoal::time, stats);
  return search_detail::enumerate_all(model, options, {}, "").fastest;
}

}  // namespace spotdnn::serverless
