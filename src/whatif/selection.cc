// SPDX-License-Identifier: Apache-2.0
#include "whatif/selection.h"

#include <algorithm>
#include <charconv>

namespace strag::whatif {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (true) {
    const size_t next = s.find(sep, pos);
    out.push_back(s.substr(pos, next - pos));
    if (next == std::string_view::npos) return out;
    pos = next + 1;
  }
}

Result<int64_t> ParseInt(std::string_view text, std::string_view selector) {
  int64_t value = 0;
  const auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return InvalidInput("selector '" + std::string(selector) + "': \"" +
                        std::string(text) + "\" is not an integer");
  }
  return value;
}

// Each key restricts either nodes or instances: keep the intersection.
struct TermBuilder {
  std::vector<uint8_t> nodes, instances;
  void AndNodes(const std::vector<uint8_t>& mask) {
    for (size_t i = 0; i < nodes.size(); ++i) nodes[i] &= mask[i];
  }
  void AndInstances(const std::vector<uint8_t>& mask) {
    for (size_t i = 0; i < instances.size(); ++i) instances[i] &= mask[i];
  }
};

Status ApplyKey(std::string_view key, std::string_view value,
                std::string_view selector, const PreparedTrace& t,
                TermBuilder* term) {
  const size_t n = t.num_nodes(), inst = t.num_instances();
  const auto dp = static_cast<size_t>(t.dp);
  auto bad = [&](const std::string& why) {
    return InvalidInput("selector '" + std::string(selector) + "': " + why);
  };
  std::vector<uint8_t> nodes(n, 0), insts(inst, 0);
  bool by_nodes = true, by_insts = false;
  for (std::string_view v : Split(value, '+')) {
    if (key == "optype") {
      const auto type = trace::ParseOpType(v);
      const auto group = trace::ParseOpGroup(v);
      if (!type && !group)
        return bad("unknown op type \"" + std::string(v) + "\"");
      bool any = false;
      for (size_t i = 0; i < n; ++i) {
        const trace::OpType ti = t.model.keys[i].type;
        if ((type && ti == *type) || (group && trace::GroupOf(ti) == *group)) {
          nodes[i] = 1;
          any = true;
        }
      }
      if (!any)
        return bad("no op of type \"" + std::string(v) + "\" in the trace");
      continue;
    }
    ASSIGN_OR_RETURN(const int64_t x, ParseInt(v, selector));
    if (key == "stage" || key == "pp") {
      if (x < 0 || x >= t.pp) return bad("no stage " + std::to_string(x));
      for (size_t i = 0; i < n; ++i) nodes[i] |= t.model.keys[i].stage == x;
    } else if (key == "dp") {
      if (x < 0 || x >= t.dp) return bad("no dp rank " + std::to_string(x));
      by_nodes = false, by_insts = true;
      for (size_t i = 0; i < inst; ++i)
        insts[i] |= (i % dp) == static_cast<size_t>(x);
    } else if (key == "step") {
      const auto it = std::lower_bound(t.steps.begin(), t.steps.end(), x);
      if (it == t.steps.end() || *it != x)
        return bad("no step " + std::to_string(x));
      const auto k = static_cast<size_t>(it - t.steps.begin());
      by_nodes = false, by_insts = true;
      for (size_t d = 0; d < dp; ++d) insts[k * dp + d] = 1;
    } else {
      return bad("unknown key \"" + std::string(key) +
                 "\" (expected rank, stage, dp, optype or step)");
    }
  }
  if (by_nodes) term->AndNodes(nodes);
  if (by_insts) term->AndInstances(insts);
  return Status::Ok();
}

}  // namespace

SelectionTerm AllOps(const PreparedTrace& t) {
  return SelectionTerm{std::vector<uint8_t>(t.num_nodes(), 1),
                       std::vector<uint8_t>(t.num_instances(), 1)};
}

