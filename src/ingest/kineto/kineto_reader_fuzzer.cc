// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the Kineto reader: any input (gzip or not) must parse or
// fail cleanly, and give the same RankTrace, or the same error, in one
// piece as cut into random pieces with a random batch size, also under
// small input limits (refusals must not depend on the cut either). Build with
// clang and -fsanitize=fuzzer,address,undefined (STRAG_BUILD_FUZZERS=ON);
// kineto_fuzz_driver.cc runs it without libFuzzer, in CI.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>

#include "ingest/common/gzip.h"
#include "ingest/kineto/kineto_parser.h"
#include "ingest/kineto/kineto_test_util.h"

namespace {

strag::Result<strag::trace::RankTrace> ParseInPieces(
    std::string_view text, const strag::ingest::KinetoOptions& options,
    std::mt19937_64* random) {
  strag::ingest::KinetoParser parser("fuzz.json", options);
  size_t at = 0;
  while (at < text.size()) {
    const size_t n = std::min<size_t>(text.size() - at, 1 + (*random)() % 97);
    const strag::Status status = parser.Feed(text.substr(at, n));
    if (!status.ok()) return status;
    at += n;
  }
  return parser.Finish();
}

void Fail(const std::string& what) {
  std::fprintf(stderr, "kineto fuzz: %s\n", what.c_str());
  std::abort();
}

}  // namespace

// For kineto_fuzz_driver.cc: whether the last input parsed (to keep the
// inputs that reach deep into the reader).
bool kineto_fuzz_last_parsed = false;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  kineto_fuzz_last_parsed = false;
  // Bounded like the reader: a bomb is no reason to hold gigabytes.
  const auto text =
      strag::ingest::MaybeGunzip(bytes, "fuzz.json", size_t{32} << 20);
  if (!text.ok()) return 0;
  std::mt19937_64 random(size * 1315423911u +
                         (size > 0 ? static_cast<unsigned char>(data[0]) : 0));
  strag::ingest::KinetoOptions options;
  options.default_rank = size % 3 == 0 ? -1 : 0;
  if (random() % 3 == 0) {
    options.limits.max_event_bytes = 1 + random() % 4096;
    options.limits.max_token_bytes = 1 + random() % 512;
  }
  const auto whole =
      strag::ingest::ParseKinetoTrace(*text, "fuzz.json", options);
  options.batch_bytes = 1 + random() % 600;
  const auto pieces = ParseInPieces(*text, options, &random);
  if (whole.ok() != pieces.ok()) {
    Fail("one piece: " + (whole.ok() ? "ok" : whole.status().message()) +
         "; pieces: " + (pieces.ok() ? "ok" : pieces.status().message()));
  }
  if (!whole.ok()) {
    if (whole.status().message() != pieces.status().message()) {
      Fail("errors differ: " + whole.status().message() + " vs " +
           pieces.status().message());
    }
    return 0;
  }
  const std::string difference =
      strag::ingest::kineto::RankTraceDifference(*whole, *pieces);
  if (!difference.empty()) Fail("results differ in " + difference);
  kineto_fuzz_last_parsed = true;
  return 0;
}
