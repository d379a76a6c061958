// SPDX-License-Identifier: Apache-2.0
#include "cli/serve_command.h"

#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/command_main.h"
#include "cli/flags.h"
#include "serve/collector.h"
#include "serve/loadgen/live_player.h"

namespace strag::cli {

const char kServeUsage[] =
    "usage: strag serve [options]\n"
    "  The live collector: agents in the training processes post their step\n"
    "  records (docs/formats/agent-protocol.md); strag detects stragglers\n"
    "  online, serves the dashboard at /, Prometheus metrics at /metrics, and\n"
    "  keeps the history (strag history). Stops on SIGINT or SIGTERM.\n"
    "  --listen HOST:PORT     address (default 127.0.0.1:9400; port 0: any\n"
    "                         free port). Not loopback: --token-file needed\n"
    "  --db FILE              SQLite database (default strag-live.db)\n"
    "  --token-file FILE      bearer token the agents must send (first line)\n"
    "  --port-file FILE       write the port listened on (for scripts)\n"
    "  --usd-per-gpu-hour X   price when the agents give none (default 2.00)\n"
    "  --continuity S         seconds a straggler must persist to alert\n"
    "                         (default 240)\n"
    "  --exit-hysteresis S    seconds of recovery before it resolves (600)\n"
    "  --window-steps N       persistence window, at least N steps (100)\n"
    "  --warmup-steps N       first steps of a job not judged (3)\n"
    "  --microbatches M       microbatches per step, for the stage excess\n"
    "  --no-capture           do not order profiler captures on alerts\n"
    "  --capture-steps K      steps a capture records (3)\n"
    "  --retention-hours H    raw step records kept (24; aggregates stay)\n"
    "  --sync normal|full     SQLite synchronous mode (full)\n"
    "  --threads N            HTTP worker threads (16)\n";

namespace {

Result<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("--token-file " + path + ": cannot read it");
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  if (token.size() < 16) {
    return InvalidInput("--token-file " + path +
                        ": the token must have at least 16 characters");
  }
  return token;
}

Status ParseListen(const std::string& text, serve::CollectorOptions* o) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidInput("--listen " + text + ": expected HOST:PORT");
  }
  o->host = text.substr(0, colon);
  if (o->host.size() > 2 && o->host.front() == '[') {
    o->host = o->host.substr(1, o->host.size() - 2);
  }
  char* end = nullptr;
  const long port = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 0 || port > 65535 || end == text.c_str() + colon + 1) {
    return InvalidInput("--listen " + text + ": the port must be 0 to 65535");
  }
  o->port = static_cast<int>(port);
  return Status::Ok();
}

Status Options(const Flags& f, serve::CollectorOptions* o) {
  if (auto v = f.Get("listen")) RETURN_IF_ERROR(ParseListen(*v, o));
  if (auto v = f.Get("db")) o->db_path = *v;
  if (auto v = f.Get("token-file")) {
    ASSIGN_OR_RETURN(o->token, ReadToken(*v));
  }
  auto& d = o->monitor.detector;
  ASSIGN_OR_RETURN(auto price, f.GetDouble("usd-per-gpu-hour"));
  if (price) o->monitor.usd_per_gpu_hour = *price;
  ASSIGN_OR_RETURN(auto cont, f.GetDouble("continuity"));
  if (cont) d.continuity_s = *cont;
  ASSIGN_OR_RETURN(auto hyst, f.GetDouble("exit-hysteresis"));
  if (hyst) d.exit_s = *hyst;
  ASSIGN_OR_RETURN(auto window, f.GetInt("window-steps", 4, 100000));
  if (window) d.window_steps = static_cast<int32_t>(*window);
  ASSIGN_OR_RETURN(auto warm, f.GetInt("warmup-steps", 0, 100000));
  if (warm) d.warmup_steps = static_cast<int32_t>(*warm);
  ASSIGN_OR_RETURN(auto mb, f.GetInt("microbatches", 1, 100000));
  if (mb) d.microbatches = static_cast<int32_t>(*mb);
  ASSIGN_OR_RETURN(auto steps, f.GetInt("capture-steps", 1, 100));
  if (steps) o->monitor.capture_steps = static_cast<int32_t>(*steps);
  o->monitor.captures = !f.Has("no-capture");
  ASSIGN_OR_RETURN(auto keep, f.GetDouble("retention-hours"));
  if (keep) o->retention_hours = *keep;
  ASSIGN_OR_RETURN(auto threads, f.GetInt("threads", 2, 1024));
  if (threads) o->threads = static_cast<int>(*threads);
  if (auto v = f.Get("sync")) {
    if (*v != "normal" && *v != "full") {
      return InvalidInput("--sync " + *v + ": expected normal or full");
    }
    o->store.full_sync = *v == "full";
  }
  if ((price && !(*price >= 0)) || (cont && !(*cont >= 0)) ||
      (hyst && !(*hyst >= 0)) || (keep && !(*keep > 0))) {
    return InvalidInput("--usd-per-gpu-hour, --continuity, --exit-hysteresis "
                        "and --retention-hours must not be negative");
  }
  // Capture analyses run `strag analyze`: strag beside this strag-serve.
  o->strag_exe = BesideThisBinary("strag");
  return Status::Ok();
}

}  // namespace