Selection SelectWorkers(const PreparedTrace& t,
                        const std::vector<Worker>& workers) {
  Selection s;
  s.label = "rank";
  for (const Worker& w : workers) {
    SelectionTerm term = AllOps(t);
    for (size_t i = 0; i < term.nodes.size(); ++i) {
      term.nodes[i] = t.model.keys[i].stage == w.pp;
    }
    for (size_t i = 0; i < term.instances.size(); ++i) {
      term.instances[i] =
          (i % static_cast<size_t>(t.dp)) == static_cast<size_t>(w.dp);
    }
    s.label += (s.terms.empty() ? "=" : "+") + std::to_string(w.rank);
    s.terms.push_back(std::move(term));
  }
  return s;
}

Selection SliceInstances(const Selection& x, size_t first, size_t count) {
  Selection out{x.label, {}};
  for (const SelectionTerm& term : x.terms) {
    const auto from = term.instances.begin() + static_cast<ptrdiff_t>(first);
    out.terms.push_back(SelectionTerm{
        term.nodes, std::vector<uint8_t>(
                        from, from + static_cast<ptrdiff_t>(count))});
  }
  return out;
}

Selection SelectStage(const PreparedTrace& t, int32_t stage) {
  SelectionTerm term = AllOps(t);
  for (size_t i = 0; i < term.nodes.size(); ++i) {
    term.nodes[i] = t.model.keys[i].stage == stage;
  }
  return Selection{"stage=" + std::to_string(stage), {std::move(term)}};
}

Selection SelectPlaces(const PreparedTrace& t, int32_t pp, int32_t dp) {
  std::vector<Worker> chosen;
  const auto& places = t.topology.places;
  for (size_t k = 0; k < t.workers.size() && k < places.size(); ++k) {
    if ((pp < 0 || places[k].pp == pp) && (dp < 0 || places[k].dp == dp)) {
      chosen.push_back(t.workers[k]);
    }
  }
  Selection s = SelectWorkers(t, chosen);
  s.label = pp >= 0 ? "pp=" + std::to_string(pp) : "dp=" + std::to_string(dp);
  return s;
}

Result<Selection> ParseSelection(std::string_view text,
                                 const PreparedTrace& t) {
  TermBuilder base{std::vector<uint8_t>(t.num_nodes(), 1),
                   std::vector<uint8_t>(t.num_instances(), 1)};
  std::vector<Worker> ranks;  // rank=... expands into one term per worker
  for (std::string_view part : Split(text, ',')) {
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == part.size()) {
      return InvalidInput("selector '" + std::string(text) +
                          "': expected key=value, got \"" + std::string(part) +
                          "\"");
    }
    const std::string_view key = part.substr(0, eq),
                           value = part.substr(eq + 1);
    if (key != "rank") {
      RETURN_IF_ERROR(ApplyKey(key, value, text, t, &base));
      continue;
    }
    for (std::string_view v : Split(value, '+')) {
      ASSIGN_OR_RETURN(const int64_t x, ParseInt(v, text));
      const auto w = std::find_if(t.workers.begin(), t.workers.end(),
                                  [&](const Worker& c) { return c.rank == x; });
      if (w == t.workers.end()) {
        return InvalidInput("selector '" + std::string(text) + "': rank " +
                            std::to_string(x) + " is not a traced worker");
      }
      ranks.push_back(*w);
    }
  }
  Selection s{std::string(text), {}};
  const bool no_nodes = std::none_of(base.nodes.begin(), base.nodes.end(),
                                     [](uint8_t b) { return b; });
  const bool no_instances =
      std::none_of(base.instances.begin(), base.instances.end(),
                   [](uint8_t b) { return b; });
  if (no_nodes || no_instances) {
    return InvalidInput("selector '" + std::string(text) +
                        "' selects no op of the trace");
  }
  if (ranks.empty()) {
    s.terms.push_back(
        SelectionTerm{std::move(base.nodes), std::move(base.instances)});
    return s;
  }
  for (const Worker& w : ranks) {
    SelectionTerm term = SelectWorkers(t, {w}).terms.front();
    for (size_t i = 0; i < term.nodes.size(); ++i)
      term.nodes[i] &= base.nodes[i];
    for (size_t i = 0; i < term.instances.size(); ++i) {
      term.instances[i] &= base.instances[i];
    }
    s.terms.push_back(std::move(term));
  }
  return s;
}

}  // namespace strag::whatif
