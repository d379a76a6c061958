// SPDX-License-Identifier: Apache-2.0
#include "cli/simulate_limits.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>

namespace strag::cli {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
static_assert(kMemoryFraction == 0.5, "the messages say half");

std::string Thousands(int64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The largest n in [1, hi] for which `fits(n)` holds (fits is monotone:
// true up to some n), or 0 when it holds for none.
template <typename Fits>
int64_t Largest(int64_t hi, Fits fits) {
  int64_t lo = 0;  // fits(lo) holds, or lo == 0
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// "1 step", "2 steps".
std::string Count(int64_t n, const std::string& what) {
  return Thousands(n) + " " + what + (n == 1 ? "" : "s");
}

std::string Shape(const sim::JobSpec& spec, const sim::Footprint& f) {
  const int64_t replicas = int64_t{spec.job.dp} + spec.job.backup_workers;
  return Count(f.ops, "op") + " (" + Thousands(f.ops_per_step) +
         " per step of each of " + Count(replicas, "DP replica") + ", " +
         Count(spec.job.steps, "step") + ")";
}

// The part of the estimate that dominates it, for the message.
std::string LargestPart(const sim::Footprint& f) {
  const std::pair<int64_t, std::string> parts[] = {
      {f.simulate_bytes, "the simulation"},
      {f.sequence_bytes,
       Thousands(f.sequence_lengths) + " sequence lengths and their text"},
      {f.write_bytes, "the ops table written"},
      {f.analyze_bytes, "the analysis"},
  };
  const auto& top = *std::max_element(
      std::begin(parts), std::end(parts),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  return MemoryText(top.first) + " of it " + top.second;
}

// How to shrink a job whose one step alone is too large.
std::string ShrinkOneStep(const sim::JobSpec& spec) {
  std::string out = "use fewer microbatches (job.microbatches)";
  if (spec.sequences.per_microbatch > 1) {
    out += ", sequences per microbatch (sequences.per_microbatch)";
  }
  return out + ", stages or DP replicas";
}

}  // namespace

std::string MemoryText(int64_t bytes) {
  char buf[48];
  const auto b = static_cast<double>(bytes);
  if (b >= 1e12) {
    std::snprintf(buf, sizeof(buf), "%.3g TB", b / 1e12);
  } else if (b >= 1e9) {
    std::snprintf(buf, sizeof(buf), "%.1f GB", b / 1e9);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f MB", b / 1e6);
  }
  return buf;
}

MemoryBudget ThisMachinesBudget() {
  MemoryBudget budget;
  budget.of = kMax;
  budget.what = "of physical memory";
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0 && pages <= kMax / page) {
    budget.of = int64_t{pages} * page;
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      limit.rlim_cur < static_cast<rlim_t>(budget.of)) {
    budget.of = static_cast<int64_t>(limit.rlim_cur);
    budget.what = "address-space limit (ulimit -v)";
  }
  budget.bytes =
      static_cast<int64_t>(static_cast<double>(budget.of) * kMemoryFraction);
  return budget;
}

Status CheckSimulationFits(const std::string& source, const sim::JobSpec& spec,
                           const sim::FootprintOptions& options,
                           std::optional<int64_t> max_ops,
                           const MemoryBudget& budget) {
  const sim::Footprint f = sim::EstimateFootprint(spec, options);
  const int64_t steps = spec.job.steps;
  if (max_ops) {
    if (f.ops <= *max_ops) return Status::Ok();
    int64_t per_step = 0;  // ops of one step, every replica
    if (__builtin_mul_overflow(f.ops_per_step,
                               int64_t{spec.job.dp} + spec.job.backup_workers,
                               &per_step)) {
      per_step = kMax;
    }
    const int64_t fit = per_step > 0 ? *max_ops / per_step : 0;
    return InvalidInput(source + ": the job has " + Shape(spec, f) +
                        ", above --max-ops " + Thousands(*max_ops) + "; " +
                        (fit >= 1
                             ? "simulate at most " + Count(fit, "step") +
                                   " (job.steps) or fewer microbatches"
                             : "even one step has " + Count(per_step, "op") +
                                   ": " + ShrinkOneStep(spec)));
  }
  if (f.bytes <= budget.bytes) return Status::Ok();
  // Steps that fit (all written when the run writes), and steps that fit
  // written with every step still simulated (--steps-window).
  auto fits = [&](sim::FootprintOptions o) {
    return sim::EstimateFootprint(spec, o).bytes <= budget.bytes;
  };
  const int64_t steps_fit = Largest(steps, [&](int64_t n) {
    sim::FootprintOptions o = options;
    o.steps = n;
    o.first_step = 0;
    o.last_step = n - 1;
    return fits(o);
  });
  const int64_t window_fit =
      !options.write ? 0 : Largest(steps, [&](int64_t n) {
        sim::FootprintOptions o = options;
        o.first_step = 0;
        o.last_step = n - 1;
        return fits(o);
      });
  std::string advice;
  if (steps_fit >= 1) {
    advice = "simulate at most " + Count(steps_fit, "step") +
             " (job.steps) or fewer microbatches";
  } else {
    sim::FootprintOptions one = options;
    one.steps = 1;
    advice = "even one step needs about " +
             MemoryText(sim::EstimateFootprint(spec, one).bytes) + ": " +
             ShrinkOneStep(spec);
  }
  // Fewer steps is always the smaller job; the window keeps them all (for
  // their persistence and truth) and writes (and analyses) only some.
  const int64_t written = options.write
                              ? std::min(options.last_step, steps - 1) -
                                    std::max<int64_t>(options.first_step, 0) + 1
                              : 0;
  if (window_fit >= 1 && window_fit < written) {
    advice += ", or keep all " + Count(steps, "step") + " and write at most " +
              Thousands(window_fit) +
              " of them with --steps-window A:B (every step is still "
              "simulated)";
  }
  return InvalidInput(
      source + ": the job is too large for this machine: " + Shape(spec, f) +
      " need about " + MemoryText(f.bytes) + " (" + LargestPart(f) +
      "), more than " + MemoryText(budget.bytes) + " (half of the " +
      MemoryText(budget.of) + " " + budget.what + "); " + advice +
      ", or set the limit with --max-ops N");
}

}  // namespace strag::cli
