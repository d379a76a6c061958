// SPDX-License-Identifier: Apache-2.0
#include "load/distributed_ops_csv.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string_view>
#include <utility>

#include "base/byte_pack.h"
#include "base/parallel_for.h"
#include "base/str_format.h"
#include "ingest/common/file.h"
#include "ingest/common/gzip.h"
#include "ingest/common/text_blocks.h"
#include "ingest/common/text_reader.h"
#include "ingest/ops_csv/ops_csv_parser.h"
#include "trace/ops_table_pack.h"

namespace strag::load {
namespace {

// Receives chunk k of the text.
using ChunkFn = std::function<Status(size_t k, std::string_view chunk)>;

// Bad input is not shared but left to the one-process reader, which
// refuses it with its line: a line longer than the limit gives up here
// (InvalidInput) before more than chunk_bytes + max_line_bytes of a chunk
// is held or searched.
Status LineTooLongToShare() { return InvalidInput("a line too long to share"); }

// The rows go to their owners in rounds of this many chunks per process
// (of kDistributedChunkBytes of text each: ~32 MB sent and as much
// received a process per round).
constexpr uint64_t kChunksPerRound = 8;

// Cuts the text, block by block, into chunks of whole lines of at least
// `chunk_bytes` (the last one: what is left, with or without its line end)
// and calls fn(chunk index, chunk) on each, in order. Every process cuts
// the same text the same way.
class LineChunker {
 public:
  LineChunker(size_t chunk_bytes, uint64_t max_line_bytes, ChunkFn fn)
      : chunk_bytes_(chunk_bytes),
        max_pending_(chunk_bytes + max_line_bytes),
        fn_(std::move(fn)) {}

  Status Feed(std::string_view text) {
    while (!text.empty()) {
      const size_t want =
          pending_.size() < chunk_bytes_ ? chunk_bytes_ - pending_.size() : 0;
      const size_t newline =
          text.size() <= want ? std::string_view::npos : text.find('\n', want);
      if (newline == std::string_view::npos) {
        pending_.append(text);
        if (pending_.size() > max_pending_) return LineTooLongToShare();
        return Status::Ok();
      }
      pending_.append(text.substr(0, newline + 1));
      text.remove_prefix(newline + 1);
      RETURN_IF_ERROR(Emit());
    }
    return Status::Ok();
  }

  Status Finish() { return pending_.empty() ? Status::Ok() : Emit(); }

 private:
  Status Emit() {
    const Status status = fn_(next_++, pending_);
    pending_.clear();
    return status;
  }

