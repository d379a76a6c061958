// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/kineto_event.h"

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <utility>

#include "ingest/kineto/kineto_names.h"

namespace strag::ingest::kineto {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

// The value or field of one step of an iteration, in place in its result.
// Copying it out with get() made the compiler reload the just-stored
// struct with wider loads than the stores that wrote it: a
// store-forwarding stall per field, a third of the time spent on events.
template <typename T>
error_code Unwrap(simdjson::simdjson_result<T>& result, T** out) {
  if (const error_code e = result.error(); e != SUCCESS) return e;
  T&& inside = std::move(result).value_unsafe();
  *out = &inside;
  return SUCCESS;
}

bool IsJsonSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && IsJsonSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Whether the `Bytes` bytes at a and b are equal: one load each.
template <typename Word>
bool SameWord(const char* a, const char* b) {
  Word x, y;
  std::memcpy(&x, a, sizeof(Word));
  std::memcpy(&y, b, sizeof(Word));
  return x == y;
}

// Whether `key` is exactly `literal` (escapes not undone, as Kineto writes
// none in keys). Reads the literal's length and one byte more, which the
// padded batch always has. In words of 8 (or 4) bytes, the last one
// overlapping: memcmp would be a call for all but the shortest keys.
template <size_t N>
bool KeyIs(const char* key, const char (&literal)[N]) {
  constexpr size_t n = N - 1;
  if constexpr (n >= 8) {
    for (size_t i = 0; i + 8 <= n; i += 8) {
      if (!SameWord<uint64_t>(key + i, literal + i)) return false;
    }
    if (n % 8 != 0 && !SameWord<uint64_t>(key + n - 8, literal + n - 8)) {
      return false;
    }
  } else if constexpr (n >= 4) {
    if (!SameWord<uint32_t>(key, literal) ||
        !SameWord<uint32_t>(key + n - 4, literal + n - 4)) {
      return false;
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      if (key[i] != literal[i]) return false;
    }
  }
  return key[n] == '"';
}

// The text of a number, also when it is written as a string ("ts": "12").
std::string_view NumberText(od::value& value) {
  std::string_view raw = TrimRight(value.raw_json_token());
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') {
    raw = raw.substr(1, raw.size() - 2);
  }
  return raw;
}

// A JSON integer token of at most 18 digits ("-12", or "4096\n  " with
// the whitespace before the next structural character), read in one pass
// over its bytes; false for anything else (a float, a string, a leading
// zero, more digits), which simdjson's parser then decides. The value is
// left unconsumed: the iteration skips it.
bool PlainInteger(std::string_view raw, int64_t* out) {
  size_t i = !raw.empty() && raw[0] == '-' ? 1 : 0;
  const size_t first = i;
  int64_t value = 0;
  for (; i < raw.size() && i - first < 18; ++i) {
    const auto digit = static_cast<unsigned char>(raw[i]) - unsigned{'0'};
    if (digit > 9) break;
    value = value * 10 + static_cast<int64_t>(digit);
  }
  const size_t digits = i - first;
  if (digits == 0 || (digits > 1 && raw[first] == '0')) {
    return false;
  }
  for (; i < raw.size(); ++i) {
    if (!IsJsonSpace(raw[i])) return false;
  }
  *out = first == 1 ? -value : value;
  return true;
}

// An integer, also from an integral double or a string of digits. False
// when the value is anything else (it is then left alone).
bool GetInteger(od::value& value, int64_t* out) {
  if (PlainInteger(value.raw_json_token(), out)) return true;  // most are
  od::json_type type;
  if (value.type().get(type) != SUCCESS) return false;
  if (type == od::json_type::string) {
    std::string_view text;
    if (value.get_string().get(text) != SUCCESS) return false;
    const auto [ptr, ec] =
        std::from_chars(text.data(), text.data() + text.size(), *out);
    return ec == std::errc() && ptr == text.data() + text.size();
  }
  if (type != od::json_type::number) return false;
  if (value.get_int64().get(*out) == SUCCESS) return true;
  double d = 0;
  if (value.get_double().get(d) != SUCCESS || !(std::fabs(d) < 9.2e18)) {
    return false;
  }
  *out = static_cast<int64_t>(d);
  return static_cast<double>(*out) == d;
}

bool GetString(od::value& value, std::string_view* out) {
  return value.get_string().get(*out) == SUCCESS;
}

