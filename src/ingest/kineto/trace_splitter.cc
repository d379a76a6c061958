// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/trace_splitter.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <utility>

#include "base/str_format.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace strag::ingest::kineto {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

constexpr unsigned char kUtf8Bom[3] = {0xef, 0xbb, 0xbf};

// The first byte of data[i, end) that is not whitespace, or `end`; 16 bytes
// at a time, so that a gigabyte of whitespace between events or around the
// top-level values (a bomb) streams at memory speed.
size_t SkipSpaces(const char* data, size_t i, size_t end) {
#if defined(__SSE2__)
  while (i + 16 <= end) {
    const __m128i v =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    const __m128i space =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                  _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
                     _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
                                  _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
    const auto other =
        static_cast<unsigned>(~_mm_movemask_epi8(space)) & 0xffffu;
    if (other != 0) return i + static_cast<size_t>(__builtin_ctz(other));
    i += 16;
  }
#endif
  while (i < end && IsSpace(data[i])) ++i;
  return i;
}

// A byte for a message: itself when printable, else its hex code.
std::string Printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  return StrFormat("0x%02x", static_cast<unsigned>(u));
}

// true, false, null or something that starts like a JSON number: enough to
// tell a value from garbage in the keys nobody reads (the read ones are
// parsed by simdjson).
bool LooksLikeLiteral(std::string_view text) {
  if (text == "true" || text == "false" || text == "null") return true;
  if (text.empty() || !(text[0] == '-' || (text[0] >= '0' && text[0] <= '9'))) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' ||
           c == 'e' || c == 'E';
  });
}

}  // namespace

TraceSplitter::TraceSplitter(std::string_view source_name, size_t batch_bytes,
                             std::vector<std::string> keys,
                             EventBatchSink on_batch,
                             TopLevelValueSink on_value,
                             const InputLimits& limits)
    : source_name_(source_name),
      batch_bytes_(std::max<size_t>(batch_bytes, 1)),
      keys_(std::move(keys)),
      on_batch_(std::move(on_batch)),
      on_value_(std::move(on_value)),
      max_token_bytes_(
          std::clamp<uint64_t>(limits.max_token_bytes, 1, kMaxInputLimitBytes)),
      max_event_bytes_(std::clamp<uint64_t>(limits.max_event_bytes, 1,
                                            kMaxInputLimitBytes)) {}

Status TraceSplitter::Error(uint64_t offset, const std::string& what) {
  return InvalidInput(source_name_ + ": byte " + std::to_string(offset) + ": " +
                      what);
}

Status TraceSplitter::Refuse(uint64_t offset, const std::string& what) {
  refused_ = true;
  return Error(offset, what);
}

// "byte 17: an event longer than 64 MiB (--max-event-bytes to raise)".
Status TraceSplitter::TooLong(uint64_t offset, const std::string& what,
                              uint64_t limit, const char* flag) {
  return Refuse(offset, what + " longer than " + LimitText(limit) + " (" +
                            flag + " to raise)");
}

// Keeps room for kBatchPadding bytes and one more after the text (see
// EventBatch), growing geometrically, but not much past what the limits let
// the buffer hold (one value or event, the block being scanned and a piece),
// so that an event at the limit costs about the limit.
void TraceSplitter::Append(std::string_view text) {
  const size_t needed = size_ + text.size() + kBatchPadding + 1;
  if (needed > capacity_) {
    const size_t bound =
        static_cast<size_t>(std::max(max_event_bytes_, max_token_bytes_)) +
        text.size() + 2 * kJsonBlockBytes + kBatchPadding + 1;
    // Past half the bound, straight to it: no second copy just above it.
    const size_t capacity =
        std::max(needed, 4 * capacity_ > bound ? bound : 2 * capacity_);
    auto grown = std::make_unique_for_overwrite<char[]>(capacity);
    if (size_ > 0) std::memcpy(grown.get(), buffer_.get(), size_);
    buffer_ = std::move(grown);
    capacity_ = capacity;
  }
  if (!text.empty())
    std::memcpy(buffer_.get() + size_, text.data(), text.size());
  size_ += text.size();
}

// An error at some point of the text: the complete events before it are
// handed over first, and an error among them comes first in the text.
Status TraceSplitter::Fail(Status status) {
  const Status flushed = Flush();
  if (!flushed.ok()) refused_ = false;  // an event before it was bad
  status_ = flushed.ok() ? std::move(status) : flushed;
  return status_;
}