  const size_t chunk_bytes_;
  const uint64_t max_pending_;
  const ChunkFn fn_;
  std::string pending_;
  size_t next_ = 0;
};

// Whether every line of `text` holds an even number of quotes: then no
// quoted field holds a line break (its first line would hold an odd
// number), and a cut at any line end is a cut between records.
bool NoQuotedLineBreak(std::string_view text) {
  if (std::memchr(text.data(), '"', text.size()) == nullptr) return true;
  bool open = false;
  for (const char c : text) {
    if (c == '"') {
      open = !open;
    } else if (c == '\n' && open) {
      return false;
    }
  }
  return !open;
}

struct Chunk {
  uint64_t index = 0;
  trace::OpsTable rows;
};

// Where a gzip member lies in its file.
struct MemberSpan {
  uint64_t offset = 0, bytes = 0;
};

// The members of a gzip file when every one says its size
// (ingest::AddMemberSize, as `strag simulate` writes them) and together
// they are the file; else none.
Result<std::vector<MemberSpan>> SizedMembers(ingest::InputFile& file) {
  std::vector<MemberSpan> members;
  const uint64_t file_size = file.size_bytes();
  char header[ingest::kSizedMemberHeaderBytes];
  for (uint64_t at = 0; at < file_size;) {
    ASSIGN_OR_RETURN(const size_t got, file.ReadAt(at, header, sizeof header));
    const uint64_t bytes =
        ingest::SizedMemberBytes(std::string_view(header, got));
    if (bytes < sizeof header || bytes > file_size - at) {
      return std::vector<MemberSpan>();
    }
    members.push_back({at, bytes});
    at += bytes;
  }
  return members;
}

// The text of one member, at most `max_text_bytes` of it.
Result<std::string> InflateMember(ingest::InputFile& file, MemberSpan member,
                                  ingest::GzipEngine engine,
                                  uint64_t max_text_bytes) {
  std::string gz(member.bytes, '\0');
  ASSIGN_OR_RETURN(const size_t got,
                   file.ReadAt(member.offset, gz.data(), gz.size()));
  if (got != gz.size()) {
    return NotFound(file.path() + ": shorter than its size");
  }
  return ingest::MaybeGunzip(gz, file.path(), max_text_bytes, nullptr, engine);
}

// ForEachChunk over a gzip file whose members say their size: chunk k is
// member k, inflated only by its process (and member 0 by every one, for
// the header). A member must end at a line end (the last one may not), or
// the chunks would cut lines: then InvalidInput, and everyone gives up.
// A member's text may be up to 64 MiB (strag writes 8 MiB) and a line.
Status ForEachMember(ingest::InputFile& file,
                     const std::vector<MemberSpan>& members,
                     const StreamOptions& options, size_t rank, size_t size,
                     const ChunkFn& fn) {
  const uint64_t max_text_bytes =
      (uint64_t{64} << 20) + options.limits.max_line_bytes;
  for (size_t k = 0; k < members.size(); ++k) {
    const bool mine = k % size == rank;
    if (!mine && k != 0) continue;
    ASSIGN_OR_RETURN(
        std::string text,
        InflateMember(file, members[k], options.gzip_engine, max_text_bytes));
    if (k + 1 < members.size() && !text.empty() && text.back() != '\n') {
      return InvalidInput("a gzip member ends inside a line");
    }
    if (!mine) {  // member 0 of another process: its header line
      const size_t newline = text.find('\n');
      if (newline == std::string::npos) return InvalidInput("no header line");
      text.resize(newline + 1);
    }
    RETURN_IF_ERROR(fn(k, text));
  }
  return Status::Ok();
}

// Calls fn(k, chunk) for this process's chunks (k % size == rank), in
// order, and for chunk 0 always (the header is its first line). A plain
// file is read by byte ranges, only those chunks: chunk k runs from the
// first line start at or after k * chunk_bytes to the next chunk's start.
// A gzip file whose members say their size is read by members (chunk k =
// member k, ForEachMember); any other gzip stream (or a pipe) is gone
// through whole, every chunk passed to fn, cut by LineChunker. Every
// process cuts the same file the same way.

Status ForEachChunk(const std::string& path, const StreamOptions& options,
                    size_t rank, size_t size, size_t chunk_bytes,
                    const ChunkFn& fn, std::string* read_by) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<ingest::TextReader> reader,
      ingest::TextReader::Open(path, size_t{1} << 20, options.gzip_engine));
  const uint64_t file_size = reader->file_bytes();
  if (reader->is_gzip() && file_size > 0) {
    ASSIGN_OR_RETURN(ingest::InputFile file, ingest::InputFile::Open(path));
    ASSIGN_OR_RETURN(const std::vector<MemberSpan> members, SizedMembers(file));
    if (!members.empty()) {
      *read_by = "gzip members";
      return ForEachMember(file, members, options, rank, size, fn);
    }
  }
  if (reader->is_gzip() || file_size == 0) {
    *read_by = "the whole gzip stream";
    LineChunker chunker(chunk_bytes, options.limits.max_line_bytes, fn);
    RETURN_IF_ERROR(ingest::ForEachTextBlock(
        reader.get(),
        {.block_bytes = size_t{1} << 20,
         .inflate_on_thread = true,
         .sink_refused = {}},
        [&](std::string_view block) { return chunker.Feed(block); }));
    return chunker.Finish();
  }
  reader.reset();
  *read_by = "byte ranges";
  ASSIGN_OR_RETURN(ingest::InputFile file, ingest::InputFile::Open(path));
  const auto read_at = [&](uint64_t at, uint64_t bytes,
                           std::string* out) -> Status {
    out->resize(bytes);
    ASSIGN_OR_RETURN(const size_t n, file.ReadAt(at, out->data(), bytes));
    if (n != bytes) return NotFound(path + ": shorter than its size");
    return Status::Ok();
  };
  // The first line start at or after `at` (the file's end if none),
  // searched no further than a line's limit.
  std::string probe;
  const auto line_start = [&](uint64_t at) -> Result<uint64_t> {
    if (at == 0) return uint64_t{0};
    for (uint64_t pos = at - 1; pos < file_size;) {
      if (pos - (at - 1) > options.limits.max_line_bytes) {
        return LineTooLongToShare();
      }
      const uint64_t n = std::min<uint64_t>(uint64_t{1} << 16, file_size - pos);
      RETURN_IF_ERROR(read_at(pos, n, &probe));
      const size_t newline = probe.find('\n');
      if (newline != std::string::npos) return pos + newline + 1;
      pos += n;
    }
    return file_size;
  };
  const uint64_t chunks = (file_size + chunk_bytes - 1) / chunk_bytes;
  std::string text;
  for (uint64_t k = 0; k < chunks; ++k) {
    if (k % size != rank && k != 0) continue;
    ASSIGN_OR_RETURN(const uint64_t begin, line_start(k * chunk_bytes));
    ASSIGN_OR_RETURN(const uint64_t end,
                     k + 1 == chunks ? Result<uint64_t>(file_size)
                                     : line_start((k + 1) * chunk_bytes));
    // Chunk 0 of another process: its header line is enough.
    const uint64_t want = k % size == rank
                              ? end - begin
                              : std::min(end - begin, uint64_t{1} << 16);
    RETURN_IF_ERROR(read_at(begin, want, &text));
    if (k % size != rank) {
      const size_t newline = text.find('\n');
      if (newline == std::string::npos) {
        return InvalidInput(path + ": header line too long to share");
      }
      text.resize(newline + 1);
    }
    RETURN_IF_ERROR(fn(k, text));
  }
  return Status::Ok();
}

