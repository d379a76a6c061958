// SPDX-License-Identifier: Apache-2.0
#include "base/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace strag {

void JsonWriter::Newline() {
  if (indent_ <= 0) return;
  out_ += '\n';
  out_.append(first_.size() * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  if (!first_.back()) out_ += ',';
  first_.back() = false;
  Newline();
}

void JsonWriter::Open(char bracket) {
  BeforeValue();
  out_ += bracket;
  first_.push_back(true);
}

void JsonWriter::Close(char bracket) {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) Newline();
  out_ += bracket;
}

void JsonWriter::BeginObject() { Open('{'); }
void JsonWriter::EndObject() { Close('}'); }
void JsonWriter::BeginArray() { Open('['); }
void JsonWriter::EndArray() { Close(']'); }

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  WriteString(key);
  out_ += indent_ > 0 ? ": " : ":";
  after_key_ = true;
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  WriteString(value);
}

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed UTF-8 sequence (Unicode table 3-7) that
// starts at text[i] (a byte >= 0x80), or 0 when there is none; then
// `*bad` is the length of its maximal subpart (at least 1), the bytes one
// U+FFFD replaces, as the WHATWG decoder and ICU do.
size_t Utf8SequenceLength(std::string_view text, size_t i, size_t* bad) {
  const auto byte = [&text](size_t k) {
    return static_cast<unsigned char>(text[k]);
  };
  const unsigned char lead = byte(i);
  size_t trail = 0;
  unsigned char low = 0x80;   // bounds of the first trailing byte
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    trail = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    trail = 2;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    trail = 3;
    if (lead == 0xF0) low = 0x90;   // no overlong forms
    if (lead == 0xF4) high = 0x8F;  // nothing past U+10FFFF
  } else {
    *bad = 1;
    return 0;
  }
  for (size_t k = 1; k <= trail; ++k) {
    const bool fits = i + k < text.size() &&
                      byte(i + k) >= (k == 1 ? low : 0x80) &&
                      byte(i + k) <= (k == 1 ? high : 0xBF);
    if (!fits) {
      *bad = k;
      return 0;
    }
  }
  return trail + 1;
}

}  // namespace

// Escapes what JSON requires, and keeps the output valid UTF-8 whatever the
// input held (a trace's op names are bytes): each ill-formed sequence
// becomes U+FFFD. U+2028 and U+2029 are escaped too, so the text is also a
// valid JavaScript literal (the HTML report embeds it in a script).
void JsonWriter::WriteString(std::string_view value) {
  out_ += '"';
  for (size_t i = 0; i < value.size();) {
    const char c = value[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      size_t bad = 0;
      const size_t length = Utf8SequenceLength(value, i, &bad);
      if (length == 0) {
        out_ += kReplacement;
        i += bad;
      } else if (length == 3 && value.substr(i, 2) == "\xE2\x80" &&
                 (value[i + 2] == '\xA8' || value[i + 2] == '\xA9')) {
        out_ += value[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
        i += 3;
      } else {
        out_.append(value.substr(i, length));
        i += length;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\t':
        out_ += "\\t";
        break;
      case '\r':
        out_ += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out_ += buf;
        } else {
          out_ += c;
        }
    }
  }
  out_ += '"';
}

void JsonWriter::Number(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    out_ += "null";
    return;
  }
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out_.append(buf, result.ptr);
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

}  // namespace strag