Status RunServe(const std::vector<std::string>& args) {
  const FlagSpec spec{
      .with_value = {"listen", "db", "token-file", "port-file",
                     "usd-per-gpu-hour", "continuity", "exit-hysteresis",
                     "window-steps", "warmup-steps", "microbatches",
                     "capture-steps", "retention-hours", "sync", "threads"},
      .booleans = {"no-capture"},
  };
  ASSIGN_OR_RETURN(Flags flags, Flags::Parse(args, spec));
  if (!flags.positional().empty()) {
    return InvalidInput("serve takes no arguments\n" + std::string(kServeUsage));
  }
  serve::CollectorOptions o;
  RETURN_IF_ERROR(Options(flags, &o));
  // SIGINT and SIGTERM are taken by this thread alone (sigwait), so every
  // thread the collector starts inherits the mask.
  // A peer that hangs up mid-answer must not end the collector.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  ASSIGN_OR_RETURN(std::unique_ptr<serve::Collector> c, serve::Collector::Start(o));
  if (auto path = flags.Get("port-file")) {
    std::ofstream(*path) << c->port() << "\n";
  }
  std::fprintf(stderr,
               "strag serve: listening on http://%s:%d/ (dashboard), "
               "/metrics, /v1/ingest; database %s\n",
               o.host.c_str(), c->port(), o.db_path.c_str());
  int sig = 0;
  sigwait(&stop, &sig);
  std::fprintf(stderr, "strag serve: stopping (signal %d)\n", sig);
  c->Stop();
  return Status::Ok();
}

Status RunSimulateLive(const Flags& flags, const sim::JobSpec& spec) {
  serve::LivePlayOptions o;
  o.url = *flags.Get("live");
  if (o.url.rfind("http://", 0) != 0) {
    return InvalidInput("--live " + o.url + ": expected http://HOST:PORT");
  }
  while (!o.url.empty() && o.url.back() == '/') o.url.pop_back();
  o.job = flags.Get("job").value_or("sim");
  (void)spec;
  if (auto path = flags.Get("token-file")) {
    ASSIGN_OR_RETURN(o.token, ReadToken(*path));
  }
  ASSIGN_OR_RETURN(auto rate, flags.GetDouble("rate"));
  if (rate) {
    if (!(*rate >= 0)) return InvalidInput("--rate must not be negative");
    o.rate = *rate;
  }
  ASSIGN_OR_RETURN(auto per, flags.GetInt("records-per-request", 1, 10000));
  if (per) o.records_per_request = *per;
  ASSIGN_OR_RETURN(
      serve::LivePlayStats st,
      serve::PlayLive(spec, o, [](const std::string& line) {
        std::fprintf(stderr, "strag simulate --live: %s\n", line.c_str());
      }));
  std::printf("played %lld steps of job '%s' to %s: %lld records in %lld "
              "requests (%lld retried), %.1f s, %.0f records/s\n",
              static_cast<long long>(st.steps), o.job.c_str(), o.url.c_str(),
              static_cast<long long>(st.records),
              static_cast<long long>(st.requests),
              static_cast<long long>(st.retries), st.seconds,
              st.seconds > 0 ? static_cast<double>(st.records) / st.seconds : 0.0);
  return Status::Ok();
}

}  // namespace strag::cli