// This process's chunks, parsed (extra columns dropped, as the streamed
// reader drops them); nullopt when it cannot vouch for them.
std::optional<std::vector<Chunk>> ParseMyChunks(const std::string& path,
                                                const StreamOptions& options,
                                                size_t rank, size_t size,
                                                size_t chunk_bytes,
                                                std::string* read_by) {
  const size_t threads =
      options.threads == 0 ? HardwareThreads() : options.threads;
  ingest::OpsCsvParser parser(path, 0, options.limits.max_line_bytes, threads);
  parser.DropExtraColumns();
  // The windows read durations as binary32 seconds only (OpsTable::DurS32):
  // 8 bytes per op less in every copy of the rows (parsed, sent, received).
  parser.DropNsDurations();
  std::vector<Chunk> mine;
  bool header_fed = false;
  const Status read = ForEachChunk(
      path, options, rank, size, chunk_bytes,
      [&](size_t k, std::string_view text) {
        const bool my_chunk = k % size == rank;
        if (!header_fed) {  // chunk 0 starts with the header line
          header_fed = true;
          if (!my_chunk) {
            const size_t end = text.find('\n');
            if (end == std::string_view::npos) return InvalidInput("no rows");
            return parser.Feed(text.substr(0, end + 1));
          }
        }
        if (!my_chunk) return Status::Ok();
        // Every chunk is checked by its owner (chunk 0, header included,
        // by process 0's).
        if (!NoQuotedLineBreak(text)) return InvalidInput("quoted line break");
        RETURN_IF_ERROR(parser.Feed(text));
        Chunk& chunk = mine.emplace_back();
        chunk.index = k;
        parser.TakeRows(&chunk.rows);
        return Status::Ok();
      },
      read_by);
  if (!read.ok() || !header_fed) return std::nullopt;
  // The last line of the file, without its line end, is parsed here.
  Result<trace::OpsTable> last = parser.Finish();
  if (!last.ok()) return std::nullopt;
  if (last->size() > 0) {
    if (mine.empty()) return std::nullopt;
    mine.back().rows.AppendRows(*last, 0, last->size());
  }
  return mine;
}