Status TraceSplitter::Feed(std::string_view piece) {
  if (!status_.ok()) return status_;
  Append(piece);
  end_offset_ += piece.size();
  if (Status s = Scan(); !s.ok()) return Fail(std::move(s));
  if (Status s = CheckOpenEvent(); !s.ok()) return Fail(std::move(s));
  if (Status s = Flush(); !s.ok()) return Fail(std::move(s));
  Compact();
  return Status::Ok();
}

Status TraceSplitter::Finish() {
  if (!status_.ok()) return status_;
  // Whitespace after the end lets the block scanner take the last partial
  // block; it changes nothing else (it only ends a trailing literal).
  const std::string spaces(kJsonBlockBytes, ' ');
  Append(spaces);
  if (Status s = Scan(); !s.ok()) return Fail(std::move(s));
  const std::string at = std::to_string(end_offset_);
  if (mode_ == Mode::kStart) {
    return Fail(InvalidInput(source_name_ + ": not JSON: the text is empty"));
  }
  if (mode_ != Mode::kEnd) {
    std::string where;
    if (mode_ == Mode::kEvents) where = " inside traceEvents";
    if (mode_ == Mode::kKeyString || mode_ == Mode::kString ||
        ((mode_ == Mode::kEvents || mode_ == Mode::kContainer) &&
         strings_.in_string)) {
      where += " inside a string";
    }
    return Fail(InvalidInput(source_name_ +
                             ": truncated JSON: the text ends at byte " + at +
                             where));
  }
  if (!saw_events_) {
    return Fail(InvalidInput(source_name_ +
                             ": no traceEvents: not a Chrome / Kineto trace"));
  }
  return Fail(Status::Ok());
}

Status TraceSplitter::Scan() {
  while (pos_ < size_) {
    if (mode_ == Mode::kEvents || mode_ == Mode::kContainer) {
      RETURN_IF_ERROR(ScanBlocks());
      if (mode_ == Mode::kEvents || mode_ == Mode::kContainer) break;
      continue;
    }
    if (mode_ != Mode::kKeyString && mode_ != Mode::kString &&
        mode_ != Mode::kLiteral && IsSpace(buffer_[pos_])) {
      pos_ = SkipSpaces(buffer_.get(), pos_ + 1, size_);
      continue;
    }
    const size_t i = pos_++;
    RETURN_IF_ERROR(StepSlow(buffer_[i], i));
  }
  return Status::Ok();
}

// One byte of the top-level grammar (everything outside the arrays and
// objects that the block scanner takes).
Status TraceSplitter::StepSlow(char c, size_t i) {
  switch (mode_) {
    case Mode::kKeyString:
    case Mode::kString:
    case Mode::kLiteral:
      return StepToken(c, i);
    default:
      return IsSpace(c) ? Status::Ok() : StepGrammar(c, i);
  }
}

// One byte of a top-level key, string or literal.
Status TraceSplitter::StepToken(char c, size_t i) {
  if (mode_ == Mode::kLiteral) {
    if (!IsSpace(c) && c != ',' && c != '}' && c != ']') {
      return CountTokenByte();
    }
    RETURN_IF_ERROR(EndValue(i));
    return StepSlow(c, i);
  }
  RETURN_IF_ERROR(CountTokenByte());
  if (string_escape_) {
    string_escape_ = false;
  } else if (c == '\\') {
    string_escape_ = true;
  } else if (c == '"') {
    if (mode_ == Mode::kString) return EndValue(i + 1);
    mode_ = Mode::kColon;
    return Status::Ok();
  }
  if (mode_ == Mode::kKeyString) key_ += c;
  return Status::Ok();
}

