// SPDX-License-Identifier: Apache-2.0
// The vocabulary of the Kineto writer (kineto_writer.h): what each op type of
// the ops table becomes (kernel names, collective, message sizes, program
// order), and the event text writer. Internal to the writer.

#ifndef STRAG_SRC_INGEST_KINETO_KINETO_VOCABULARY_H_
#define STRAG_SRC_INGEST_KINETO_KINETO_VOCABULARY_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/kineto/kineto_writer.h"
#include "trace/op_type.h"

namespace strag::ingest::kineto_export {

using trace::OpType;

enum class Kind : uint8_t {
  kCompute,
  kGc,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kSend,
  kRecv
};

// Elements per member; plausible sizes, not derived from the model.
struct Message {
  std::string_view collective;
  int64_t in_nelems, out_nelems;
};

Kind KindOf(OpType type);

// Megatron's program order of the op types, for ops that start and end at
// the same instant (zero durations are common in specs without comm times).
int TypeOrder(OpType type);

bool IsComm(Kind kind);

// The grad-norm all-reduce sums one float; every other collective is bf16.
bool IsFloat(OpType type);

std::string_view NcclKernelName(Kind kind, bool f32, NcclKernelNames names);

// Plausible kernels of a transformer layer; a compute op split into several
// kernels cycles through them.
std::string_view ComputeKernelName(OpType type, int32_t piece);

// The CPU op (cpu_op) that launches ComputeKernelName(type, piece), as
// torch names the innermost op around the launch: "aten::linear" /
// "aten::mm" for the forward / backward GEMM, "aten::_flash_attention_*",
// "aten::gelu*", "aten::_fused_adam_" for the optimizer.
std::string_view ComputeOpName(OpType type, int32_t piece);

Message MessageOf(OpType type, Kind kind, int64_t group_size);

void AppendInt(std::string* out, int64_t value);

// Nanoseconds as microseconds with exactly three decimals: exact.
void AppendUs(std::string* out, int64_t ns);

// "[0, 4, 8]"; with `limit`, at most that many ranks then ", ...".
std::string RanksText(const std::vector<int32_t>& ranks,
                      size_t limit = std::numeric_limits<size_t>::max());

// The trace events, one per line. Strings are generated here and need no
// escaping (no quotes, backslashes or control characters).
class EventText {
 public:
  explicit EventText(std::string* out) : out_(out) {}

  void Begin(std::string_view ph, std::string_view cat, std::string_view name,
             int64_t pid, int64_t tid, int64_t ts_ns) {
    out_->append(first_event_ ? "\n  {" : ",\n  {");
    first_event_ = false;
    out_->append("\"ph\": \"").append(ph).append("\", ");
    if (!cat.empty()) out_->append("\"cat\": \"").append(cat).append("\", ");
    out_->append("\"name\": \"").append(name).append("\", \"pid\": ");
    AppendInt(out_, pid);
    out_->append(", \"tid\": ");
    AppendInt(out_, tid);
    out_->append(", \"ts\": ");
    AppendUs(out_, ts_ns);
  }
  void Dur(int64_t dur_ns) {
    out_->append(", \"dur\": ");
    AppendUs(out_, dur_ns);
  }
  void BeginArgs() {
    out_->append(", \"args\": {");
    first_arg_ = true;
  }
  void Arg(std::string_view key, int64_t value) {
    Key(key);
    AppendInt(out_, value);
  }
  void ArgString(std::string_view key, std::string_view value) {
    Key(key);
    out_->append("\"").append(value).append("\"");
  }
  // Pre-rendered `"key": value, ...` pairs.
  void ArgsText(std::string_view text) {
    if (text.empty()) return;
    if (!first_arg_) out_->append(", ");
    first_arg_ = false;
    out_->append(text);
  }
  void End() { out_->append("}}"); }

 private:
  void Key(std::string_view key) {
    if (!first_arg_) out_->append(", ");
    first_arg_ = false;
    out_->append("\"").append(key).append("\": ");
  }

  std::string* out_;
  bool first_event_ = true;
  bool first_arg_ = true;
};


}  // namespace strag::ingest::kineto_export

#endif  // STRAG_SRC_INGEST_KINETO_KINETO_VOCABULARY_H_
