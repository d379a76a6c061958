// SPDX-License-Identifier: Apache-2.0
// A bounded fuzz run of a libFuzzer target without libFuzzer (GCC, ASan /
// UBSan builds): seeded mutations (bit flips, structural bytes, deletions,
// duplications, splices between inputs, truncations, gzip) of seed inputs,
// for at most --seconds or --iterations, deterministic for a --seed.
// --rss_limit_mb=N fails the run when the process's peak RSS passes N MiB
// (as libFuzzer's -rss_limit_mb does), so that an input whose memory
// follows its bytes (a gzip bomb, a line without end) is caught even
// without a sanitizer. For the drivers of the ingest fuzz targets; test
// code only.

#ifndef STRAG_SRC_INGEST_COMMON_FUZZ_DRIVER_H_
#define STRAG_SRC_INGEST_COMMON_FUZZ_DRIVER_H_

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ingest/common/gzip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace strag::ingest::fuzz {

// One mutation of `s`, drawing from `other` for splices; `bytes` are the
// format's structural bytes.
inline void Mutate(std::string* s, const std::string& other,
                   const std::string& bytes, std::mt19937_64* random) {
  auto pick = [&](size_t n) { return n == 0 ? 0 : (*random)() % n; };
  const size_t at = pick(s->size() + 1);
  switch ((*random)() % 7) {
    case 0:
      if (!s->empty()) (*s)[pick(s->size())] ^= static_cast<char>(1 << pick(8));
      break;
    case 1:
      if (!s->empty()) (*s)[pick(s->size())] = bytes[pick(bytes.size())];
      break;
    case 2:
      s->erase(at, 1 + pick(40));
      break;
    case 3:
      s->insert(at, s->substr(pick(s->size() + 1), 1 + pick(80)));
      break;
    case 4:
      s->insert(at, other.substr(pick(other.size() + 1), 1 + pick(200)));
      break;
    case 5:
      s->resize(at);
      break;
    default:
      s->insert(at, 1, bytes[pick(bytes.size())]);
      break;
  }
}

inline long Flag(int argc, char** argv, const char* name, long fallback) {
  const size_t n = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') {
      return std::strtol(argv[i] + n + 1, nullptr, 10);
    }
  }
  return fallback;
}

inline long PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;  // KiB on Linux
}

// Runs the seeds, then mutations of the corpus. `*last_parsed`, set by the
// target, says whether the last input parsed (those go on being mutated).
// Returns the exit code.
inline int RunFuzzDriver(int argc, char** argv, const char* name,
                         std::vector<std::string> corpus,
                         const std::string& bytes, const bool* last_parsed) {
  const long seconds = Flag(argc, argv, "--seconds", 15);
  const long iterations = Flag(argc, argv, "--iterations", 100000);
  const long rss_limit_mb = Flag(argc, argv, "--rss_limit_mb", 0);
  std::mt19937_64 random(static_cast<uint64_t>(Flag(argc, argv, "--seed", 1)));
  const size_t seeds = corpus.size();
  const auto run = [&](const std::string& input) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()),
                           input.size());
    if (rss_limit_mb > 0 && PeakRssMb() > rss_limit_mb) {
      std::fprintf(stderr,
                   "%s fuzz: peak RSS %ld MB passed the limit of %ld MB on "
                   "an input of %zu bytes\n",
                   name, PeakRssMb(), rss_limit_mb, input.size());
      std::abort();
    }
  };
  for (const std::string& seed : corpus) run(seed);
  const auto start = std::chrono::steady_clock::now();
  long done = 0;
  long parsed = 0;
  while (done < iterations && std::chrono::steady_clock::now() - start <
                                  std::chrono::seconds(seconds)) {
    std::string input = corpus[random() % corpus.size()];
    const std::string& other = corpus[random() % corpus.size()];
    for (int m = 0, n = 1 + static_cast<int>(random() % 4); m < n; ++m) {
      Mutate(&input, other, bytes, &random);
    }
    if (random() % 16 == 0) {
      const auto gz = GzipCompress(input);
      if (gz.ok()) {
        input = random() % 2 ? *gz : gz->substr(0, random() % (gz->size() + 1));
      }
    }
    run(input);
    parsed += *last_parsed ? 1 : 0;
    // Inputs that still parse go on being mutated; the others seldom.
    if ((*last_parsed || random() % 64 == 0) && input.size() < 20000) {
      if (corpus.size() < 256) {
        corpus.push_back(input);
      } else {
        corpus[seeds + random() % (corpus.size() - seeds)] = input;
      }
    }
    ++done;
  }
  std::printf("%s fuzz: %ld inputs (%ld parsed), peak RSS %ld MB, no failure\n",
              name, done, parsed, PeakRssMb());
  return 0;
}

}  // namespace strag::ingest::fuzz

#endif  // STRAG_SRC_INGEST_COMMON_FUZZ_DRIVER_H_