// A byte other than whitespace between the top-level tokens.
Status TraceSplitter::StepGrammar(char c, size_t i) {
  switch (mode_) {
    case Mode::kStart:
      if (Offset(i) == bom_bytes_ && bom_bytes_ < 3 &&
          static_cast<unsigned char>(c) == kUtf8Bom[bom_bytes_]) {
        ++bom_bytes_;  // a UTF-8 byte order mark, as some editors write
        return Status::Ok();
      }
      if (bom_bytes_ == 1 || bom_bytes_ == 2) {
        return Refuse(0, "not JSON: an incomplete UTF-8 byte order mark");
      }
      if (c == '{') {
        mode_ = Mode::kKey;
        return Status::Ok();
      }
      if (c == '[') {
        bare_list_ = true;
        return StartValue(c, i);
      }
      return Refuse(Offset(i),
                    "not JSON: expected '{' or '[' but found " + Printable(c));
    case Mode::kKey:
      if (c == '"') {
        mode_ = Mode::kKeyString;
        key_.clear();
        token_offset_ = Offset(i);
        token_bytes_ = 1;
        return Status::Ok();
      }
      if (c == '}' && !need_key_) {
        mode_ = Mode::kEnd;
        return Status::Ok();
      }
      return Error(Offset(i), "expected a key but found " + Printable(c));
    case Mode::kColon:
      if (c == ':') {
        mode_ = Mode::kValue;
        return Status::Ok();
      }
      return Error(Offset(i),
                   "expected ':' after key \"" + key_.substr(0, 200) + "\"");
    case Mode::kValue:
      return StartValue(c, i);
    case Mode::kAfterValue:
      if (c == ',' || c == '}') {
        need_key_ = c == ',';
        mode_ = c == ',' ? Mode::kKey : Mode::kEnd;
        return Status::Ok();
      }
      return Error(Offset(i), "expected ',' or '}' but found " + Printable(c));
    case Mode::kEnd:
      return Error(Offset(i), "unexpected data after the end of the JSON");
    default:
      return Internal("TraceSplitter: unexpected mode");
  }
}

Status TraceSplitter::StartValue(char c, size_t i) {
  value_begin_ = i;
  value_offset_ = Offset(i);
  token_offset_ = Offset(i);
  token_bytes_ = 1;
  const bool events =
      bare_list_ ? mode_ == Mode::kStart : key_ == "traceEvents";
  capture_ =
      !events && std::find(keys_.begin(), keys_.end(), key_) != keys_.end();
  if (events) {
    if (c != '[') {
      return Error(Offset(i), "traceEvents is not an array");
    }
    saw_events_ = true;
    mode_ = Mode::kEvents;
    strings_ = JsonStringState();
    depth_ = 1;
    gap_begin_ = i + 1;
    expect_value_ = true;
    array_values_ = 0;
    elements_.clear();
    return Status::Ok();
  }
  if (c == '{' || c == '[') {
    mode_ = Mode::kContainer;
    strings_ = JsonStringState();
    depth_ = 1;
    openers_.assign(1, c);
  } else if (c == '"') {
    mode_ = Mode::kString;
    string_escape_ = false;
  } else if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' ||
             c == 'n') {
    mode_ = Mode::kLiteral;
  } else {
    return Error(Offset(i), "expected a value for key \"" + key_ +
                                "\" but found " + Printable(c));
  }
  return Status::Ok();
}

// The top-level value of key_ ends before `end`.
Status TraceSplitter::EndValue(size_t end) {
  if (mode_ == Mode::kContainer &&
      Offset(end) - value_offset_ > max_event_bytes_) {
    return TooLong(value_offset_,
                   "the value of \"" + key_.substr(0, 200) + "\"",
                   max_event_bytes_, "--max-event-bytes");
  }
  const std::string_view text(buffer_.get() + value_begin_, end - value_begin_);
  if (mode_ == Mode::kLiteral && !LooksLikeLiteral(text)) {
    return Error(Offset(value_begin_),
                 "not a JSON value for key \"" + key_ +
                     "\": " + std::string(text.substr(0, 40)));
  }
  mode_ = Mode::kAfterValue;
  if (!capture_) return Status::Ok();
  capture_ = false;
  return on_value_(key_, text, Offset(value_begin_));
}

