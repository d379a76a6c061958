// SPDX-License-Identifier: Apache-2.0
#include "report/hosts.h"

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

namespace strag::report {
namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

std::string_view Trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const size_t last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

}  // namespace

// A byte a terminal would act on, or that no host name holds.
bool HasControlByte(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

std::optional<std::string> HostFromTraceFileName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  std::string_view name =
      slash == std::string_view::npos ? path : path.substr(slash + 1);
  // <host>_<pid>.<time>.pt.trace.json[.gz]; the host may hold dots.
  for (std::string_view suffix : {".pt.trace.json.gz", ".pt.trace.json"}) {
    if (name.ends_with(suffix)) {
      name.remove_suffix(suffix.size());
      break;
    }
    if (suffix == ".pt.trace.json") return std::nullopt;
  }
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || !AllDigits(name.substr(dot + 1))) {
    return std::nullopt;
  }
  name = name.substr(0, dot);
  const size_t underscore = name.rfind('_');
  if (underscore == std::string_view::npos || underscore == 0 ||
      !AllDigits(name.substr(underscore + 1)) ||
      HasControlByte(name.substr(0, underscore))) {
    return std::nullopt;
  }
  return std::string(name.substr(0, underscore));
}

Result<HostMap> ParseHostsFile(std::string_view text, std::string_view source) {
  HostMap hosts;
  size_t line_no = 0;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 BOM
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = Trim(line);
    if (line.empty()) continue;
    const auto where = [&] {
      return std::string(source) + ": line " + std::to_string(line_no) + ": ";
    };
    const size_t gap = line.find_first_of(" \t,");
    const std::string_view rank_text = line.substr(0, gap);
    const std::string_view host = Trim(
        gap == std::string_view::npos ? std::string_view() : line.substr(gap + 1));
    int32_t rank = -1;
    const auto [ptr, ec] = std::from_chars(
        rank_text.data(), rank_text.data() + rank_text.size(), rank);
    if (ec != std::errc() || ptr != rank_text.data() + rank_text.size() ||
        rank < 0) {
      return InvalidInput(where() + "expected `RANK HOST`, found \"" +
                          std::string(line.substr(0, 80)) + "\"");
    }
    if (host.empty() || host.find_first_of(" \t,") != std::string_view::npos) {
      return InvalidInput(where() + "expected one host name after rank " +
                          std::to_string(rank));
    }
    if (HasControlByte(host)) {
      return InvalidInput(where() + "a control character in the host name of "
                          "rank " + std::to_string(rank) +
                          " (lines end with LF or CRLF)");
    }
    if (!hosts.emplace(rank, std::string(host)).second) {
      return InvalidInput(where() + "rank " + std::to_string(rank) +
                          " is given twice");
    }
  }
  return hosts;
}

Status ApplyHosts(const HostMap& hosts, std::string_view source,
                  trace::Topology* topology) {
  std::vector<std::pair<int32_t, const std::string*>> by_rank;
  for (const trace::RankPlace& p : topology->places) {
    const auto it = hosts.find(p.rank);
    if (it == hosts.end()) {
      return InvalidInput(std::string(source) + ": no host for rank " +
                          std::to_string(p.rank) + " (traced)");
    }
    by_rank.emplace_back(p.rank, &it->second);
  }
  std::sort(by_rank.begin(), by_rank.end());
  std::map<std::string_view, int32_t> node_of;
  std::vector<std::string> names;
  for (const auto& [rank, host] : by_rank) {
    if (node_of.emplace(*host, static_cast<int32_t>(names.size())).second) {
      names.push_back(*host);
    }
  }
  for (trace::RankPlace& p : topology->places) {
    p.node = node_of.at(hosts.at(p.rank));
  }
  topology->hosts = std::move(names);
  topology->hosts_source = std::string(source);
  return Status::Ok();
}

}  // namespace strag::report
