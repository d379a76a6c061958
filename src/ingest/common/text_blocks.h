// SPDX-License-Identifier: Apache-2.0
// ForEachTextBlock: hands the text of a file to a sink (a parser) block by
// block; gzip is inflated on a second thread, so that inflating and parsing
// overlap on two cores.

#ifndef STRAG_SRC_INGEST_COMMON_TEXT_BLOCKS_H_
#define STRAG_SRC_INGEST_COMMON_TEXT_BLOCKS_H_

#include <cstddef>
#include <functional>
#include <string_view>

#include "base/status.h"
#include "ingest/common/text_reader.h"

namespace strag::ingest {

struct TextBlockOptions {
  // Text bytes per block (only the last block may be shorter). Tests make it
  // tiny to cut the text everywhere.
  size_t block_bytes = size_t{256} << 10;
  // Inflate gzip on a second thread. The blocks, and so the result, are the
  // same either way.
  bool inflate_on_thread = true;
  // Asked after the sink's error: true when that error refuses the text
  // outright (a limit broken, binary data), so that the rest of a gzip
  // stream is not inflated to check it: that would take as long as the
  // bomb the limit refused. Unset: never.
  std::function<bool()> sink_refused;
};

// Receives one block of text; an error stops the loop.
using TextSink = std::function<Status(std::string_view block)>;

// Calls `sink` on the calling thread with the text of `*reader` in blocks of
// `options.block_bytes` (threaded, the first ones smaller: 128 KiB,
// doubling), in order, and stops calling it at its first error.
// A gzip stream is still inflated to its end, and its damage, if any, is
// returned rather than the sink's error: garbage inflated from a damaged
// stream can fail the sink before zlib notices (a CRC mismatch shows only
// at the end of a member). So the outcome is that of inflating everything
// first and then parsing, threaded or not; except that a sink error that
// `options.sink_refused` says refuses the text is returned at once, the
// rest unread (also the same threaded or not). Holds kTextRingBlocks blocks
// when threaded (one otherwise); the inflating thread is always joined before
// returning. `*reader` must not be used by anything else meanwhile.
Status ForEachTextBlock(TextReader* reader, const TextBlockOptions& options,
                        const TextSink& sink);

// Blocks in flight when threaded: one being inflated, one being parsed, and
// two in between to absorb uneven block times.
inline constexpr size_t kTextRingBlocks = 4;

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_COMMON_TEXT_BLOCKS_H_