// Rows reordered: row i of the result is row order[i].
void PermuteRows(const std::vector<size_t>& order, trace::OpsTable* t) {
  trace::OpsTable::ForEachColumn(*t, *t, [&](auto& column, const auto&) {
    if (column.empty()) return;
    std::decay_t<decltype(column)> out;
    out.reserve(order.size());
    for (size_t i : order) out.push_back(column[i]);
    column.swap(out);
  });
}

// Everyone's status: the first process's error (in process order, so in
// step order where it is about steps), or Ok.
Status AgreeOnStatus(const Status& mine, Collective* c) {
  BytePacker out;
  out.Put<uint8_t>(mine.ok() ? 0 : 1);
  out.Put<int32_t>(static_cast<int32_t>(mine.code()));
  out.PutArray<char>(mine.message());
  ASSIGN_OR_RETURN(const std::vector<std::string> all,
                   c->AllGather(out.Take()));
  for (const std::string& bytes : all) {
    ByteUnpacker in(bytes);
    const bool failed = in.Get<uint8_t>() == 1;
    const auto code = static_cast<StatusCode>(in.Get<int32_t>());
    const std::vector<char> message = in.GetArray<char>();
    if (!in.ok()) return Internal("AgreeOnStatus: damaged bytes");
    if (failed)
      return Status(code, std::string(message.begin(), message.end()));
  }
  return Status::Ok();
}

}  // namespace

