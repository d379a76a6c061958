// SPDX-License-Identifier: Apache-2.0
#include "econ/tail.h"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>
#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/toms748_solve.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <utility>
#include <vector>

#include "base/check.h"

namespace strag::econ {
namespace {

using Kind = Distribution::Kind;

// ---------------------------------------------------------------- parsing --

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    parts.push_back(Trim(s.substr(start, pos - start)));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

// Parses a finite number at the start of `s`; `rest` gets what follows it.
bool ParseLeadingNumber(std::string_view s, double* value,
                        std::string_view* rest) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, *value);
  if (ec != std::errc() || ptr == s.data() || !std::isfinite(*value)) {
    return false;
  }
  *rest = s.substr(static_cast<size_t>(ptr - s.data()));
  return true;
}

// A number followed by ns, us, ms or s, in seconds.
std::optional<double> DurationSeconds(std::string_view s) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
  double value = 0;
  std::string_view unit;
  if (!ParseLeadingNumber(Trim(s), &value, &unit)) return std::nullopt;
  for (const auto& [suffix, scale] : kUnits) {
    if (unit == suffix) return value * scale;
  }
  return std::nullopt;
}

// Each parse error names the whole distribution text first.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Status Error(std::string_view what) const {
    return InvalidInput("distribution \"" + std::string(text_) +
                        "\": " + std::string(what));
  }

  Result<double> Number(std::string_view s, std::string_view name) const {
    double value = 0;
    std::string_view rest;
    if (!ParseLeadingNumber(s, &value, &rest) || !rest.empty()) {
      return Error(std::string(name) + " \"" + std::string(s) +
                   "\" is not a number");
    }
    return value;
  }

  Result<double> Seconds(std::string_view s, std::string_view name) const {
    if (const std::optional<double> v = DurationSeconds(s)) return *v;
    return Error(std::string(name) + " \"" + std::string(s) +
                 "\" is not a duration with a unit (ns, us, ms or s)");
  }

  Status NonNegative(double v, std::string_view name) const {
    if (v >= 0) return Status::Ok();
    return Error(std::string(name) + " must not be negative");
  }
  Status Positive(double v, std::string_view name) const {
    if (v > 0) return Status::Ok();
    return Error(std::string(name) + " must be positive");
  }

 private:
  std::string_view text_;
};

Result<Distribution> ParseTwoPoint(const Parser& parser,
                                   const std::vector<std::string_view>& args) {
  Distribution d{.kind = Kind::kTwoPoint};
  bool has_p = false, has_d = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg.starts_with("p=")) {
      if (has_p) return parser.Error("p is given twice");
      ASSIGN_OR_RETURN(d.p, parser.Number(arg.substr(2), "p"));
      has_p = true;
    } else if (arg.starts_with("d=")) {
      if (has_d) return parser.Error("d is given twice");
      ASSIGN_OR_RETURN(d.delay_s, parser.Seconds(arg.substr(2), "d"));
      has_d = true;
    } else if (i == 0) {
      ASSIGN_OR_RETURN(d.base_s, parser.Seconds(arg, "the base time"));
    } else {
      return parser.Error("unexpected \"" + std::string(arg) +
                          "\"; twopoint takes [BASE,]p=P,d=D");
    }
  }
  if (!has_p || !has_d) {
    return parser.Error(
        "twopoint needs p=P and d=D, e.g. twopoint:100ms,p=0.01,d=20ms");
  }
  if (!(d.p >= 0 && d.p <= 1)) return parser.Error("p must be in [0, 1]");
  RETURN_IF_ERROR(parser.NonNegative(d.base_s, "the base time"));
  RETURN_IF_ERROR(parser.NonNegative(d.delay_s, "d"));
  return d;
}

// ------------------------------------------------------------------ math --

constexpr double kMaxLogSigma = 3.0;

// Boost.Math reports errors through its policy; the default throws. Nothing
// may throw out of econ, so every error returns its quiet value (NaN, or
// the largest double) and leaves errno alone. The callers below keep the
// arguments in range, so none of these should happen.
namespace bp = boost::math::policies;
using NoThrow = bp::policy<
    bp::domain_error<bp::ignore_error>, bp::pole_error<bp::ignore_error>,
    bp::overflow_error<bp::ignore_error>, bp::underflow_error<bp::ignore_error>,
    bp::denorm_error<bp::ignore_error>, bp::evaluation_error<bp::ignore_error>,
    bp::rounding_error<bp::ignore_error>,
    bp::indeterminate_result_error<bp::ignore_error>>;