// Scans whole blocks of 64 bytes from pos_ (the last partial block waits
// for more text) until the scanned array or object closes. The blocks are
// classified kBlocksPerRun at a time by the kernel the CPU runs best; the
// string state then runs ahead of pos_, which matters only while the
// container is open: it is reset for the next one.
Status TraceSplitter::ScanBlocks() {
  constexpr size_t kBlocksPerRun = 16;
  const char* data = buffer_.get();
  const bool events = mode_ == Mode::kEvents;
  std::array<BlockStructure, kBlocksPerRun> run;
  while (pos_ + kJsonBlockBytes <= size_) {
    const size_t blocks =
        std::min((size_ - pos_) / kJsonBlockBytes, kBlocksPerRun);
    run_backslash_ = ClassifyBlocks(block_kernel_, data + pos_, blocks,
                                    &strings_, run.data());
    backslash_pending_ = backslash_pending_ || run_backslash_;
    for (size_t b = 0; b < blocks; ++b) {
      const size_t base = pos_;
      // A top-level value still open at `base` is longer than base - start:
      // refused before anything in this block (events: CheckOpenEvent).
      if (!events && Offset(base) - value_offset_ >= max_event_bytes_) {
        return TooLong(value_offset_,
                       "the value of \"" + key_.substr(0, 200) + "\"",
                       max_event_bytes_, "--max-event-bytes");
      }
      const BlockStructure& block = run[b];
      pos_ = base + kJsonBlockBytes;
      // Inside an event, a block whose closing brackets cannot bring the
      // depth back to 1 holds no event boundary: count, do not walk.
      if (events && depth_ >= 2 && block.close_count < depth_ - 1) {
        depth_ += block.open_count - block.close_count;
        continue;
      }
      uint64_t structural = block.opens | block.closes;
      while (structural != 0) {
        const int bit = __builtin_ctzll(structural);
        structural &= structural - 1;
        const size_t i = base + static_cast<size_t>(bit);
        if ((block.opens >> bit) & 1) {
          if (depth_ == 1 || !events) {
            RETURN_IF_ERROR(OnOpen(i, data[i]));
          } else {
            ++depth_;
          }
          continue;
        }
        if (depth_ > 2 && events) {
          --depth_;
          continue;
        }
        RETURN_IF_ERROR(OnClose(i, data[i]));
        if (depth_ == 0) {
          pos_ = i + 1;  // the rest of the block goes back to StepSlow
          return Status::Ok();
        }
      }
    }
  }
  return Status::Ok();
}

Status TraceSplitter::OnOpen(size_t i, char c) {
  if (mode_ == Mode::kContainer) {
    openers_.push_back(c);
  } else if (depth_ == 1) {
    RETURN_IF_ERROR(ScanGap(i, /*open_end=*/false));
    if (!expect_value_) return Error(Offset(i), "expected ',' between events");
    element_begin_ = i;
  }
  ++depth_;
  return Status::Ok();
}

Status TraceSplitter::OnClose(size_t i, char c) {
  --depth_;
  if (mode_ == Mode::kContainer) {
    if ((openers_.back() == '{') != (c == '}')) {
      return Error(Offset(i), "mismatched " + Printable(c) +
                                  " in the value of \"" + key_ + "\"");
    }
    openers_.pop_back();
    return depth_ == 0 ? EndValue(i + 1) : Status::Ok();
  }
  if (depth_ == 1) return AddElement(element_begin_, i + 1);
  if (depth_ > 1) return Status::Ok();
  // The gap first: an error in it comes earlier in the text.
  RETURN_IF_ERROR(ScanGap(i, /*open_end=*/false));
  if (c != ']') {
    return Error(Offset(i), "expected ']' at the end of traceEvents");
  }
  if (expect_value_ && array_values_ > 0) {
    return Error(Offset(i), "expected an event after ','");
  }
  RETURN_IF_ERROR(Flush());
  mode_ = bare_list_ ? Mode::kEnd : Mode::kAfterValue;
  return Status::Ok();
}

// The text between two array or object elements of traceEvents, from
// gap_begin_ to `end`: commas, whitespace and the odd scalar element (a
// string or a number is not an event, but it is an element, handed over
// like the others). `open_end`: the text goes on after `end` (a piece ended
// in the gap): what is scanned is dropped, so that whitespace between
// events is never held, and a scalar that reaches `end` is left for later
// (gap_begin_ stops at it). A control byte where an element starts is
// binary data, refused at once.
Status TraceSplitter::ScanGap(size_t end, bool open_end) {
  size_t i = gap_begin_;
  while (i < end) {
    const char c = buffer_[i];
    if (IsSpace(c)) {
      i = SkipSpaces(buffer_.get(), i + 1, end);
      continue;
    }
    if (c == ',') {
      if (expect_value_) {
        return Error(Offset(i), array_values_ == 0
                                    ? "expected an event before ','"
                                    : "expected an event after ','");
      }
      expect_value_ = true;
      ++i;
      continue;
    }
    if (!expect_value_) return Error(Offset(i), "expected ',' between events");
    if (static_cast<unsigned char>(c) < 0x20) {
      return Refuse(Offset(i), "a control byte " + Printable(c) +
                                   " between events: binary data, not JSON");
    }
    const size_t scalar = i++;
    bool complete = false;
    if (c == '"') {
      bool escape = false;
      while (i < end) {
        const char d = buffer_[i++];
        if (escape) {
          escape = false;
        } else if (d == '\\') {
          escape = true;
        } else if (d == '"') {
          complete = true;
          break;
        }
      }
    } else {
      while (i < end && !IsSpace(buffer_[i]) && buffer_[i] != ',') ++i;
      complete = i < end;
    }
    if (open_end && !complete) {
      gap_begin_ = scalar;
      if (Offset(end) - Offset(scalar) > max_event_bytes_) {
        return TooLong(Offset(scalar), "an event", max_event_bytes_,
                       "--max-event-bytes");
      }
      return Status::Ok();
    }
    RETURN_IF_ERROR(AddElement(scalar, i));
  }
  gap_begin_ = end;
  return Status::Ok();
}