// A string as written, when it has no escapes (most names): a view into
// the batch, without the copy that unescaping makes. `may_escape`: the
// batch has a backslash somewhere (EventBatch::may_have_escapes).
bool GetPlainString(od::value& value, bool may_escape, std::string_view* out) {
  const std::string_view raw = TrimRight(value.raw_json_token());
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"' &&
      (!may_escape ||
       std::memchr(raw.data() + 1, '\\', raw.size() - 2) == nullptr)) {
    *out = raw.substr(1, raw.size() - 2);
    return true;
  }
  return GetString(value, out);
}

void GetRanks(od::value& value, CommArgs* comm) {
  od::json_type type;
  if (value.type().get(type) != SUCCESS) return;
  if (type == od::json_type::string) {
    std::string_view text;
    if (!GetString(value, &text)) return;
    if (auto ranks = ParseRankList(text)) {
      comm->group_ranks = std::move(*ranks);
      comm->has_ranks = true;
    }
    return;
  }
  od::array array;
  if (type != od::json_type::array || value.get_array().get(array) != SUCCESS) {
    return;
  }
  std::vector<int32_t> ranks;
  for (auto element : array) {
    int64_t rank = 0;
    od::value* v = nullptr;
    if (Unwrap(element, &v) != SUCCESS || !GetInteger(*v, &rank)) return;
    ranks.push_back(static_cast<int32_t>(rank));
  }
  comm->group_ranks = std::move(ranks);
  comm->has_ranks = true;
}

// The element count of one entry of "Input Dims": the product of its
// dims (saturating at 2^62); -1 when it is not a list of integers or is
// empty (a scalar, None, a list of tensors). Only invalid JSON is an error:
// on-demand iteration must not go on past one.
error_code Numel(od::value& value, int64_t* out) {
  *out = -1;
  od::array dims;
  if (value.get_array().get(dims) != SUCCESS) return SUCCESS;  // not a list
  constexpr int64_t kCap = int64_t{1} << 62;
  int64_t numel = 1;
  bool any = false, integers = true;
  for (auto element : dims) {
    od::value* v = nullptr;
    if (const error_code e = Unwrap(element, &v); e != SUCCESS) return e;
    int64_t d = 0;
    if (!GetInteger(*v, &d) || d < 0) {
      integers = false;  // skipped unread by the next iteration
      continue;
    }
    any = true;
    numel = d != 0 && numel > kCap / d ? kCap : numel * d;
  }
  if (any && integers) *out = numel;
  return SUCCESS;
}

// "Input Dims": [[2, 128], [], [50304, 768], ...].
error_code GetInputDims(od::value& value, KinetoEvent* ev) {
  od::array inputs;
  if (value.get_array().get(inputs) != SUCCESS) return SUCCESS;
  for (auto element : inputs) {
    od::value* v = nullptr;
    int64_t numel = -1;
    if (error_code e = Unwrap(element, &v); e != SUCCESS) return e;
    if (const error_code e = Numel(*v, &numel); e != SUCCESS) return e;
    if (ev->input_numels.size() < kMaxInputs) {
      ev->input_numels.push_back(numel);
    }
  }
  ev->has_input_dims = true;
  return SUCCESS;
}

// The args the reader uses; the others are skipped unread.
error_code ReadArgs(od::value& value, KinetoEvent* ev) {
  od::object args;
  od::json_type type;
  if (value.type().get(type) != SUCCESS || type != od::json_type::object ||
      value.get_object().get(args) != SUCCESS) {
    return SUCCESS;  // not an object: nothing to read
  }
  ev->args_read = true;
  CommArgs& comm = ev->comm;
  for (auto field_result : args) {
    od::field* field = nullptr;
    if (const error_code e = Unwrap(field_result, &field); e != SUCCESS) {
      return e;
    }
    const char* key = field->key().raw();
    od::value& v = field->value();
    switch (key[0]) {
      case 's':
        if (KeyIs(key, "stream")) {
          ev->has_stream = GetInteger(v, &ev->stream);
        } else if (KeyIs(key, "seq")) {
          GetInteger(v, &comm.seq);
        }
        break;
      case 'c':
        if (KeyIs(key, "correlation")) {
          ev->has_correlation = GetInteger(v, &ev->correlation);
        }
        break;
      case 'C':
        if (KeyIs(key, "Collective name")) GetString(v, &comm.collective);
        break;
      case 'I':
        if (KeyIs(key, "In msg nelems")) {
          GetInteger(v, &comm.in_nelems);
        } else if (KeyIs(key, "Input Dims")) {
          if (const error_code e = GetInputDims(v, ev); e != SUCCESS) return e;
        }
        break;
      case 'O':
        if (KeyIs(key, "Out msg nelems")) GetInteger(v, &comm.out_nelems);
        break;
      case 'G':
        if (KeyIs(key, "Group size")) GetInteger(v, &comm.group_size);
        break;
      case 'S':
        if (KeyIs(key, "Seq")) {
          GetInteger(v, &comm.seq);
        } else if (KeyIs(key, "Src Rank")) {
          GetInteger(v, &comm.src_rank);
        }
        break;
      case 'D':
        if (KeyIs(key, "Dst Rank")) GetInteger(v, &comm.dst_rank);
        break;
      case 'P':
        if (KeyIs(key, "Process Group Name")) {
          if (!GetString(v, &comm.group_name)) GetInteger(v, &comm.group_id);
        } else if (KeyIs(key, "Process Group Description")) {
          GetString(v, &comm.group_desc);
        } else if (KeyIs(key, "Process Group Ranks")) {
          GetRanks(v, &comm);
        } else if (KeyIs(key, "Process Group ID")) {
          GetInteger(v, &comm.group_id);
        }
        break;
      default:
        break;
    }
  }
  return SUCCESS;
}

