// SPDX-License-Identifier: Apache-2.0
#include "serve/store/history.h"

#include <map>

#include "base/json_writer.h"
#include "base/str_format.h"

namespace strag::serve {
namespace {

namespace online = diagnose::online;

std::string RankList(const std::vector<int32_t>& ranks) {
  std::string out;
  for (int32_t r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return out;
}

// A firing alert is a new row, open (end_step -1) until the detector
// resolves it; a regime change is an event and closes at once.
Status StoreAlert(Db& db, int64_t job, const online::AlertEvent& e) {
  if (!e.firing) {
    ASSIGN_OR_RETURN(Stmt end, db.Prepare(
        "UPDATE alerts SET end_step=?1, end_ns=?2 "
        "WHERE job=?3 AND live_id=?4 AND end_step=-1"));
    end.Bind(1, e.step).Bind(2, e.t_ns).Bind(3, job);
    return end.Bind(4, e.id).Run();
  }
  const bool event = e.name == online::AlertName::kRegimeChange;
  ASSIGN_OR_RETURN(Stmt ins, db.Prepare(
      "INSERT INTO alerts(job, live_id, name, cause, ranks, scope, "
      "start_step, start_ns, end_step, end_ns, excess_ratio, summary) "
      "VALUES(?,?,?,?,?,?,?,?,?,?,?,?)"));
  ins.Bind(1, job).Bind(2, e.id).Bind(3, std::string_view(online::AlertNameText(e.name)));
  ins.Bind(4, diagnose::CauseName(e.cause)).Bind(5, RankList(e.ranks));
  ins.Bind(6, e.scope).Bind(7, e.step).Bind(8, e.t_ns);
  ins.Bind(9, event ? e.step : int64_t{-1}).Bind(10, event ? e.t_ns : int64_t{0});
  return ins.Bind(11, e.excess_ratio).Bind(12, e.summary).Run();
}

}  // namespace

Status StoreClosedSteps(Db& db, int64_t job, const std::vector<ClosedStep>& c) {
  ASSIGN_OR_RETURN(Stmt ins, db.Prepare(
      "INSERT OR REPLACE INTO step_agg VALUES(?,?,?,?,?,?,?,?,?,?,?)"));
  for (const ClosedStep& step : c) {
    const online::StepSummary& s = step.summary;
    ins.Bind(1, job).Bind(2, s.step).Bind(3, s.t_end_ns).Bind(4, s.step_ns);
    ins.Bind(5, s.ideal_ns).Bind(6, s.worker_excess_ns);
    ins.Bind(7, s.stage_excess_ns).Bind(8, int64_t{s.last_rank});
    ins.Bind(9, s.lateness_ns).Bind(10, int64_t{s.reporting});
    RETURN_IF_ERROR(ins.Bind(11, int64_t{s.judged ? 1 : 0}).Run());
    for (const online::AlertEvent& e : step.events) {
      RETURN_IF_ERROR(StoreAlert(db, job, e));
    }
  }
  return Status::Ok();
}

Status StoreCaptureResult(Db& db, int64_t job, const std::string& id,
                          const std::string& state,
                          const std::string& summary) {
  ASSIGN_OR_RETURN(Stmt ins, db.Prepare(
      "INSERT INTO captures(id, job, state, summary) VALUES(?1, ?2, ?3, ?4) "
      "ON CONFLICT(id) DO UPDATE SET state=?3, summary=?4"));
  return ins.Bind(1, std::to_string(job) + "/" + id).Bind(2, job)
      .Bind(3, state).Bind(4, summary).Run();
}

Status ApplyRetention(Db& db, double keep_s) {
  // steps is WITHOUT ROWID: delete by key, per job, the oldest steps whose
  // end is older than the newest record minus keep_s.
  ASSIGN_OR_RETURN(Stmt q, db.Prepare(
      "DELETE FROM steps WHERE (job, step) IN (SELECT job, step FROM steps "
      "WHERE t_end_ns < (SELECT MAX(t_end_ns) FROM steps) - ?1 LIMIT 100000)"));
  return q.Bind(1, static_cast<int64_t>(keep_s * 1e9)).Run();
}

namespace {

Status LoadRanks(Db& db, RecentJob* job) {
  ASSIGN_OR_RETURN(Stmt q, db.Prepare(
      "SELECT rank, epoch, dp, pp, tp, cp, dp_size, pp_size, tp_size, cp_size, "
      "world_size, local_rank, microbatches, pid, host, device, torch, agent, "
      "usd_per_gpu_hour FROM ranks WHERE job=? ORDER BY rank"));
  q.Bind(1, job->id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) return Status::Ok();
    RecentJob::Rank r;
    r.rank = static_cast<int32_t>(q.Int(0));
    r.epoch = q.Int(1);
    ingest::agent::RankInfo& i = r.info;
    i.dp = static_cast<int32_t>(q.Int(2));
    i.pp = static_cast<int32_t>(q.Int(3));
    i.tp = static_cast<int32_t>(q.Int(4));
    i.cp = static_cast<int32_t>(q.Int(5));
    i.dp_size = static_cast<int32_t>(q.Int(6));
    i.pp_size = static_cast<int32_t>(q.Int(7));
    i.tp_size = static_cast<int32_t>(q.Int(8));
    i.cp_size = static_cast<int32_t>(q.Int(9));
    i.world_size = static_cast<int32_t>(q.Int(10));
    i.local_rank = static_cast<int32_t>(q.Int(11));
    i.microbatches = static_cast<int32_t>(q.Int(12));
    i.pid = q.Int(13);
    i.host = q.Text(14);
    i.device = q.Text(15);
    i.torch_version = q.Text(16);
    i.agent_version = q.Text(17);
    i.usd_per_gpu_hour = q.Real(18);
    job->ranks.push_back(std::move(r));
  }
}

Status LoadSteps(Db& db, int64_t steps, int64_t max_records, RecentJob* job) {
  ASSIGN_OR_RETURN(Stmt n, db.Prepare(
      "SELECT MAX(step), COUNT(DISTINCT rank) FROM steps WHERE job=?"));
  n.Bind(1, job->id);
  ASSIGN_OR_RETURN(bool any, n.Step());
  if (!any || n.IsNull(0)) return Status::Ok();
  const int64_t ranks = std::max<int64_t>(n.Int(1), 1);
  const int64_t keep = std::max<int64_t>(1, std::min(steps, max_records / ranks));
  ASSIGN_OR_RETURN(Stmt q, db.Prepare(
      "SELECT rank, epoch, step, t_end_ns, step_ns, data_ns, fwd_ns, bwd_ns, "
      "opt_ns, gc_ns, gc_n, gc_gen, dp_ns, pp_ns, tp_ns, cp_ns, ep_ns, "
      "other_ns, tokens, seqs, sum_s2, flags, gpu_clock FROM steps "
      "WHERE job=?1 AND step > ?2 ORDER BY step, rank"));
  q.Bind(1, job->id).Bind(2, n.Int(0) - keep);
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) return Status::Ok();
    RecentJob::Step s;
    s.rank = static_cast<int32_t>(q.Int(0));
    s.epoch = q.Int(1);
    ingest::agent::StepRecord& r = s.record;
    r.step = q.Int(2);
    r.t_end_ns = q.Int(3);
    r.step_ns = q.Int(4);
    r.data_ns = q.Int(5);
    r.fwd_ns = q.Int(6);
    r.bwd_ns = q.Int(7);
    r.opt_ns = q.Int(8);
    r.gc_ns = q.Int(9);
    r.gc_n = static_cast<int32_t>(q.Int(10));
    r.gc_gen = static_cast<int32_t>(q.Int(11));
    for (int g = 0; g < static_cast<int>(trace::kCollGroups); ++g) {
      r.coll_ns[static_cast<size_t>(g)] = q.Int(12 + g);
    }
    r.tokens = q.Real(18);
    r.seqs = q.Real(19);
    r.sum_s2 = q.Real(20);
    r.flags = static_cast<uint32_t>(q.Int(21));
    r.gpu_clock = q.Int(22) != 0;
    job->steps.push_back(std::move(s));
  }
}

}  // namespace