// ln Phi(z), accurate in both tails (no 1 - tiny cancellation).
double LogNormalCdf(double z) {
  if (z < 0) return std::log(0.5 * std::erfc(-z / std::numbers::sqrt2));
  return std::log1p(-0.5 * std::erfc(z / std::numbers::sqrt2));
}

double NormalSurvival(double z) {
  return 0.5 * std::erfc(z / std::numbers::sqrt2);
}

// ln of the density of Z_(k:n), Z standard normal, without its constant.
// Zero exponents are skipped so that 0 * (-inf) never happens.
double LogOrderDensity(double z, int64_t k, int64_t n) {
  double v = -0.5 * z * z;
  if (k > 1) v += static_cast<double>(k - 1) * LogNormalCdf(z);
  if (n > k) v += static_cast<double>(n - k) * LogNormalCdf(-z);
  return v;
}

struct MeanSd {
  double mean = 0;
  double sd = 0;
};

constexpr double kWindow = 60;  // e^-60: the rest does not count
// erfc underflows past |z| ~ 37.5 and the log-density becomes -inf there;
// nothing in [-37, 37]'s complement weighs anything (e^-600 below the top).
constexpr double kZLimit = 37;

struct Window {
  double lo = 0, hi = 0;
  double top = 0;  // the largest value of the tilted log-density
};

// [lo, hi] outside which ln(density of Z_(k:n)) + tilt * z is more than
// kWindow below its top. The tilted log-density is concave, so that set is
// one interval around one peak: Brent finds the peak (in [-12, 12], where
// every peak lies for n <= 2e9 and tilt <= 6), TOMS 748 the two ends.
// About 100 evaluations.
Window FindWindow(int64_t k, int64_t n, double tilt) {
  const auto logf = [&](double z) {
    return LogOrderDensity(z, k, n) + tilt * z;
  };
  const auto [peak, neg_top] = boost::math::tools::brent_find_minima(
      [&](double z) { return -logf(z); }, -12.0, 12.0, 40);
  const double top = -neg_top;
  const auto above = [&](double z) { return logf(z) - (top - kWindow); };
  // The end on the side of `dir`: step out by doubling, then solve.
  const auto end = [&](double dir) {
    double d = 1, z = peak + dir;
    while (above(z) > 0) {
      if (std::fabs(z) >= kZLimit) return dir * kZLimit;
      d *= 2;
      z = std::clamp(peak + dir * d, -kZLimit, kZLimit);
    }
    std::uintmax_t iterations = 100;
    const auto [a, b] = boost::math::tools::toms748_solve(
        above, std::min(peak, z), std::max(peak, z),
        boost::math::tools::eps_tolerance<double>(30), iterations, NoThrow());
    return 0.5 * (a + b);
  };
  return {.lo = end(-1), .hi = end(1), .top = top};
}

// Mean and SD of g(Z_(k:n)) where g(z) = z (log_sigma == 0) or
// exp(log_sigma * z - log_sigma^2 / 2) (a lognormal of mean 1): adaptive
// Gauss-Kronrod (61 points, at most 2^4 pieces, 1e-12 relative) over the
// window of the weights that matter, 1 and g^2 ~ exp(2 sigma z). Dividing
// by the integral of the density removes the normalising constant, which
// is what keeps the exponentials in range for any n. The depth limit
// matters for large n: the log-density then carries ~n * 1e-16 of rounding
// noise, no tolerance below that can be met, and deeper splits only cost
// time. Measured against a 50-digit reference: docs/performance.md.
MeanSd OrderStatisticMoments(int64_t k, int64_t n, double log_sigma) {
  using Quadrature =
      boost::math::quadrature::gauss_kronrod<double, 61, NoThrow>;
  constexpr unsigned kMaxDepth = 4;
  constexpr double kTolerance = 1e-12;
  const Window window = FindWindow(k, n, 0);
  double lo = window.lo, hi = window.hi;
  if (log_sigma != 0) {
    const Window tilted = FindWindow(k, n, 2 * log_sigma);
    lo = std::min(lo, tilted.lo);
    hi = std::max(hi, tilted.hi);
  }
  const auto g = [&](double z) {
    return log_sigma == 0
               ? z
               : std::exp(log_sigma * z - 0.5 * log_sigma * log_sigma);
  };
  const auto w = [&](double z) {
    return std::exp(LogOrderDensity(z, k, n) - window.top);
  };
  const auto integrate = [&](auto f) {
    return Quadrature::integrate(f, lo, hi, kMaxDepth, kTolerance);
  };
  // The quadrature's tolerance is relative to the integral, so each
  // integrand is kept >= 0: g - g(lo) rather than g (whose integral is ~0
  // for a median), then the central second moment (no cancellation).
  const double g_lo = g(lo);
  const double mass = integrate(w);
  const double first =
      integrate([&](double z) { return w(z) * (g(z) - g_lo); });
  MeanSd out{.mean = g_lo + first / mass};
  const double second = integrate([&](double z) {
    const double d = g(z) - out.mean;
    return w(z) * d * d;
  });
  out.sd = std::sqrt(second / mass);
  return out;
}