// Reads one element. `args` is read in the same pass when ph, cat and name
// came before it (as Kineto writes them); otherwise the object is rewound.
error_code ReadEvent(od::value& value, const EventConsumer& consumer,
                     bool may_escape, KinetoEvent* ev) {
  od::json_type type;
  if (const error_code e = value.type().get(type); e != SUCCESS) return e;
  if (type != od::json_type::object) return SUCCESS;  // not an event
  od::object object;
  if (const error_code e = value.get_object().get(object); e != SUCCESS) {
    return e;
  }
  ev->is_object = true;
  bool args_later = false;
  for (auto field_result : object) {
    od::field* field = nullptr;
    if (const error_code e = Unwrap(field_result, &field); e != SUCCESS) {
      return e;
    }
    const char* key = field->key().raw();
    od::value& v = field->value();
    switch (key[0]) {
      case 'p':
        if (KeyIs(key, "ph")) {
          ev->has_ph = GetPlainString(v, may_escape, &ev->ph);
        } else if (KeyIs(key, "pid")) {
          ev->pid.raw = TrimRight(v.raw_json_token());
        }
        break;
      case 'c':
        if (KeyIs(key, "cat"))
          ev->has_cat = GetPlainString(v, may_escape, &ev->cat);
        break;
      case 'n':
        if (KeyIs(key, "name"))
          ev->has_name = GetPlainString(v, may_escape, &ev->name);
        break;
      case 't':
        if (KeyIs(key, "ts")) {
          ev->ts = NumberText(v);
        } else if (KeyIs(key, "tid")) {
          ev->tid.raw = TrimRight(v.raw_json_token());
        }
        break;
      case 'd':
        if (KeyIs(key, "dur")) ev->dur = NumberText(v);
        break;
      case 'a':
        if (!KeyIs(key, "args")) break;
        if (!ev->has_ph || !ev->has_cat || !ev->has_name) {
          args_later = true;
        } else if (consumer.NeedsArgs(ev->ph, ev->cat, ev->name)) {
          if (const error_code e = ReadArgs(v, ev); e != SUCCESS) return e;
        }
        break;
      default:
        break;
    }
  }
  if (!args_later || !consumer.NeedsArgs(ev->ph, ev->cat, ev->name)) {
    return SUCCESS;
  }
  bool not_empty = false;
  if (const error_code e = object.reset().get(not_empty); e != SUCCESS) {
    return e;
  }
  for (auto field_result : object) {
    od::field* field = nullptr;
    if (const error_code e = Unwrap(field_result, &field); e != SUCCESS) {
      return e;
    }
    if (KeyIs(field->key().raw(), "args")) return ReadArgs(field->value(), ev);
  }
  return SUCCESS;
}

}  // namespace

// Wraps the elements at [data, data + size) as a JSON array in place, by
// overwriting the byte before them with '[' and the one after with ']'
// (EventBatch allows it), and puts the two bytes back when it goes.
class InPlaceArray {
 public:
  InPlaceArray(char* data, size_t size)
      : begin_(data - 1),
        end_(data + size),
        saved_begin_(*begin_),
        saved_end_(*end_) {
    *begin_ = '[';
    *end_ = ']';
  }
  InPlaceArray(const InPlaceArray&) = delete;
  InPlaceArray& operator=(const InPlaceArray&) = delete;
  ~InPlaceArray() {
    *begin_ = saved_begin_;
    *end_ = saved_end_;
  }
  const char* json() const { return begin_; }
  size_t length() const { return static_cast<size_t>(end_ - begin_) + 1; }

