// SPDX-License-Identifier: Apache-2.0
// Small helpers of the collector's HTTP handlers: clocks, the bearer token
// comparison, JSON error answers, capped gzip bodies, integer parameters.

#ifndef STRAG_SRC_SERVE_HTTP_UTIL_H_
#define STRAG_SRC_SERVE_HTTP_UTIL_H_

#include <httplib.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace strag::serve {

double SteadyNow();  // seconds, monotonic
double UnixNow();    // seconds since the epoch

// Constant-time comparison, so that a wrong token's timing says nothing.
bool SameToken(std::string_view a, std::string_view b);

// Answers `status` with {"error": what}.
void JsonError(httplib::Response& res, int status, const std::string& what);

// The request's body, inflated within `cap` bytes when it came with
// X-Strag-Encoding: gzip. False after answering 413 (past the cap) or 400
// (a damaged stream).
bool Inflate(const httplib::Request& req, int64_t cap, std::string* body,
             httplib::Response& res);

// A strong ETag of `body` ("\"<16 hex digits>\"", FNV-1a 64).
std::string ETagOf(std::string_view body);

// A decimal integer, or `dflt` for anything else (no exception).
int64_t ToInt(const std::string& text, int64_t dflt);
int64_t ParamInt(const httplib::Request& req, const char* key, int64_t dflt);

}  // namespace strag::serve

#endif  // STRAG_SRC_SERVE_HTTP_UTIL_H_