// H_b - H_a = sum_{j=a+1}^{b} 1/j for 0 <= a <= b. As digamma(b + 1) -
// digamma(a + 1) (Boost.Math) when that loses nothing to cancellation
// (b >= 2a: the difference is >= ln 2) or the sum would be long (then
// within 5e-11, like the asymptotic series it replaced); else summed
// smallest first, which stays within ~1e-16 where the digamma difference
// would lose up to 3.5e-6 (a = 2e9 - 1, b = 2e9).
double HarmonicDiff(int64_t a, int64_t b) {
  if (b >= 2 * a || b - a > 100000) {
    return boost::math::digamma(static_cast<double>(b + 1), NoThrow()) -
           boost::math::digamma(static_cast<double>(a + 1), NoThrow());
  }
  double sum = 0;
  for (int64_t j = b; j > a; --j) sum += 1.0 / static_cast<double>(j);
  return sum;
}

// sum_{j=1}^{n} 1/j^2 = pi^2/6 - trigamma(n + 1) (Boost.Math), in O(1).
double InverseSquareSum(int64_t n) {
  return std::numbers::pi * std::numbers::pi / 6 -
         boost::math::trigamma(static_cast<double>(n + 1), NoThrow());
}

// P(Binomial(n, p) >= m): Boost.Math's upper tail (the regularised
// incomplete beta I_p(m, n - m + 1)): within 2.2e-11 relative even when
// tiny, and in ~0.1 ms at most for n up to 2e9.
double BinomialAtLeast(int64_t n, double p, int64_t m) {
  if (m <= 0) return 1;
  if (m > n || p <= 0) return 0;
  if (p >= 1) return 1;
  const boost::math::binomial_distribution<double, NoThrow> binomial(
      static_cast<double>(n), p);
  return std::clamp(boost::math::cdf(boost::math::complement(
                        binomial, static_cast<double>(m - 1))),
                    0.0, 1.0);
}

// mu of ln X for a lognormal with the given mean.
double LogMu(const Distribution& d) {
  return std::log(d.mean_s) - 0.5 * d.log_sigma * d.log_sigma;
}

}  // namespace

