// SPDX-License-Identifier: Apache-2.0
#include "serve/http_util.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "base/json_writer.h"
#include "ingest/common/gzip.h"

namespace strag::serve {

double SteadyNow() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double UnixNow() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool SameToken(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

void JsonError(httplib::Response& res, int status, const std::string& what) {
  JsonWriter w(0);
  w.BeginObject();
  w.FieldString("error", what);
  w.EndObject();
  res.status = status;
  res.set_content(w.str() + "\n", "application/json");
}

bool Inflate(const httplib::Request& req, int64_t cap, std::string* body,
             httplib::Response& res) {
  if (req.get_header_value("X-Strag-Encoding") != "gzip") {
    *body = req.body;
    return true;
  }
  bool too_big = false;
  Result<std::string> text = ingest::MaybeGunzip(
      req.body, "request body", static_cast<size_t>(cap), &too_big);
  if (!text.ok()) {
    JsonError(res, too_big ? 413 : 400, text.status().message());
    return false;
  }
  *body = std::move(text).value();
  return true;
}

std::string ETagOf(std::string_view body) {
  uint64_t h = 14695981039346656037ull;
  for (char c : body) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  char buf[24];
  std::snprintf(buf, sizeof(buf), "\"%016llx\"", static_cast<unsigned long long>(h));
  return buf;
}

int64_t ToInt(const std::string& text, int64_t dflt) {
  if (text.empty()) return dflt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  return (*end != '\0' || errno != 0) ? dflt : static_cast<int64_t>(v);
}

int64_t ParamInt(const httplib::Request& req, const char* key, int64_t dflt) {
  return req.has_param(key) ? ToInt(req.get_param_value(key), dflt) : dflt;
}

}  // namespace strag::serve
