// SPDX-License-Identifier: Apache-2.0
// Hot loops compiled for AVX2 beside the baseline x86-64 build, chosen at
// run time.
//
// A loop over floats or doubles that only adds, subtracts, compares and
// takes maxima (no multiply to contract) gives the same bits at any vector
// width, so a second copy compiled for AVX2 (4 doubles or 8 floats per
// instruction, where the baseline has 2 or 4) is a free speed-up on the CPUs
// that have it. Usage:
//
//   void Kernel(...) { ...the loops... }
//   #if STRAG_AVX2_CLONES
//   STRAG_AVX2_FLATTEN void KernelAvx2(...) { Kernel(...); }
//   #endif
//   ... CpuHasAvx2() ? KernelAvx2(...) : Kernel(...)
//
// `flatten` inlines every call of the AVX2 function into it, so everything
// it runs is compiled for AVX2 and nothing compiled for AVX2 is shared with
// (and run by) the baseline path.

#ifndef STRAG_SRC_BASE_CPU_FEATURES_H_
#define STRAG_SRC_BASE_CPU_FEATURES_H_

//
// Integer code (parsers) gains from BMI1 and BMI2 as well (shifts and bit
// scans that leave the flags alone): STRAG_AVX2_BMI_FLATTEN, chosen by
// CpuHasAvx2Bmi(). Not FMA: GCC would contract a * b + c in whatever the
// copy inlines, and the bits would differ from the baseline path's.

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define STRAG_AVX2_CLONES 1
#define STRAG_AVX2_FLATTEN __attribute__((target("avx2"), flatten))
#define STRAG_AVX2_BMI_FLATTEN __attribute__((target("avx2,bmi,bmi2"), flatten))
#else
#define STRAG_AVX2_CLONES 0
#endif

namespace strag {

// Whether this CPU runs the AVX2 copies (always false where
// STRAG_AVX2_CLONES is 0).
bool CpuHasAvx2();
// Whether it runs the STRAG_AVX2_BMI_FLATTEN copies.
bool CpuHasAvx2Bmi();

}  // namespace strag

#endif  // STRAG_SRC_BASE_CPU_FEATURES_H_
