// SPDX-License-Identifier: Apache-2.0
// A bounded fuzz run of agent_parser_fuzzer.cc without libFuzzer (GCC,
// ASan / UBSan builds; common/fuzz_driver.h): seeded mutations of request
// bodies, for at most --seconds or --iterations. The ctest
// agent_parser_fuzz.

#include <string>
#include <vector>

#include "ingest/common/fuzz_driver.h"

extern bool agent_fuzz_last_parsed;

namespace {

std::vector<std::string> Seeds() {
  const std::string rank =
      R"({"kind":"rank","job":"llm","rank":3,"epoch":17,"seq":1,"world_size":8,)"
      R"("dp":3,"pp":0,"tp":0,"dp_size":8,"host":"n0","device":"cuda:3",)"
      R"("usd_per_gpu_hour":2.5})";
  const std::string step =
      R"({"kind":"step","job":"llm","rank":3,"epoch":17,"seq":2,"step":40,)"
      R"("t_end_ns":1764412345123456789,"step_ns":1742000000,"fwd_ns":41000000,)"
      R"("bwd_ns":82000000,"opt_ns":3100000,"data_ns":400000,"gc_ns":0,"gc_n":0,)"
      R"("gc_gen":-1,"coll":{"dp":[54000000,12],"tp":[120000000,512]},)"
      R"("tokens":65536,"seqs":16,"sum_s2":2.1e9,"flags":["ckpt"],"clock":"gpu"})";
  const std::string drop =
      R"({"kind":"drop","job":"llm","rank":3,"epoch":17,"seq":9,"first_seq":3,"last_seq":9})";
  return {rank + "\n" + step + "\n" + drop + "\n", step + "\r\n" + step,
          std::string(2000, '\n') + step, "{}", "[\"step\"]\n" + rank,
          step.substr(0, step.size() / 2)};
}

}  // namespace

int main(int argc, char** argv) {
  return strag::ingest::fuzz::RunFuzzDriver(
      argc, argv, "agent", Seeds(), "{}[]\",:\\0123456789.-eE \n\r",
      &agent_fuzz_last_parsed);
}