 private:
  char* begin_;
  char* end_;
  char saved_begin_;
  char saved_end_;
};

static_assert(kBatchPadding >= simdjson::SIMDJSON_PADDING);

struct EventParser::Impl {
  // One simdjson parser per thread, kept across files: a fresh one would
  // first-touch its index buffers (megabytes) for every file read.
  static od::parser& Parser() {
    static thread_local od::parser parser;
    return parser;
  }
  KinetoEvent event;       // reused: its vectors keep their capacity
  bool may_escape = true;  // of the batch being parsed

  // Parses the elements `spans` of data[0, size) (spans relative to data),
  // handing those from index `add_from` on to `consumer`. `*done`:
  // elements read.
  error_code ParseInPlace(char* data, size_t size, uint64_t offset,
                          const std::vector<ElementSpan>& spans,
                          size_t add_from, EventConsumer* consumer,
                          Status* add_status, size_t* done) {
    *done = 0;
    const InPlaceArray wrapped(data, size);
    od::document doc;
    error_code e = Parser()
                       .iterate(wrapped.json(), wrapped.length(),
                                wrapped.length() + kBatchPadding)
                       .get(doc);
    if (e != SUCCESS) return e;
    od::array array;
    if ((e = doc.get_array().get(array)) != SUCCESS) return e;
    for (auto element : array) {
      od::value* value = nullptr;
      if ((e = Unwrap(element, &value)) != SUCCESS) return e;
      if (*done >= spans.size()) return simdjson::TAPE_ERROR;
      Reset(&event);
      event.offset = offset + spans[*done].begin;
      if ((e = ReadEvent(*value, *consumer, may_escape, &event)) != SUCCESS)
        return e;
      if (*done >= add_from) {
        *add_status = consumer->Add(event);
        if (!add_status->ok()) return SUCCESS;
      }
      ++*done;
    }
    return *done == spans.size() ? SUCCESS : simdjson::TAPE_ERROR;
  }

  static void Reset(KinetoEvent* ev) {
    std::vector<int32_t> ranks = std::move(ev->comm.group_ranks);
    std::vector<int64_t> numels = std::move(ev->input_numels);
    ranks.clear();
    numels.clear();
    *ev = KinetoEvent();
    ev->comm.group_ranks = std::move(ranks);
    ev->input_numels = std::move(numels);
  }
};

EventParser::EventParser(std::string_view source_name)
    : source_name_(source_name), impl_(std::make_unique<Impl>()) {}

EventParser::~EventParser() = default;

Status EventParser::JsonError(uint64_t offset, const char* reason) const {
  return InvalidInput(source_name_ + ": byte " + std::to_string(offset) +
                      ": invalid JSON in an event: " + reason);
}

Status EventParser::Parse(const EventBatch& batch, EventConsumer* consumer) {
  Status add_status;
  size_t done = 0;
  const std::vector<ElementSpan>& spans = *batch.elements;
  impl_->may_escape = batch.may_have_escapes;
  const error_code e =
      impl_->ParseInPlace(batch.data, batch.size, batch.offset, spans, 0,
                          consumer, &add_status, &done);
  RETURN_IF_ERROR(add_status);
  if (e == SUCCESS) return Status::Ok();
  // Which element is bad does not depend on the batch: find it alone.
  // The one before is checked too (its unread fields were skipped only
  // when the parser moved on), but not handed over again.
  std::vector<ElementSpan> one(1);
  for (size_t k = done > 0 ? done - 1 : 0; k < spans.size(); ++k) {
    one[0] = {0, spans[k].end - spans[k].begin};
    const uint64_t offset = batch.offset + spans[k].begin;
    size_t one_done = 0;
    const error_code ek = impl_->ParseInPlace(
        batch.data + spans[k].begin, one[0].end, offset, one, k < done ? 1 : 0,
        consumer, &add_status, &one_done);
    RETURN_IF_ERROR(add_status);
    if (ek != SUCCESS) return JsonError(offset, simdjson::error_message(ek));
  }
  return JsonError(batch.offset, simdjson::error_message(e));
}

}  // namespace strag::ingest::kineto
