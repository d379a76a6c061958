// SPDX-License-Identifier: Apache-2.0
// A bounded fuzz run of ops_csv_reader_fuzzer.cc without libFuzzer (GCC,
// ASan / UBSan builds; common/fuzz_driver.h): seeded mutations of seed
// traces, for at most --seconds or --iterations, under --rss_limit_mb. The
// ctest ops_csv_reader_fuzz.
//
// The seeds include one input of each resource case of issue 11, made
// here (none is committed): a gzip bomb of NULs, a line without end, a
// quoted field without end, a header of thousands of fields, values far
// past any job (rank, step, seq_id), a UTF-8 byte order mark.

#include <string>
#include <vector>

#include "ingest/common/fuzz_driver.h"
#include "ingest/common/gzip.h"

extern bool ops_csv_fuzz_last_parsed;

namespace {

constexpr char kHeader[] =
    "rank,dp_rank,stage,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc\n";

std::string Gzip(const std::string& text) {
  const auto gz = strag::ingest::GzipCompress(text);
  return gz.ok() ? *gz : text;
}

// Two DP ranks by two stages, two steps of forward / backward compute.
std::string SmallJob() {
  std::string csv = kHeader;
  double t = 0.5;
  for (int step = 1; step <= 2; ++step) {
    for (int dp = 0; dp < 2; ++dp) {
      for (int stage = 0; stage < 2; ++stage) {
        for (const char* type : {"forward-compute", "backward-compute"}) {
          const int rank = dp * 2 + stage;
          csv += std::to_string(rank) + "," + std::to_string(dp) + "," +
                 std::to_string(stage) + "," + std::to_string(step) + "," +
                 type + "," + std::to_string(t) + ",0.25,0,0,0," +
                 std::to_string(stage) + "\n";
          t += 0.25;
        }
      }
    }
  }
  return csv;
}

std::vector<std::string> Seeds() {
  std::vector<std::string> seeds = {
      SmallJob(),
      "\xEF\xBB\xBF"
      "rank,dp_rank,stage,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc,"
      "name\r\n"
      "0,0,0,16,forward-compute,0.5,0.25,0,0,1,0,\"fwd, mb 1\"\r\n"
      "\r\n"
      "1,0,1,16,backward-compute,1.25,0.125,1,0,1,1,\"two\r\nlines "
      "\"\"q\"\"\"\n"
      "2,1,0,17,gc,2.6883304119110107,1e-05,2,,,,plain\n"
      "4,1,1,17,\"gc\",\"4.5\",0,\"7\",-1,-1,-1,last"};
  seeds.push_back(Gzip(std::string(size_t{8} << 20, '\0')));  // a NUL bomb
  std::string line = kHeader;  // a line without end
  line.append(200000, 'x');
  seeds.push_back(line);
  seeds.push_back(std::string(kHeader) + "0,0,0,1,gc,\"" +
                  std::string(200000, 'y'));  // a quoted field without end
  std::string wide;
  for (int i = 0; i < 3000; ++i) {
    wide += 'c';
    wide += std::to_string(i);
    wide += ',';
  }
  seeds.push_back(wide + "\n1\n");
  seeds.push_back(std::string(kHeader) +
                  "2147483647,0,0,9223372036854775807,gc,0,1,2147483647,0,0,"
                  "0\n99999999999,0,0,1,gc,0,1,0,0,0,0\n");
  return seeds;
}

}  // namespace

int main(int argc, char** argv) {
  return strag::ingest::fuzz::RunFuzzDriver(
      argc, argv, "ops_csv", Seeds(), ",\"\r\n0123456789.-eE \x1f\x8b\xef",
      &ops_csv_fuzz_last_parsed);
}