Result<Distribution> ParseDistribution(std::string_view text) {
  const Parser parser(text);
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return parser.Error(
        "expected KIND:PARAMS with KIND normal, lognormal, exp, twopoint or "
        "fixed, e.g. normal:100ms,5ms");
  }
  const std::string_view kind = Trim(text.substr(0, colon));
  const std::vector<std::string_view> args = Split(text.substr(colon + 1), ',');
  const auto want = [&](size_t count, std::string_view form) -> Status {
    if (args.size() == count) return Status::Ok();
    return parser.Error(std::string(kind) + " takes " + std::string(form));
  };
  Distribution d;
  if (kind == "normal") {
    RETURN_IF_ERROR(want(2, "MEAN,SD, e.g. normal:100ms,5ms"));
    d.kind = Kind::kNormal;
    ASSIGN_OR_RETURN(d.mean_s, parser.Seconds(args[0], "the mean"));
    ASSIGN_OR_RETURN(d.sigma_s, parser.Seconds(args[1], "the sd"));
    RETURN_IF_ERROR(parser.Positive(d.mean_s, "the mean"));
    RETURN_IF_ERROR(parser.NonNegative(d.sigma_s, "the sd"));
  } else if (kind == "lognormal") {
    RETURN_IF_ERROR(
        want(2, "MEAN,SIGMA (SIGMA = sd of ln X), e.g. lognormal:100ms,0.1"));
    d.kind = Kind::kLognormal;
    ASSIGN_OR_RETURN(d.mean_s, parser.Seconds(args[0], "the mean"));
    ASSIGN_OR_RETURN(d.log_sigma, parser.Number(args[1], "sigma"));
    RETURN_IF_ERROR(parser.Positive(d.mean_s, "the mean"));
    if (!(d.log_sigma >= 0 && d.log_sigma <= kMaxLogSigma)) {
      return parser.Error("sigma (sd of ln X) must be in [0, 3]");
    }
  } else if (kind == "exp" || kind == "exponential") {
    RETURN_IF_ERROR(want(1, "MEAN, e.g. exp:100ms"));
    d.kind = Kind::kExponential;
    ASSIGN_OR_RETURN(d.mean_s, parser.Seconds(args[0], "the mean"));
    RETURN_IF_ERROR(parser.Positive(d.mean_s, "the mean"));
  } else if (kind == "twopoint" || kind == "two-point") {
    return ParseTwoPoint(parser, args);
  } else if (kind == "fixed") {
    RETURN_IF_ERROR(want(1, "T, e.g. fixed:100ms"));
    d.kind = Kind::kFixed;
    ASSIGN_OR_RETURN(d.mean_s, parser.Seconds(args[0], "the time"));
    RETURN_IF_ERROR(parser.NonNegative(d.mean_s, "the time"));
  } else {
    return parser.Error("unknown kind \"" + std::string(kind) +
                        "\"; expected normal, lognormal, exp, twopoint or "
                        "fixed");
  }
  return d;
}

Result<double> ParseDuration(std::string_view text) {
  if (const std::optional<double> v = DurationSeconds(text)) return *v;
  std::string message = "\"";  // appended, not `+`: GCC 12 -Wrestrict
  message.append(text).append(
      "\" is not a duration with a unit (ns, us, ms or s), e.g. 20ms");
  return InvalidInput(std::move(message));
}