// After a piece: the gap scanned so far is dropped, and an event still open
// is refused once it is longer than the limit (nothing inside an event is
// an error of the splitter's, so this is the first error whatever the
// cut; a complete one is checked by AddElement).
Status TraceSplitter::CheckOpenEvent() {
  if (mode_ != Mode::kEvents) return Status::Ok();
  if (depth_ == 1) return ScanGap(pos_, /*open_end=*/true);
  if (Offset(pos_) - Offset(element_begin_) > max_event_bytes_) {
    return TooLong(Offset(element_begin_), "an event", max_event_bytes_,
                   "--max-event-bytes");
  }
  return Status::Ok();
}

// One more byte of the current top-level key, string or number.
Status TraceSplitter::CountTokenByte() {
  if (++token_bytes_ <= max_token_bytes_) return Status::Ok();
  const char* what = mode_ == Mode::kKeyString ? "a key"
                     : mode_ == Mode::kString  ? "a string"
                                               : "a number";
  return TooLong(token_offset_, what, max_token_bytes_, "--max-token-bytes");
}

Status TraceSplitter::AddElement(size_t begin, size_t end) {
  if (end - begin > max_event_bytes_) {
    return TooLong(Offset(begin), "an event", max_event_bytes_,
                   "--max-event-bytes");
  }
  if (elements_.empty()) batch_begin_ = begin;
  if (end - batch_begin_ > std::numeric_limits<uint32_t>::max()) {
    return Error(Offset(begin), "event larger than 4 GiB");
  }
  elements_.push_back({static_cast<uint32_t>(begin - batch_begin_),
                       static_cast<uint32_t>(end - batch_begin_)});
  ++events_;
  ++array_values_;
  expect_value_ = false;
  gap_begin_ = end;
  if (end - batch_begin_ >= batch_bytes_) return Flush();
  return Status::Ok();
}

Status TraceSplitter::Flush() {
  if (elements_.empty()) return Status::Ok();
  EventBatch batch;
  batch.data = buffer_.get() + batch_begin_;
  batch.size = elements_.back().end;
  batch.offset = Offset(batch_begin_);
  batch.elements = &elements_;
  batch.may_have_escapes = backslash_pending_;
  // The next batch starts after this point: in the last run classified, or
  // earlier when an event is still open (a piece ended inside it).
  backslash_pending_ = run_backslash_ || (depth_ > 1 && backslash_pending_);
  const Status status = on_batch_(batch);
  elements_.clear();
  return status;
}

// Drops the text nothing refers to any more, but one byte before it: a
// batch may start at what is kept, and EventBatch promises data[-1].
void TraceSplitter::Compact() {
  size_t keep = pos_;
  if (mode_ == Mode::kEvents) {
    keep = elements_.empty() ? gap_begin_ : batch_begin_;
  } else if (mode_ == Mode::kLiteral ||
             (capture_ &&
              (mode_ == Mode::kContainer || mode_ == Mode::kString))) {
    keep = value_begin_;
  }
  keep = std::min(keep, pos_);
  if (keep <= 1) return;
  --keep;
  std::memmove(buffer_.get(), buffer_.get() + keep, size_ - keep);
  size_ -= keep;
  buffer_offset_ += keep;
  pos_ -= keep;
  const auto shift = [keep](size_t* index) {
    *index = *index >= keep ? *index - keep : 0;
  };
  shift(&value_begin_);
  shift(&gap_begin_);
  shift(&element_begin_);
  shift(&batch_begin_);
}

}  // namespace strag::ingest::kineto