Result<std::optional<DistributedJob>> DistributeOpsCsv(
    const std::string& path, const trace::JobMeta& meta,
    const StreamOptions& options, Collective* c, size_t chunk_bytes) {
  const size_t size = c->size(), rank = c->rank();
  std::string read_by;
  std::optional<std::vector<Chunk>> chunks = ParseMyChunks(
      path, options, rank, size,
      chunk_bytes ? chunk_bytes : kDistributedChunkBytes, &read_by);

  // 2. The job's steps and their op counts, from everyone's chunks.
  std::map<int64_t, uint64_t> my_counts;
  if (chunks) {
    for (const Chunk& chunk : *chunks) {
      for (const int64_t s : chunk.rows.step) ++my_counts[s];
    }
  }
  BytePacker counts_out;
  counts_out.Put<uint8_t>(chunks ? 1 : 0);
  counts_out.Put<uint64_t>(chunks && !chunks->empty() ? chunks->back().index + 1
                                                      : 0);
  std::vector<int64_t> steps_out;
  std::vector<uint64_t> ops_out;
  for (const auto& [step, ops] : my_counts) {
    steps_out.push_back(step);
    ops_out.push_back(ops);
  }
  counts_out.PutArray<int64_t>(steps_out);
  counts_out.PutArray<uint64_t>(ops_out);
  ASSIGN_OR_RETURN(const std::vector<std::string> all_counts,
                   c->AllGather(counts_out.Take()));
  std::map<int64_t, uint64_t> counts;
  uint64_t num_chunks = 0;
  for (const std::string& bytes : all_counts) {
    ByteUnpacker in(bytes);
    const bool vouched = in.Get<uint8_t>() == 1;
    num_chunks = std::max(num_chunks, in.Get<uint64_t>());
    const std::vector<int64_t> steps = in.GetArray<int64_t>();
    const std::vector<uint64_t> ops = in.GetArray<uint64_t>();
    if (!in.done() || steps.size() != ops.size()) {
      return Internal("DistributeOpsCsv: damaged step counts");
    }
    if (!vouched) return std::optional<DistributedJob>();  // all give up
    for (size_t k = 0; k < steps.size(); ++k) counts[steps[k]] += ops[k];
  }
  DistributedJob job;
  job.read_by = std::move(read_by);
  std::vector<int64_t> steps;
  for (const auto& [step, ops] : counts) {
    steps.push_back(step);
    job.ops += ops;
  }
  if (job.ops == 0) return InvalidInput(path + ": the trace has no ops");
  // More processes than steps (a capture of a step or two): each reads
  // and analyses the whole job alone, as in memory (every process has the
  // same counts, so all agree).
  if (size > steps.size()) return std::optional<DistributedJob>();
  // Each step's owner: the process whose share of the steps holds it.
  std::vector<size_t> owner(steps.size());
  for (size_t p = 0; p < size; ++p) {
    const Share share = ShareOf(steps.size(), p, size);
    std::fill(owner.begin() + static_cast<ptrdiff_t>(share.first),
              owner.begin() + static_cast<ptrdiff_t>(share.end), p);
  }
  const Share share = ShareOf(steps.size(), rank, size);  // this process's
  const auto owner_of = [&](int64_t step) {
    return owner[static_cast<size_t>(
        std::lower_bound(steps.begin(), steps.end(), step) - steps.begin())];
  };

  // 3. Rows to their step's owner, a segment per chunk and owner:
  //    [1, chunk index, rows]..., 0; in rounds of kChunksPerRound chunks
  //    per process, so that what is in flight (sent and received) is a
  //    round's rows, not the whole share twice over (with the nanosecond
  //    durations dropped: an 8.6M-op job on 2 processes, peak 747 / 742 ->
  //    663 / 578 MB a process, mpirun 2.96 -> 2.61-2.70 s).
  // The rows in input order, chunk by chunk: chunk k came from process
  // k % K, whose segments arrive in its chunk order, so each round's
  // messages are merged segment by segment (no second copy of them); then
  // grouped by step, a step's rows in input order: what the one-process
  // reader's sort gives.
  trace::OpsTable rows;
  // Every op of this process's steps comes here: the columns are sized
  // once (a CSV always has the binary32 times).
  size_t total = 0;
  for (size_t s = share.first; s < share.end; ++s) total += counts[steps[s]];
  rows.Reserve(total);
  rows.start_s32.reserve(total);
  rows.dur_s32.reserve(total);
  rows.start_rem_as.reserve(total);
  const uint64_t round_chunks = kChunksPerRound * size;
  size_t next_chunk = 0;  // of *chunks, the first not yet sent
  for (uint64_t round_end = round_chunks; round_end < num_chunks + round_chunks;
       round_end += round_chunks) {
    std::vector<BytePacker> to(size);
    std::vector<trace::OpsTable> part(size);
    for (;
         next_chunk < chunks->size() && (*chunks)[next_chunk].index < round_end;
         ++next_chunk) {
      Chunk& chunk = (*chunks)[next_chunk];
      const trace::OpsTable& chunk_rows = chunk.rows;
      for (size_t r = 0; r < chunk_rows.size();) {
        const size_t p = owner_of(chunk_rows.step[r]);
        size_t e = r + 1;
        while (e < chunk_rows.size() &&
               (chunk_rows.step[e] == chunk_rows.step[e - 1] ||
                owner_of(chunk_rows.step[e]) == p)) {
          ++e;
        }
        part[p].AppendRows(chunk_rows, r, e);
        r = e;
      }
      chunk.rows = trace::OpsTable();
      for (size_t p = 0; p < size; ++p) {
        if (part[p].size() == 0) continue;
        to[p].Put<uint8_t>(1);
        to[p].Put<uint64_t>(chunk.index);
        trace::PackOpsTable(part[p], &to[p]);
        part[p] = trace::OpsTable();
      }
    }
    std::vector<std::string> messages(size);
    for (size_t p = 0; p < size; ++p) {
      to[p].Put<uint8_t>(0);
      messages[p] = to[p].Take();
      if (p != rank) job.exchanged_bytes += messages[p].size();
    }
    to = {};
    ASSIGN_OR_RETURN(const std::vector<std::string> received,
                     c->AllToAll(std::move(messages)));
    std::vector<ByteUnpacker> in;
    std::vector<uint64_t> next_index(size);
    for (size_t p = 0; p < size; ++p) {
      in.emplace_back(received[p]);
      next_index[p] =
          in[p].Get<uint8_t>() == 1 ? in[p].Get<uint64_t>() : UINT64_MAX;
    }
    while (true) {
      const size_t p = static_cast<size_t>(
          std::min_element(next_index.begin(), next_index.end()) -
          next_index.begin());
      if (next_index[p] == UINT64_MAX) break;
      ASSIGN_OR_RETURN(const trace::OpsTable segment,
                       trace::UnpackOpsTable(&in[p]));
      rows.AppendRows(segment, 0, segment.size());
      next_index[p] =
          in[p].Get<uint8_t>() == 1 ? in[p].Get<uint64_t>() : UINT64_MAX;
    }
    for (const ByteUnpacker& u : in) {
      if (!u.done()) return Internal("DistributeOpsCsv: damaged rows");
    }
  }
  chunks.reset();
  if (!std::is_sorted(rows.step.begin(), rows.step.end())) {
    std::vector<size_t> order(rows.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return rows.step[a] < rows.step[b];
    });
    PermuteRows(order, &rows);
  }
  job.my_ops = rows.size();

  // 4. The shape, from the first step's rows (process 0 owns that step).
  BytePacker first_out;
  if (rank == 0) {
    const size_t n = static_cast<size_t>(
        std::upper_bound(rows.step.begin(), rows.step.end(), steps.front()) -
        rows.step.begin());
    trace::OpsTable first;
    first.AppendRows(rows, 0, n);
    trace::PackOpsTable(first, &first_out);
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> all_first,
                   c->AllGather(first_out.Take()));
  ByteUnpacker first_in(all_first[0]);
  ASSIGN_OR_RETURN(const trace::OpsTable first_rows,
                   trace::UnpackOpsTable(&first_in));
  Result<whatif::PreparedTrace> shape = whatif::PrepareShape(first_rows, meta);
  if (!shape.ok()) return shape.status().WithContext(path);
  job.shape = std::move(shape).value();
  job.shape.steps = steps;

  // This process's steps in windows of at least window_ops ops.
  std::vector<whatif::PreparedTrace> windows;
  Status prepared = Status::Ok();
  trace::OpsTable window_rows;
  for (size_t s = share.first, from = 0; s < share.end && prepared.ok();) {
    size_t to_row = from, last = s;
    while (last < share.end &&
           (last == s || to_row - from < options.window_ops)) {
      to_row += counts[steps[last]];
      ++last;
    }
    window_rows.ClearRows();
    window_rows.AppendRows(rows, from, to_row);
    Result<whatif::PreparedTrace> w =
        whatif::PrepareWindow(job.shape, window_rows, s, last - s);
    if (w.ok()) {
      windows.push_back(std::move(w).value());
    } else {
      prepared = w.status().WithContext(path);
    }
    s = last;
    from = to_row;
  }
  rows = trace::OpsTable();
  window_rows = trace::OpsTable();
  RETURN_IF_ERROR(AgreeOnStatus(prepared, c));
  job.windows = std::make_unique<HeldWindows>(std::move(windows));
  return std::optional<DistributedJob>(std::move(job));
}

}  // namespace strag::load