std::string FormatDuration(double seconds) {
  const double a = std::fabs(seconds);
  const char* unit = "s";
  double v = seconds;
  if (a == 0 || a >= 1) {
  } else if (a >= 1e-3) {
    unit = "ms";
    v = seconds * 1e3;
  } else if (a >= 1e-6) {
    unit = "us";
    v = seconds * 1e6;
  } else {
    unit = "ns";
    v = seconds * 1e9;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g %s", v, unit);
  return buf;
}

std::string DescribeDistribution(const Distribution& d) {
  char sigma[32], p[32];
  std::snprintf(sigma, sizeof(sigma), "%.6g", d.log_sigma);
  std::snprintf(p, sizeof(p), "%.6g", d.p);
  switch (d.kind) {
    case Kind::kNormal:
      return "normal(mean " + FormatDuration(d.mean_s) + ", sd " +
             FormatDuration(d.sigma_s) + ")";
    case Kind::kLognormal:
      return "lognormal(mean " + FormatDuration(d.mean_s) + ", sd of ln " +
             sigma + ")";
    case Kind::kExponential:
      return "exponential(mean " + FormatDuration(d.mean_s) + ")";
    case Kind::kTwoPoint:
      return "two-point(" + FormatDuration(d.base_s) + ", +" +
             FormatDuration(d.delay_s) + " with probability " + p + ")";
    case Kind::kFixed:
      return "fixed(" + FormatDuration(d.mean_s) + ")";
  }
  return "";
}

double Mean(const Distribution& d) {
  if (d.kind == Kind::kTwoPoint) return d.base_s + d.p * d.delay_s;
  return d.mean_s;
}

double StdDev(const Distribution& d) {
  switch (d.kind) {
    case Kind::kNormal:
      return d.sigma_s;
    case Kind::kLognormal:
      return d.mean_s * std::sqrt(std::expm1(d.log_sigma * d.log_sigma));
    case Kind::kExponential:
      return d.mean_s;
    case Kind::kTwoPoint:
      return d.delay_s * std::sqrt(d.p * (1 - d.p));
    case Kind::kFixed:
      return 0;
  }
  return 0;
}

double ProbabilityAbove(const Distribution& d, double threshold_s) {
  const double t = threshold_s;
  switch (d.kind) {
    case Kind::kNormal:
      if (d.sigma_s == 0) return d.mean_s > t ? 1 : 0;
      return NormalSurvival((t - d.mean_s) / d.sigma_s);
    case Kind::kLognormal:
      if (t <= 0) return 1;
      if (d.log_sigma == 0) return d.mean_s > t ? 1 : 0;
      return NormalSurvival((std::log(t) - LogMu(d)) / d.log_sigma);
    case Kind::kExponential:
      return t < 0 ? 1 : std::exp(-t / d.mean_s);
    case Kind::kTwoPoint:
      if (d.base_s > t) return 1;
      return d.base_s + d.delay_s > t ? d.p : 0;
    case Kind::kFixed:
      return d.mean_s > t ? 1 : 0;
  }
  return 0;
}

double ExpectedOrderStatistic(const Distribution& d, int64_t k, int64_t n) {
  STRAG_CHECK(k >= 1 && k <= n, "order statistic out of range");
  switch (d.kind) {
    case Kind::kNormal:
      if (d.sigma_s == 0) return d.mean_s;
      return d.mean_s + d.sigma_s * OrderStatisticMoments(k, n, 0).mean;
    case Kind::kLognormal:
      if (d.log_sigma == 0) return d.mean_s;
      return d.mean_s * OrderStatisticMoments(k, n, d.log_sigma).mean;
    case Kind::kExponential:
      return d.mean_s * HarmonicDiff(n - k, n);
    case Kind::kTwoPoint:
      // The k-th smallest is delayed when at least n - k + 1 workers are.
      return d.base_s + d.delay_s * BinomialAtLeast(n, d.p, n - k + 1);
    case Kind::kFixed:
      return d.mean_s;
  }
  return 0;
}

double ExpectedMax(const Distribution& d, int64_t n) {
  if (d.kind == Kind::kTwoPoint) {
    return d.base_s + d.delay_s * ProbabilityAnySlow(d.p, n);
  }
  return ExpectedOrderStatistic(d, n, n);
}

double StdMax(const Distribution& d, int64_t n) {
  STRAG_CHECK(n >= 1, "StdMax needs at least one worker");
  switch (d.kind) {
    case Kind::kNormal:
      if (d.sigma_s == 0) return 0;
      return d.sigma_s * OrderStatisticMoments(n, n, 0).sd;
    case Kind::kLognormal:
      if (d.log_sigma == 0) return 0;
      return d.mean_s * OrderStatisticMoments(n, n, d.log_sigma).sd;
    case Kind::kExponential:
      // The max is a sum of independent exponentials of means mean/j.
      return d.mean_s * std::sqrt(InverseSquareSum(n));
    case Kind::kTwoPoint: {
      const double q = ProbabilityAnySlow(d.p, n);
      return d.delay_s * std::sqrt(q * (1 - q));
    }
    case Kind::kFixed:
      return 0;
  }
  return 0;
}

double ExpectedWithBackups(const Distribution& d, int64_t n, int64_t backups) {
  STRAG_CHECK(n >= 1 && backups >= 0, "bad worker counts");
  return ExpectedOrderStatistic(d, n, n + backups);
}

double ProbabilityAnySlow(double p, int64_t n) {
  if (p >= 1) return n > 0 ? 1 : 0;
  return -std::expm1(static_cast<double>(n) * std::log1p(-p));
}

double HarmonicNumber(int64_t n) { return HarmonicDiff(0, n); }

double NormalMaxFactor(int64_t n) {
  return OrderStatisticMoments(n, n, 0).mean;
}

double NormalMaxSdFactor(int64_t n) {
  return OrderStatisticMoments(n, n, 0).sd;
}

TailSummary SummarizeTail(const Distribution& d, int64_t n,
                          std::optional<double> slow_above_s) {
  TailSummary s;
  s.workers = n;
  s.mean_s = Mean(d);
  s.expected_max_s = ExpectedMax(d, n);
  s.std_max_s = StdMax(d, n);
  s.utilization = s.expected_max_s > 0 ? s.mean_s / s.expected_max_s : 0;
  s.lost_gpu_seconds_per_step =
      static_cast<double>(n) * (s.expected_max_s - s.mean_s);
  if (slow_above_s) {
    s.p_slow = ProbabilityAbove(d, *slow_above_s);
  } else if (d.kind == Kind::kTwoPoint) {
    s.p_slow = d.p;
  }
  if (s.p_slow) s.p_any_slow = ProbabilityAnySlow(*s.p_slow, n);
  return s;
}

}  // namespace strag::econ
