// SPDX-License-Identifier: Apache-2.0
// The extension module `strag._strag` (python/README.md): `analyze` takes
// the CLI's options as keyword arguments, runs python/analyze.h without
// the GIL, and returns the analysis JSON text (parsed by strag/__init__.py
// with the json module, so the dicts equal `strag analyze --json`) and the
// tables as NumPy arrays, each copied once from the C++ columns (no Python
// object per op). Errors are exceptions: ValueError for bad options and bad
// input (the CLI's message), OSError for a failed read, MemoryError.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "python/analyze.h"
#include "trace/op_type.h"

namespace py = pybind11;

namespace strag::python {
namespace {

// A NumPy copy of a column.
template <typename T, typename Column>
py::array_t<T> Array(const Column& column) {
  static_assert(sizeof(typename Column::value_type) == sizeof(T));
  py::array_t<T> out(static_cast<py::ssize_t>(column.size()));
  if (!column.empty()) {
    std::memcpy(out.mutable_data(), column.data(), column.size() * sizeof(T));
  }
  return out;
}

// Text from the input (file names, op names) as a Python str: bytes that
// are not UTF-8 become U+FFFD instead of a UnicodeDecodeError that would
// lose the whole result.
py::str Text(const std::string& s) {
  PyObject* text = PyUnicode_DecodeUTF8(
      s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

py::list TextList(const std::vector<std::string>& items) {
  py::list out;
  for (const std::string& s : items) out.append(Text(s));
  return out;
}

// A [keys x steps] matrix of per-step values.
py::array_t<double> Matrix(const std::vector<std::vector<double>>& rows,
                           size_t columns) {
  py::array_t<double> out({static_cast<py::ssize_t>(rows.size()),
                           static_cast<py::ssize_t>(columns)});
  double* data = out.mutable_data();
  for (const std::vector<double>& row : rows) {
    if (row.size() != columns) throw std::runtime_error("ragged per-step row");
    std::copy(row.begin(), row.end(), data);
    data += columns;
  }
  return out;
}

py::dict Decomposition(const whatif::Decomposition& d, size_t steps) {
  py::dict out;
  out["key"] = TextList(d.keys);
  out["slowdown"] = Array<double>(d.slowdown);
  out["per_step"] = Matrix(d.per_step, steps);
  return out;
}

py::dict StepTable(const whatif::WhatIfResult& r) {
  py::dict out;
  out["step"] = Array<int64_t>(r.steps);
  out["t_observed_s"] = Array<double>(r.step_t_observed);
  out["t_replayed_s"] = Array<double>(r.step_t_replayed);
  out["t_ideal_s"] = Array<double>(r.step_t_ideal);
  out["slowdown"] = Array<double>(r.slowdown_per_step);
  out["launch_slowdown"] = Array<double>(r.launch_slowdown_per_step);
  return out;
}

// Worst first, as the report ranks them.
py::dict WorkerTable(const whatif::WhatIfResult& r) {
  const size_t n = r.workers.size();
  py::array_t<int32_t> rank(static_cast<py::ssize_t>(n));
  py::array_t<int32_t> dp(static_cast<py::ssize_t>(n));
  py::array_t<int32_t> pp(static_cast<py::ssize_t>(n));
  py::array_t<double> score(static_cast<py::ssize_t>(n));
  for (size_t i = 0; i < n; ++i) {
    const auto k = static_cast<py::ssize_t>(i);
    rank.mutable_at(k) = r.workers[i].rank;
    dp.mutable_at(k) = r.workers[i].dp;
    pp.mutable_at(k) = r.workers[i].pp;
    score.mutable_at(k) = r.workers[i].score;
  }
  py::dict out;
  out["rank"] = rank;
  out["dp"] = dp;
  out["pp"] = pp;
  out["score"] = score;
  return out;
}

py::object OpsTable(const trace::OpsTable& t) {
  if (t.size() == 0) return py::none();
  static_assert(sizeof(trace::OpType) == sizeof(uint8_t));
  py::dict out;
  out["rank"] = Array<int32_t>(t.rank);
  out["dp"] = Array<int32_t>(t.dp);
  out["pp"] = Array<int32_t>(t.pp);
  if (!t.tp.empty()) out["tp"] = Array<int32_t>(t.tp);
  if (!t.cp.empty()) out["cp"] = Array<int32_t>(t.cp);
  out["step"] = Array<int64_t>(t.step);
  out["op_type"] = Array<uint8_t>(t.op_type);
  out["seq_id"] = Array<int32_t>(t.seq_id);
  out["chunk"] = Array<int32_t>(t.chunk);
  out["microbatch"] = Array<int32_t>(t.microbatch);
  out["start_ns"] = Array<int64_t>(t.start_ns);
  out["dur_ns"] = Array<int64_t>(t.dur_ns);
  if (!t.tokens.empty()) out["tokens"] = Array<int64_t>(t.tokens);
  return out;
}

[[noreturn]] void Raise(const Status& status) {
  PyObject* type = status.code() == StatusCode::kIoError    ? PyExc_OSError
                   : status.code() == StatusCode::kInternal ? PyExc_RuntimeError
                                                            : PyExc_ValueError;
  PyErr_SetObject(type, Text(status.message()).ptr());
  throw py::error_already_set();
}

py::dict RunAnalyze(const AnalyzeArgs& args) {
  std::optional<Result<Analysis>> result;
  {
    py::gil_scoped_release release;
    result.emplace(Analyze(args));
  }
  if (!result->ok()) Raise(result->status());
  const Analysis& a = **result;
  const whatif::WhatIfResult& r = a.report.result;
  py::dict out;
  out["json"] = a.json;
  out["plan_json"] =
      a.plan_json.empty() ? py::object(py::none()) : py::str(a.plan_json);
  out["warnings"] = TextList(a.warnings);
  out["steps"] = StepTable(r);
  out["workers"] = WorkerTable(r);
  py::dict decompositions;
  decompositions["optype"] = Decomposition(r.by_optype, r.steps.size());
  decompositions["dp_rank"] = Decomposition(r.by_dp_rank, r.steps.size());
  decompositions["stage"] = Decomposition(r.by_stage, r.steps.size());
  decompositions["pipeline_stage"] =
      Decomposition(r.by_pipeline_stage, r.steps.size());
  out["decompositions"] = decompositions;
  out["ops"] = OpsTable(a.ops);
  return out;
}

std::vector<std::string> OpTypeNames() {
  std::vector<std::string> names;
  for (int i = 0; i < trace::kNumOpTypes; ++i) {
    names.emplace_back(trace::OpTypeName(static_cast<trace::OpType>(i)));
  }
  return names;
}

}  // namespace
}  // namespace strag::python

PYBIND11_MODULE(_strag, m) {
  using strag::python::AnalyzeArgs;
  m.doc() = "strag's C++ core (use the strag package, not this module)";
  m.attr("__version__") = STRAG_VERSION;
  m.attr("op_type_names") = strag::python::OpTypeNames();
  m.def(
      "analyze",
      [](std::vector<std::string> inputs, std::optional<std::string> meta,
         std::optional<int64_t> dp, std::optional<int64_t> pp,
         std::optional<int64_t> tp, std::optional<int64_t> cp,
         std::optional<int64_t> vpp, std::map<std::string, int64_t> rank_map,
         std::optional<std::string> hosts,
         std::vector<std::string> fix, std::vector<std::string> unfix,
         std::optional<std::string> pool, std::optional<int64_t> threads,
         std::optional<int64_t> gpus, std::optional<double> days,
         std::optional<double> hours, std::optional<double> usd_per_gpu_hour,
         bool plan, std::optional<std::string> layers,
         std::optional<double> checkpoint_interval_min,
         std::optional<double> restart_min, std::optional<int64_t> token_cap,
         std::optional<int64_t> max_line_bytes,
         std::optional<int64_t> max_token_bytes,
         std::optional<int64_t> max_event_bytes) {
        AnalyzeArgs a{.inputs = std::move(inputs),
                      .meta = std::move(meta),
                      .dp = dp,
                      .pp = pp,
                      .tp = tp,
                      .cp = cp,
                      .vpp = vpp,
                      .rank_map = std::move(rank_map),
                      .hosts = std::move(hosts),
                      .fix = std::move(fix),
                      .unfix = std::move(unfix),
                      .pool = std::move(pool),
                      .threads = threads,
                      .gpus = gpus,
                      .days = days,
                      .hours = hours,
                      .usd_per_gpu_hour = usd_per_gpu_hour,
                      .plan = plan,
                      .layers = std::move(layers),
                      .checkpoint_interval_min = checkpoint_interval_min,
                      .restart_min = restart_min,
                      .token_cap = token_cap,
                      .max_line_bytes = max_line_bytes,
                      .max_token_bytes = max_token_bytes,
                      .max_event_bytes = max_event_bytes};
        return strag::python::RunAnalyze(a);
      },
      py::arg("inputs"), py::kw_only(), py::arg("meta") = py::none(),
      py::arg("dp") = py::none(), py::arg("pp") = py::none(),
      py::arg("tp") = py::none(), py::arg("cp") = py::none(),
      py::arg("vpp") = py::none(),
      py::arg("rank_map") = std::map<std::string, int64_t>(),
      py::arg("hosts") = py::none(),
      py::arg("fix") = std::vector<std::string>(),
      py::arg("unfix") = std::vector<std::string>(),
      py::arg("pool") = py::none(), py::arg("threads") = py::none(),
      py::arg("gpus") = py::none(), py::arg("days") = py::none(),
      py::arg("hours") = py::none(), py::arg("usd_per_gpu_hour") = py::none(),
      py::arg("plan") = false, py::arg("layers") = py::none(),
      py::arg("checkpoint_interval_min") = py::none(),
      py::arg("restart_min") = py::none(), py::arg("token_cap") = py::none(),
      py::arg("max_line_bytes") = py::none(),
      py::arg("max_token_bytes") = py::none(),
      py::arg("max_event_bytes") = py::none(),
      "Reads and analyses a job (strag analyze); see strag.analyze.");
}