Result<std::vector<RecentJob>> LoadRecent(Db& db, int64_t steps_per_job,
                                          int64_t max_records) {
  std::vector<RecentJob> out;
  ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT id, name FROM jobs ORDER BY id"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back({q.Int(0), q.Text(1), {}, {}});
  }
  const int64_t per_job =
      out.empty() ? 0 : max_records / static_cast<int64_t>(out.size());
  for (RecentJob& job : out) {
    RETURN_IF_ERROR(LoadRanks(db, &job));
    RETURN_IF_ERROR(LoadSteps(db, steps_per_job, per_job, &job));
  }
  return out;
}

Result<std::vector<JobRow>> ListJobs(Db& db) {
  ASSIGN_OR_RETURN(Stmt q, db.Prepare(
      "SELECT j.id, j.name, j.first_seen_ns, j.last_seen_ns, "
      "(SELECT COUNT(DISTINCT rank) FROM streams s WHERE s.job=j.id), "
      "COUNT(a.step), MIN(a.step), MAX(a.step), AVG(a.step_ns), "
      "SUM(a.ideal_ns) * 1.0 / NULLIF(SUM(a.step_ns), 0), "
      "(SELECT COUNT(*) FROM alerts x WHERE x.job=j.id AND "
      " x.name != 'TrainingStepRegimeChange') "
      "FROM jobs j LEFT JOIN step_agg a ON a.job=j.id "
      "GROUP BY j.id ORDER BY j.id"));
  std::vector<JobRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    JobRow r;
    r.id = q.Int(0);
    r.name = q.Text(1);
    r.first_seen_s = static_cast<double>(q.Int(2)) * 1e-9;
    r.last_seen_s = static_cast<double>(q.Int(3)) * 1e-9;
    r.ranks = q.Int(4);
    r.steps = q.Int(5);
    r.first_step = q.IsNull(6) ? -1 : q.Int(6);
    r.last_step = q.IsNull(7) ? -1 : q.Int(7);
    r.mean_step_s = q.Real(8) * 1e-9;
    r.utilization = q.IsNull(9) ? 1 : q.Real(9);
    r.alerts = q.Int(10);
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<AlertRow>> ListAlerts(Db& db, const std::string& job) {
  ASSIGN_OR_RETURN(Stmt q, db.Prepare(
      "SELECT a.id, j.name, a.name, a.cause, a.ranks, a.scope, a.summary, "
      "a.start_step, a.end_step, a.start_ns, a.end_ns, a.excess_ratio "
      "FROM alerts a JOIN jobs j ON j.id=a.job "
      "WHERE ?1='' OR j.name=?1 ORDER BY a.start_ns, a.id"));
  q.Bind(1, job);
  std::vector<AlertRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    AlertRow r;
    r.id = q.Int(0);
    r.job = q.Text(1);
    r.name = q.Text(2);
    r.cause = q.Text(3);
    r.ranks = q.Text(4);
    r.scope = q.Text(5);
    r.summary = q.Text(6);
    r.start_step = q.Int(7);
    r.end_step = q.Int(8);
    r.start_s = static_cast<double>(q.Int(9)) * 1e-9;
    r.end_s = static_cast<double>(q.Int(10)) * 1e-9;
    r.excess_ratio = q.Real(11);
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

struct Place {
  int64_t dp = -1, pp = 0, tp = 0;
};

void Op(std::string* out, const Place& p, int64_t rank, int64_t step,
        const char* type, int64_t start_ns, int64_t dur_ns) {
  *out += StrFormat("%lld,%lld,%lld,%lld,%s,%lld.%09lld,%lld.%09lld,0,0,%lld\n",
                    static_cast<long long>(p.dp), static_cast<long long>(p.pp),
                    static_cast<long long>(rank), static_cast<long long>(step),
                    type, static_cast<long long>(start_ns / 1'000'000'000),
                    static_cast<long long>(start_ns % 1'000'000'000),
                    static_cast<long long>(dur_ns / 1'000'000'000),
                    static_cast<long long>(dur_ns % 1'000'000'000),
                    static_cast<long long>(p.tp));
}

// The job's id; kNotFound naming it when the database has no such job.
Result<int64_t> JobIdOf(Db& db, const std::string& job) {
  ASSIGN_OR_RETURN(Stmt j, db.Prepare("SELECT id FROM jobs WHERE name=?"));
  j.Bind(1, job);
  ASSIGN_OR_RETURN(bool found, j.Step());
  if (!found) return NotFound("no job '" + job + "' in the database");
  return j.Int(0);
}

// Parameters ?1..?5 of an export query: job, step range, data-time range.
void BindRange(int64_t job, const ExportRange& range, Stmt* q) {
  q->Bind(1, job).Bind(2, range.from_step).Bind(3, range.to_step);
  q->Bind(4, static_cast<int64_t>(std::max(range.from_s, -9e9) * 1e9));
  q->Bind(5, static_cast<int64_t>(std::min(range.to_s, 9e9) * 1e9));
}

}  // namespace

Result<std::string> ExportOpsCsv(Db& db, const std::string& job,
                                 const ExportRange& range) {
  ASSIGN_OR_RETURN(const int64_t id, JobIdOf(db, job));
  std::map<int64_t, Place> places;
  ASSIGN_OR_RETURN(Stmt r, db.Prepare("SELECT rank, dp, pp, tp FROM ranks WHERE job=?"));
  r.Bind(1, id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, r.Step());
    if (!row) break;
    places[r.Int(0)] = {r.Int(1), std::max<int64_t>(r.Int(2), 0),
                        std::max<int64_t>(r.Int(3), 0)};
  }
  ASSIGN_OR_RETURN(Stmt q, db.Prepare(
      "SELECT rank, step, t_end_ns, step_ns, data_ns, fwd_ns, bwd_ns, opt_ns, "
      "gc_ns, dp_ns + pp_ns + tp_ns + cp_ns + ep_ns + other_ns "
      "FROM steps WHERE job=?1 AND step BETWEEN ?2 AND ?3 "
      "AND t_end_ns BETWEEN ?4 AND ?5 AND flags=0 ORDER BY step, rank"));
  BindRange(id, range, &q);
  std::string out = "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mb_id,tp_rank\n";
  int64_t rows = 0;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    const int64_t rank = q.Int(0), step = q.Int(1), end = q.Int(2);
    const int64_t step_ns = q.Int(3), data = q.Int(4), opt = q.Int(7);
    const int64_t gc = q.Int(8), coll = q.Int(9);
    int64_t fwd = q.Int(5), bwd = q.Int(6);
    // Without phases, the busy time splits 1:2 as forward and backward.
    if (fwd + bwd == 0) {
      const int64_t busy = std::max<int64_t>(step_ns - data - gc - opt - coll, 0);
      fwd = busy / 3;
      bwd = busy - fwd;
    }
    Place p = places.count(rank) ? places[rank] : Place{};
    if (p.dp < 0) p.dp = rank;
    // The op set of the ops CSV's Megatron model (every op present once
    // per worker and step; the ones the agent does not measure last 0),
    // back to back before the step's end. GC is host time: a gap before
    // the DP collective (a launch delay to the analysis).
    int64_t t = end - fwd - bwd - gc - coll - opt;
    Op(&out, p, rank, step, "params-all-gather", t, 0);
    Op(&out, p, rank, step, "forward-compute", t, fwd);
    t += fwd;
    Op(&out, p, rank, step, "backward-compute", t, bwd);
    t += bwd + gc;
    Op(&out, p, rank, step, "grads-reduce-scatter", t, coll);
    t += coll;
    for (const char* type : {"layernorm-grads-all-reduce",
                             "embedding-grads-all-reduce",
                             "optimizer-clip-main-grad"}) {
      Op(&out, p, rank, step, type, t, 0);
    }
    Op(&out, p, rank, step, "optimizer", t, opt);
    Op(&out, p, rank, step, "gc", t + opt, 0);
    ++rows;
  }
  if (rows == 0) return NotFound("job '" + job + "' has no stored steps in that range");
  return out;
}

Result<std::string> ExportStepsJson(Db& db, const std::string& job,
                                    const ExportRange& range) {
  ASSIGN_OR_RETURN(const int64_t id, JobIdOf(db, job));
  ASSIGN_OR_RETURN(Stmt q, db.Prepare(
      "SELECT rank, epoch, step, t_end_ns, step_ns, data_ns, fwd_ns, bwd_ns, "
      "opt_ns, gc_ns, gc_n, dp_ns, pp_ns, tp_ns, cp_ns, ep_ns, other_ns, "
      "tokens, sum_s2, flags FROM steps WHERE job=?1 AND step BETWEEN ?2 AND ?3 "
      "AND t_end_ns BETWEEN ?4 AND ?5 ORDER BY step, rank"));
  BindRange(id, range, &q);
  static constexpr const char* kInts[] = {
      "rank", "epoch", "step", "t_end_ns", "step_ns", "data_ns", "fwd_ns",
      "bwd_ns", "opt_ns", "gc_ns", "gc_n"};
  JsonWriter w(0);
  w.BeginObject();
  w.FieldString("schema", "strag.history.steps/1");
  w.FieldString("job", job);
  w.Key("steps");
  w.BeginArray();
  int64_t rows = 0;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    w.BeginObject();
    for (int c = 0; c < 11; ++c) w.FieldInt(kInts[c], q.Int(c));
    w.Key("coll_ns");
    w.BeginObject();
    for (int g = 0; g < static_cast<int>(trace::kCollGroups); ++g) {
      if (q.Int(11 + g) != 0) {
        w.FieldInt(trace::kCollGroupNames[static_cast<size_t>(g)], q.Int(11 + g));
      }
    }
    w.EndObject();
    w.Field("tokens", q.Real(17));
    w.Field("sum_s2", q.Real(18));
    w.FieldInt("flags", q.Int(19));
    w.EndObject();
    ++rows;
  }
  w.EndArray();
  w.EndObject();
  if (rows == 0) return NotFound("job '" + job + "' has no stored steps in that range");
  return w.str() + "\n";
}

}  // namespace strag::serve
