// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/kineto_parser.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "ingest/kineto/kineto_event.h"
#include "ingest/kineto/kineto_metadata.h"
#include "ingest/kineto/rank_trace_builder.h"
#include "ingest/kineto/trace_splitter.h"

namespace strag::ingest {

// The pipeline: TraceSplitter cuts the text into batches of events and
// small top-level values; EventParser reads the batches into
// RankTraceBuilder; the values go to KinetoMetadata. Held on the heap: the
// splitter's sinks point back at it.
struct KinetoParser::State {
  State(std::string_view source_name, const KinetoOptions& opts)
      : options(opts),
        events(source_name),
        builder(source_name),
        splitter(
            source_name, opts.batch_bytes, kineto::KinetoMetadataKeys(),
            [this](const kineto::EventBatch& batch) {
              return events.Parse(batch, &builder);
            },
            [this, source = std::string(source_name)](
                std::string_view key, std::string_view value, uint64_t offset) {
              return kineto::ParseTopLevelValue(source, key, value, offset,
                                                &meta, &meta_warnings);
            },
            opts.limits) {
    builder.Reserve(opts.expected_bytes);
  }

  KinetoOptions options;
  kineto::EventParser events;
  kineto::RankTraceBuilder builder;
  kineto::KinetoMetadata meta;
  std::vector<std::string> meta_warnings;
  kineto::TraceSplitter splitter;
  bool finished = false;
};

KinetoParser::KinetoParser(std::string_view source_name,
                           const KinetoOptions& options)
    : state_(std::make_unique<State>(source_name, options)) {}

KinetoParser::~KinetoParser() = default;

Status KinetoParser::Feed(std::string_view piece) {
  if (state_->finished) return Internal("KinetoParser: Feed after Finish");
  return state_->splitter.Feed(piece);
}

bool KinetoParser::refused() const { return state_->splitter.refused(); }
uint64_t KinetoParser::bytes_fed() const {
  return state_->splitter.bytes_fed();
}
uint64_t KinetoParser::events() const { return state_->splitter.events(); }

Result<trace::RankTrace> KinetoParser::Finish() {
  if (state_->finished) return Internal("KinetoParser: Finish called twice");
  state_->finished = true;
  RETURN_IF_ERROR(state_->splitter.Finish());
  ASSIGN_OR_RETURN(
      trace::RankTrace trace,
      state_->builder.Finish(state_->meta, state_->options.default_rank));
  trace.warnings.insert(trace.warnings.begin(), state_->meta_warnings.begin(),
                        state_->meta_warnings.end());
  return trace;
}

Result<trace::RankTrace> ParseKinetoTrace(std::string_view json,
                                          std::string_view source_name,
                                          const KinetoOptions& options) {
  // Fed in slices so that the parser never copies the whole text.
  constexpr size_t kSlice = size_t{1} << 20;
  KinetoOptions sized = options;
  if (sized.expected_bytes == 0) sized.expected_bytes = json.size();
  KinetoParser parser(source_name, sized);
  for (size_t at = 0; at < json.size(); at += kSlice) {
    RETURN_IF_ERROR(parser.Feed(json.substr(at, kSlice)));
  }
  return parser.Finish();
}

}  // namespace strag::ingest
