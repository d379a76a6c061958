// SPDX-License-Identifier: Apache-2.0
// RollingReference: a baseline that is the median (and MAD) of the last K
// values its owner accepted. The owner decides what to accept: a value
// that looks abnormal is not pushed, so the baseline stays frozen while
// something is wrong and a lasting slowdown is not absorbed into "normal"
// (the individual reference of small peer groups, the transfer baseline of
// a collective kind; live-monitoring.md §4.2, §4.4).

#ifndef STRAG_SRC_DIAGNOSE_ONLINE_ROLLING_REFERENCE_H_
#define STRAG_SRC_DIAGNOSE_ONLINE_ROLLING_REFERENCE_H_

#include <array>
#include <cstdint>

namespace strag::diagnose::online {

class RollingReference {
 public:
  static constexpr int32_t kCapacity = 48;
  static constexpr int32_t kReady = 16;  // values before it is trusted

  void Push(double value);
  bool ready() const { return count_ >= kReady; }
  double median() const { return median_; }
  double mad() const { return mad_; }

 private:
  std::array<float, kCapacity> values_{};
  int32_t count_ = 0, next_ = 0;
  double median_ = 0, mad_ = 0;  // of values_, updated by Push (O(K))
};

}  // namespace strag::diagnose::online

#endif  // STRAG_SRC_DIAGNOSE_ONLINE_ROLLING_REFERENCE_H_
