// SPDX-License-Identifier: Apache-2.0
#include "econ/tail.h"

#include <gtest/gtest.h>

#include <cmath>

namespace strag::econ {
namespace {

using Kind = Distribution::Kind;

Distribution Parse(std::string_view text) {
  Result<Distribution> d = ParseDistribution(text);
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? *d : Distribution{};
}

// whatif-method.md §5.2: e_N and SD/sigma of the maximum of N standard
// normals.
TEST(TailTest, NormalMaxTable) {
  struct Row {
    int64_t n;
    double e, sd;
  };
  const Row rows[] = {
      {2, 0.5642, 0.8256},     {8, 1.4236, 0.6107},      {64, 2.3437, 0.4511},
      {100, 2.5076, 0.4294},   {512, 3.0439, 0.3697},    {1000, 3.2414, 0.3514},
      {1024, 3.2482, 0.3508},  {4096, 3.6261, 0.3201},   {8192, 3.8023, 0.3075},
      {16384, 3.9714, 0.2963}, {100000, 4.3843, 0.2719},
  };
  for (const Row& r : rows) {
    EXPECT_NEAR(NormalMaxFactor(r.n), r.e, 1e-4) << "N = " << r.n;
    EXPECT_NEAR(NormalMaxSdFactor(r.n), r.sd, 1e-4) << "N = " << r.n;
  }
  // Closed forms: E[max of 2] = 1/sqrt(pi); SD[max of 2]^2 = 1 - 1/pi.
  EXPECT_NEAR(NormalMaxFactor(2), 1 / std::sqrt(M_PI), 1e-9);
  EXPECT_NEAR(NormalMaxSdFactor(2), std::sqrt(1 - 1 / M_PI), 1e-9);
  EXPECT_NEAR(NormalMaxFactor(1), 0, 1e-12);
  EXPECT_NEAR(NormalMaxSdFactor(1), 1, 1e-9);
  // E[max of 3] = 3 / (2 sqrt(pi)).
  EXPECT_NEAR(NormalMaxFactor(3), 1.5 / std::sqrt(M_PI), 1e-9);
}

// §5.2 validation recipe: N(100 ms, 5 ms) workers.
TEST(TailTest, NormalStepTimes) {
  const Distribution d = Parse("normal:100ms,5ms");
  EXPECT_NEAR(ExpectedMax(d, 1024) * 1e3, 116.24, 5e-3);
  EXPECT_NEAR(ExpectedMax(d, 8192) * 1e3, 119.01, 5e-3);
  EXPECT_NEAR(StdMax(d, 4096) * 1e3, 5 * 0.3201, 5e-4);
  const TailSummary s = SummarizeTail(d, 1024);
  EXPECT_NEAR(s.utilization, 100 / 116.241, 1e-5);
  EXPECT_NEAR(s.lost_gpu_seconds_per_step, 1024 * 0.016241, 1e-3);
  EXPECT_FALSE(s.p_any_slow.has_value());
}

// §5.2: E[max]/E[X] of lognormals with sigma of ln X = 0.05, 0.1, 0.2.
TEST(TailTest, LognormalRatios) {
  struct Row {
    double sigma;
    double ratio[4];
  };
  const int64_t ns[4] = {8, 64, 512, 4096};
  const Row rows[] = {{0.05, {1.0729, 1.1232, 1.1631, 1.1974}},
                      {0.1, {1.1494, 1.2591, 1.3500, 1.4306}},
                      {0.2, {1.3130, 1.5729, 1.8068, 2.0285}}};
  for (const Row& r : rows) {
    Distribution d{
        .kind = Kind::kLognormal, .mean_s = 0.1, .log_sigma = r.sigma};
    for (int i = 0; i < 4; ++i) {
      EXPECT_NEAR(ExpectedMax(d, ns[i]) / Mean(d), r.ratio[i], 1e-3)
          << "sigma " << r.sigma << " N " << ns[i];
    }
  }
  // One worker: the mean and the SD of the lognormal itself.
  const Distribution d = Parse("lognormal:100ms,0.2");
  EXPECT_NEAR(ExpectedMax(d, 1), 0.1, 1e-12);
  EXPECT_NEAR(StdMax(d, 1), StdDev(d), 1e-10);
}

// §5.2: E[max] of exponentials is H_N / lambda; backups (H_{N+b} - H_b).
TEST(TailTest, ExponentialAndHarmonicNumbers) {
  EXPECT_NEAR(HarmonicNumber(8), 2.7179, 1e-4);
  EXPECT_NEAR(HarmonicNumber(64), 4.7439, 1e-4);
  EXPECT_NEAR(HarmonicNumber(512), 6.8165, 1e-4);
  EXPECT_NEAR(HarmonicNumber(4096), 8.8951, 1e-4);
  EXPECT_EQ(HarmonicNumber(0), 0);
  // The asymptotic series joins the exact sum seamlessly.
  EXPECT_NEAR(HarmonicNumber(100001) - HarmonicNumber(100000), 1.0 / 100001,
              1e-13);
  const Distribution d = Parse("exp:100ms");
  EXPECT_NEAR(ExpectedMax(d, 64), 0.1 * 4.7439, 1e-5);
  EXPECT_NEAR(StdMax(d, 1), 0.1, 1e-12);
  EXPECT_NEAR(ExpectedWithBackups(d, 64, 0), ExpectedMax(d, 64), 1e-12);
  EXPECT_NEAR(ExpectedWithBackups(d, 64, 4),
              0.1 * (HarmonicNumber(68) - HarmonicNumber(4)), 1e-12);
  EXPECT_NEAR(ExpectedOrderStatistic(d, 1, 10), 0.1 / 10, 1e-12);
}

// Order statistics other than the max: by symmetry E[Z_(k:n)] =
// -E[Z_(n-k+1:n)], the median of an odd n is the mean, and backups help.
TEST(TailTest, NormalOrderStatistics) {
  const Distribution d = Parse("normal:0.1s,10ms");
  EXPECT_NEAR(ExpectedOrderStatistic(d, 3, 50) - 0.1,
              -(ExpectedOrderStatistic(d, 48, 50) - 0.1), 1e-10);
  EXPECT_NEAR(ExpectedOrderStatistic(d, 51, 101), 0.1, 1e-10);  // median
  EXPECT_LT(ExpectedWithBackups(d, 1024, 16), ExpectedMax(d, 1024));
  EXPECT_GT(ExpectedWithBackups(d, 1024, 16), 0.1);
}

// §5.1 fan-out amplification, and the two-point straggler model.
TEST(TailTest, FanOut) {
  EXPECT_NEAR(ProbabilityAnySlow(0.01, 100), 0.634, 5e-4);
  EXPECT_NEAR(ProbabilityAnySlow(1e-3, 1000), 0.632, 5e-4);
  EXPECT_NEAR(ProbabilityAnySlow(1e-3, 2000), 0.865, 5e-4);
  EXPECT_NEAR(ProbabilityAnySlow(1e-4, 2000), 0.181, 5e-4);
  EXPECT_NEAR(ProbabilityAnySlow(1e-4, 8192), 0.559, 5e-4);
  EXPECT_EQ(ProbabilityAnySlow(0, 100), 0);
  EXPECT_EQ(ProbabilityAnySlow(1, 100), 1);

  const Distribution d = Parse("twopoint:100ms,p=0.01,d=20ms");
  const double q = 1 - std::pow(0.99, 100);
  EXPECT_NEAR(ExpectedMax(d, 100), 0.1 + 0.02 * q, 1e-12);
  EXPECT_NEAR(StdMax(d, 100), 0.02 * std::sqrt(q * (1 - q)), 1e-12);
  const TailSummary s = SummarizeTail(d, 100);
  ASSERT_TRUE(s.p_any_slow.has_value());
  EXPECT_NEAR(*s.p_any_slow, q, 1e-12);
  EXPECT_NEAR(s.mean_s, 0.1002, 1e-12);
  EXPECT_NEAR(s.lost_gpu_seconds_per_step, 100 * (0.02 * q - 0.0002), 1e-12);
  // With b backups the step is slow only when more than b workers are.
  const double p0 = std::pow(0.99, 102);
  const double p1 = 102 * 0.01 * std::pow(0.99, 101);
  EXPECT_NEAR(ExpectedWithBackups(d, 100, 2),
              0.1 + 0.02 * (1 - p0 - p1 - 5151 * 1e-4 * std::pow(0.99, 100)),
              1e-12);
}

TEST(TailTest, SlowAboveThreshold) {
  const Distribution d = Parse("normal:100ms,5ms");
  const TailSummary s = SummarizeTail(d, 1000, 0.1 + 3 * 0.005);
  ASSERT_TRUE(s.p_slow.has_value());
  EXPECT_NEAR(*s.p_slow, 0.0013499, 1e-7);
  EXPECT_NEAR(*s.p_any_slow, 1 - std::pow(1 - 0.0013499, 1000), 1e-4);
  EXPECT_NEAR(ProbabilityAbove(Parse("exp:1s"), 1.0), std::exp(-1), 1e-15);
  EXPECT_NEAR(ProbabilityAbove(Parse("lognormal:1s,0.5"),
                               std::exp(-0.125)),  // the median
              0.5, 1e-12);
  EXPECT_EQ(ProbabilityAbove(Parse("twopoint:1s,p=0.1,d=1s"), 1.5), 0.1);
  EXPECT_EQ(ProbabilityAbove(Parse("fixed:1s"), 1.5), 0);
}

// Against a 50-digit reference (cpp_bin_float_50: Gauss-Legendre on the
// order-statistic density, the incomplete beta, digamma), computed once;
// the relative errors measured are in docs/performance.md.
TEST(TailTest, MatchesHighPrecisionReference) {
  const auto expect_rel = [](double got, double want, double rel) {
    EXPECT_NEAR(got, want, rel * std::fabs(want));
  };
  expect_rel(NormalMaxFactor(1000000000), 6.0876845844459586505, 1e-13);
  expect_rel(NormalMaxSdFactor(1000000000), 0.20211396207200556267, 1e-13);
  // The weight of E[X^2] lies near z = 6 + 3 sigma: beyond |z| = 12.
  const Distribution wide{
      .kind = Kind::kLognormal, .mean_s = 1, .log_sigma = 3};
  expect_rel(ExpectedMax(wide, 8), 7.3415773511761841128, 1e-13);
  expect_rel(StdMax(wide, 8), 254.49145941239314986, 1e-13);
  const Distribution narrow{
      .kind = Kind::kLognormal, .mean_s = 1, .log_sigma = 0.1};
  expect_rel(ExpectedMax(narrow, 1024), 1.3777405268973684055, 1e-13);
  expect_rel(StdMax(narrow, 1024), 0.049023194122957027956, 1e-13);
  const Distribution z{.kind = Kind::kNormal, .mean_s = 0, .sigma_s = 1};
  expect_rel(ExpectedWithBackups(z, 1024, 16), 2.1462279379288344206, 1e-13);
  // Two-point with backups: P(Binomial(N + B, p) > B), also when tiny.
  const Distribution half{.kind = Kind::kTwoPoint, .p = 0.5, .delay_s = 1};
  expect_rel(ExpectedWithBackups(half, 1000000000, 1000000000),
             0.49999107937942035122, 1e-13);
  const Distribution rare{.kind = Kind::kTwoPoint, .p = 1e-9, .delay_s = 1};
  expect_rel(ExpectedWithBackups(rare, 2000000000 - 16, 16),
             5.6060506649961927327e-11, 1e-10);
  expect_rel(HarmonicNumber(100000), 12.090146129863427947, 1e-15);
  const Distribution e{.kind = Kind::kExponential, .mean_s = 1};
  expect_rel(StdMax(e, 100000), std::sqrt(1.6449240668982262698), 1e-15);
}

TEST(TailTest, ParsesUnitsAndForms) {
  EXPECT_DOUBLE_EQ(Parse("fixed:250us").mean_s, 250e-6);
  EXPECT_DOUBLE_EQ(Parse("fixed:7ns").mean_s, 7e-9);
  EXPECT_DOUBLE_EQ(Parse("fixed:1.5s").mean_s, 1.5);
  const Distribution n = Parse("normal: 100ms , 5ms");
  EXPECT_EQ(n.kind, Kind::kNormal);
  EXPECT_DOUBLE_EQ(n.sigma_s, 0.005);
  const Distribution t = Parse("twopoint:p=0.01,d=20ms");
  EXPECT_EQ(t.kind, Kind::kTwoPoint);
  EXPECT_EQ(t.base_s, 0);
  EXPECT_DOUBLE_EQ(t.delay_s, 0.02);
  EXPECT_EQ(Parse("exponential:1s").kind, Kind::kExponential);
  EXPECT_EQ(DescribeDistribution(Parse("normal:100ms,5ms")),
            "normal(mean 100 ms, sd 5 ms)");
  EXPECT_EQ(DescribeDistribution(Parse("twopoint:100ms,p=0.01,d=20ms")),
            "two-point(100 ms, +20 ms with probability 0.01)");
  EXPECT_EQ(FormatDuration(0.11624), "116.24 ms");
  EXPECT_EQ(FormatDuration(0), "0 s");
}

TEST(TailTest, ParseErrorsNameTheText) {
  const char* bad[] = {"normal",
                       "normal:100ms",
                       "normal:100,5ms",
                       "normal:100ms,-5ms",
                       "normal:100 parsecs,5ms",
                       "lognormal:100ms,9",
                       "lognormal:100ms,0.1ms",
                       "exp:0s",
                       "twopoint:100ms,p=2,d=1ms",
                       "twopoint:100ms,p=0.1",
                       "twopoint:100ms,q=0.1,d=1ms",
                       "fixed:nanms",
                       "gamma:1s,2"};
  for (const char* text : bad) {
    const Result<Distribution> d = ParseDistribution(text);
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(d.status().message().find(std::string("\"") + text + "\""),
              std::string::npos)
        << d.status().message();
  }
}

}  // namespace
}  // namespace strag::econ
