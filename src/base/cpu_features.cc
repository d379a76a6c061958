// SPDX-License-Identifier: Apache-2.0
#include "base/cpu_features.h"

namespace strag {

bool CpuHasAvx2() {
#if STRAG_AVX2_CLONES
  static const bool has = __builtin_cpu_supports("avx2") != 0;
  return has;
#else
  return false;
#endif
}

bool CpuHasAvx2Bmi() {
#if STRAG_AVX2_CLONES
  static const bool has = __builtin_cpu_supports("avx2") != 0 &&
                          __builtin_cpu_supports("bmi") != 0 &&
                          __builtin_cpu_supports("bmi2") != 0;
  return has;
#else
  return false;
#endif
}

}  // namespace strag
