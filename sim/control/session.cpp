#include "sim/control/session.hpp"

#include "models/src/switch_latency.hpp"
#include "sim/control/controlled_gpu_policy.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/engine/gpu_replayer.hpp"
#include "sim/network/simgrid_world.hpp"
#include "sim/network/collectives.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <sstream>
#include <cmath>
#include <exception>

namespace sg4 = simgrid::s4u;

namespace dvfs {

const char* to_string(GpuPhase p) {
  switch (p) {
    case GpuPhase::idle: return "idle";
    case GpuPhase::generating: return "generating";
    case GpuPhase::waiting: return "waiting";
    case GpuPhase::training: return "training";
    case GpuPhase::host: return "host";
  }
  return "?";
}

struct ControlSession::Engine {
  SimWorld world;
  Collectives groups;
  std::vector<int> job_group;                // per job: its DP group (-1 when DP = 1)
  std::vector<sg4::BarrierPtr> rollouts;     // per job: every DP rank's rollouts are done
  std::vector<std::vector<int>> group_size;  // per job and step: decided by the first rank to start it
};

// One simulated GPU: DP rank `rank` of job `job` (its TP group folded into it).
class JobRankActor {
 public:
  JobRankActor(ControlSession& s, int unit, int job, int rank)
      : s_(s), unit_(unit), job_index_(job), rank_(rank), job_(*s.setup_.jobs[static_cast<std::size_t>(job)]),
        meter_(0, 1, s.setup_.model->sm_clocks_mhz().size(), s.setup_.bin_s) {
    opts_.timeline_interval_s = s.setup_.bin_s;
    opts_.seed = latency_seed(s.setup_.seed, unit);
    // The GPU's own power-limit loop holds whatever limit the controller set, under any requested clock.
    opts_.firmware_power_cap = true;
    work_.id = unit;
    // Response lengths: per job, rank and session seed.
    rng_.seed(latency_seed(latency_seed(s.setup_.seed, 1000 + job) ^ job_.spec.seed, rank));
    // The job's start: its offset plus a draw from the session's seed (the same for all its ranks).
    std::mt19937_64 start_rng(latency_seed(s.setup_.seed, -2 - job));
    start_s_ = job_.spec.start_offset_s + job_.spec.start_offset_spread_s * uniform01(start_rng);
    const GpuActuators& a = s.board_.gpus[static_cast<std::size_t>(s.unit_first_gpu_[static_cast<std::size_t>(unit)])];
    opts_.firmware_cap_w = cap_w_ = a.power_cap_w;
    const auto j = static_cast<std::size_t>(job);
    policy_ = std::make_unique<ControlledGpuPolicy>(*s.setup_.model, s.setup_.model->governor().control_period_s,
                                                    [this](double now) { on_tick(now); },
                                                    j < s.setup_.plans.size() ? s.setup_.plans[j] : std::vector<ClockPair>{});
    rep_ = std::make_unique<GpuReplayer>(work_, *s.setup_.model, *policy_, opts_, meter_);
  }

  void body() {
    try {
      origin_ = sg4::Engine::get_clock();
      read_board(0);
      idle_until(start_s_);
      for (int step = 0;; ++step) {
        if (job_.spec.generation) generate(step);
        train(step);
      }
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // the session ends: let SimGrid unwind this actor
    } catch (...) {
      ControlSession::Engine& e = *s_.engine_;
      if (!e.world.failure()) e.world.failure() = std::current_exception();
      sg4::Actor::kill_all();
    }
  }

  GpuPhase phase() const { return phase_; }
  double accounted_s() const { return accounted_s_; }
  const EnergyMeter& meter() const { return meter_; }
  // The power limit or the SM clock ceiling holds the GPU below its top clock.
  bool throttled() const { return rep_->firmware_throttling() || policy_->sm_ceiling_mhz() > 0; }
  int sm_index() const { return rep_->sm_index(); }
  double tokens_in(std::size_t interval) const { return interval < generated_.size() ? generated_[interval] : 0.0; }
  double trained_in(std::size_t interval) const { return interval < trained_.size() ? trained_[interval] : 0.0; }
  double progress() const { return seq_total_ > 0 ? static_cast<double>(seq_done_) / seq_total_ : 1.0; }
  int steps_done() const { return steps_done_; }
  sg4::SemaphorePtr gate = sg4::Semaphore::create(0);

 private:
  void on_tick(double now) {
    if (pending_at_s_ >= 0 && now + 1e-12 >= pending_at_s_) {
      rep_->set_firmware_cap_w(cap_w_ = pending_cap_w_);
      pending_at_s_ = -1;
    }
    if (++ticks_ % s_.ticks_per_control_ != 0) return;
    ++control_ticks_;
    if (s_.gating_) {
      // Meet SimGrid at the tick and wait until the controller has acted on what was measured.
      sg4::this_actor::sleep_until(origin_ + control_ticks_ * s_.setup_.interval_s);
      accounted_s_ = now;
      gate->acquire();
    }
    read_board(now);
  }

  // A new power limit takes effect after the latency (at the start, at once); the ceiling is a clock request.
  void read_board(double now) {
    const GpuActuators& a = s_.board_.gpus[static_cast<std::size_t>(s_.unit_first_gpu_[static_cast<std::size_t>(unit_)])];
    const double latency = now > 0 ? s_.setup_.cap_latency_s : 0.0;
    if (a.power_cap_w != (pending_at_s_ >= 0 ? pending_cap_w_ : cap_w_)) {
      pending_cap_w_ = a.power_cap_w;
      pending_at_s_ = now + latency;
      if (latency <= 0) {
        rep_->set_firmware_cap_w(cap_w_ = pending_cap_w_);
        pending_at_s_ = -1;
      }
    }
    policy_->set_sm_ceiling_mhz(a.sm_ceiling_mhz);
  }

  void run(const std::vector<Kernel>& ks) {
    work_.kernels = ks;
    rep_->run_kernels(tk_, 0, work_.kernels.size());
    accounted_s_ = tk_.now();
  }
  void idle_until(double t) {
    rep_->idle_until(tk_, t);
    accounted_s_ = tk_.now();
  }
  // Before a communication: SimGrid's clock catches up with the GPU's; after it, the GPU idled meanwhile.
  void sync() {
    sg4::this_actor::sleep_until(origin_ + tk_.now());
    accounted_s_ = tk_.now();
  }
  void resume() { idle_until(sg4::Engine::get_clock() - origin_); }

  void credit(std::vector<double>& per_interval, double amount) {
    const auto i = static_cast<std::size_t>(std::max(0.0, std::floor(tk_.now() / s_.setup_.interval_s - 1e-9)));
    if (i >= per_interval.size()) per_interval.resize(i + 1, 0.0);
    per_interval[i] += amount;
  }

  int group_size(int step) {
    auto& g = s_.engine_->group_size[static_cast<std::size_t>(job_index_)];
    if (static_cast<int>(g.size()) <= step) {
      const JobKnobs& k = s_.board_.jobs[static_cast<std::size_t>(job_index_)];
      g.push_back(std::clamp(k.group_size, job_.spec.group_size_min, job_.spec.group_size_max));
    }
    return g[static_cast<std::size_t>(step)];
  }

  int my_sequences(int step) {
    const int n = job_.spec.sequences_per_step(group_size(step)), dp = job_.spec.dp;
    return n / dp + (rank_ < n % dp ? 1 : 0);
  }

  void generate(int step) {
    phase_ = GpuPhase::generating;
    const GrpoJobSpec& j = job_.spec;
    std::vector<int> lengths = draw_response_lengths(static_cast<std::size_t>(my_sequences(step)), j.response_median_tokens,
                                                     j.response_sigma, j.max_response_tokens, rng_);
    seq_total_ = static_cast<int>(lengths.size());
    seq_done_ = 0;
    struct Seq {
      int left;
      double context;
    };
    std::vector<Seq> active;
    std::size_t next = 0;
    std::vector<Kernel> ks;
    while (next < lengths.size() || !active.empty()) {
      const int c = std::clamp(s_.board_.jobs[static_cast<std::size_t>(job_index_)].concurrency, j.concurrency_min, j.concurrency_max);
      // Sequences beyond the concurrency wait (paused, their KV cache kept); new ones join while there is room.
      int joining = 0;
      while (static_cast<int>(active.size()) < c && next < lengths.size()) {
        active.push_back({lengths[next++], static_cast<double>(j.prompt_tokens)});
        ++joining;
      }
      const int decoding = std::min(c, static_cast<int>(active.size())) - joining;
      double sum_ctx = 0;
      for (int i = 0; i < decoding; ++i) sum_ctx += active[static_cast<std::size_t>(i)].context;
      if (decoding > 0) job_.decode.step(decoding, sum_ctx, job_.top_sm_mhz, job_.top_mem_mhz, ks);
      else ks.clear();
      if (joining > 0) {
        // The joining sequences' prefill runs in this step (the engine batches it with the decodes).
        for (Kernel k : job_.training.prefill_one) {
          k.duration_s *= joining;
          ks.push_back(k);
        }
      }
      run(ks);
      // Every decoding sequence got a token; a joining one got its first from the prefill.
      double tokens = joining;
      for (int i = 0; i < decoding; ++i) {
        Seq& q = active[static_cast<std::size_t>(i)];
        --q.left;
        q.context += 1;
        tokens += 1;
      }
      for (int i = decoding; i < decoding + joining; ++i) --active[static_cast<std::size_t>(i)].left;
      credit(generated_, tokens);
      const auto before = active.size();
      active.erase(std::remove_if(active.begin(), active.end(), [](const Seq& q) { return q.left <= 0; }), active.end());
      seq_done_ += static_cast<int>(before - active.size());
    }
    seq_done_ = seq_total_;
  }

  void collective(CollectiveKind kind, double bytes) {
    ControlSession::Engine& e = *s_.engine_;
    const int g = e.job_group[static_cast<std::size_t>(job_index_)];
    if (g < 0) return;
    sync();
    e.groups.run(g, rank_, kind, bytes);
    resume();
  }

  void train(int step) {
    const GrpoJobSpec& j = job_.spec;
    ControlSession::Engine& e = *s_.engine_;
    if (j.generation && j.dp > 1) {
      phase_ = GpuPhase::waiting;  // every rank's rollouts before training (synchronous GRPO)
      sync();
      e.rollouts[static_cast<std::size_t>(job_index_)]->wait();
      resume();
    }
    phase_ = GpuPhase::training;
    const int n = my_sequences(step);
    const int micro = (n + j.train_micro_batch - 1) / j.train_micro_batch;
    for (int m = 0; m < micro; ++m) {
      if (j.generation && j.reference_forward) run(job_.training.reference_forward);
      run(job_.training.forward);
      run(job_.training.backward);
      const int seqs = std::min(j.train_micro_batch, n - m * j.train_micro_batch);
      credit(trained_, static_cast<double>(seqs) * j.sequence_tokens());
    }
    phase_ = GpuPhase::waiting;
    collective(CollectiveKind::reduce_scatter, job_.training.gradient_bytes);
    phase_ = GpuPhase::training;
    run(job_.training.optimizer);
    phase_ = GpuPhase::waiting;
    collective(CollectiveKind::all_gather, job_.training.param_bytes);
    phase_ = GpuPhase::host;
    idle_until(tk_.now() + j.step_host_s);
    ++steps_done_;
  }

  ControlSession& s_;
  int unit_, job_index_, rank_;
  const PreparedGrpoJob& job_;
  ReplayOptions opts_;
  EnergyMeter meter_;
  Rank work_;
  std::unique_ptr<ControlledGpuPolicy> policy_;
  std::unique_ptr<GpuReplayer> rep_;
  LocalTime tk_;
  std::mt19937_64 rng_;
  double origin_ = 0, accounted_s_ = 0, start_s_ = 0;
  int control_ticks_ = 0, seq_total_ = 0, seq_done_ = 0, steps_done_ = 0;
  long ticks_ = 0;
  double cap_w_ = 0, pending_cap_w_ = 0, pending_at_s_ = -1;
  GpuPhase phase_ = GpuPhase::idle;
  std::vector<double> generated_, trained_;
};

void check_control_timing(const GpuModel& m, double interval_s, double bin_s, double duration_s, const std::string& file,
                          const std::string& interval_field, const std::string& bin_field, const std::string& duration_field) {
  const double period = m.governor().control_period_s;
  const double ticks = std::round(interval_s / period);
  if (ticks < 1 || std::fabs(ticks * period - interval_s) > 1e-9 * interval_s)
    throw InputError(file, interval_field, "expected a multiple of the " + m.name() + " governor's period (" + std::to_string(period) + " s)");
  const double bins = interval_s / bin_s;
  if (!(bin_s > 0) || std::fabs(bins - std::round(bins)) > 1e-9 * bins)
    throw InputError(file, bin_field, "expected a bin that divides the control interval (" + std::to_string(interval_s) + " s)");
  if (duration_s > kMaxControlDurationS)
    throw InputError(file, duration_field, "expected at most " + std::to_string(static_cast<long>(kMaxControlDurationS)) +
                                               " s simulated (a limit, README \"Limits and bad input\")");
  if (duration_s / bin_s > kMaxTimelineRows) {
    std::ostringstream os;
    os << "expected at most " << kMaxTimelineRows << " bins per GPU (" << duration_s << " s in bins of " << bin_s << " s)";
    throw InputError(file, bin_field, os.str());
  }
}

ControlSession::ControlSession(const SessionSetup& setup) : setup_(setup) {
  const GpuModel& m = *setup_.model;
  // scenarios check this where they are read, naming their fields; a setup made in code is checked here
  check_control_timing(m, setup_.interval_s, setup_.bin_s, setup_.duration_s, "session", "interval_s", "telemetry.bin_s", "duration_s");
  ticks_per_control_ = static_cast<int>(std::lround(setup_.interval_s / m.governor().control_period_s));
  ticks_total_ = static_cast<int>(std::floor(setup_.duration_s / setup_.interval_s + 1e-9));
  if (setup_.min_cap_w <= 0) setup_.min_cap_w = std::min(200.0, m.power_cap_w());
  if (setup_.max_cap_w <= 0) setup_.max_cap_w = m.power_cap_w();
  // Units (simulated GPUs) and physical GPUs.
  std::vector<std::pair<int, int>> unit_job_rank;
  for (std::size_t j = 0; j < setup_.jobs.size(); ++j) {
    const GrpoJobSpec& spec = setup_.jobs[j]->spec;
    board_.jobs.push_back({spec.group_size, spec.concurrency});
    for (int r = 0; r < spec.dp; ++r) {
      unit_job_rank.emplace_back(static_cast<int>(j), r);
      unit_first_gpu_.push_back(physical_gpus_);
      unit_gpus_.push_back(spec.tp);
      for (int t = 0; t < spec.tp; ++t) {
        job_of_gpu_.push_back(static_cast<int>(j));
        unit_of_gpu_.push_back(static_cast<int>(unit_first_gpu_.size()) - 1);
      }
      physical_gpus_ += spec.tp;
    }
  }
  board_.gpus.assign(static_cast<std::size_t>(physical_gpus_), GpuActuators{setup_.max_cap_w, 0});
  for (const PowerBudget& b : setup_.budgets)
    for (int g : b.gpus)
      if (g < 0 || g >= physical_gpus_)
        throw InputError("session", "budgets." + b.name, "GPU index " + std::to_string(g) + " outside the jobs' " + std::to_string(physical_gpus_) + " GPUs");

  engine_ = std::make_unique<Engine>();
  Engine& e = *engine_;
  origin_s_ = sg4::Engine::get_clock();
  const std::size_t U = unit_job_rank.size();
  // Data-parallel groups of each job, on a cluster whose hosts stand for TP groups.
  std::vector<std::vector<int>> members(setup_.jobs.size());
  for (std::size_t u = 0; u < U; ++u) members[static_cast<std::size_t>(unit_job_rank[u].first)].push_back(static_cast<int>(u));
  for (std::size_t j = 0; j < setup_.jobs.size(); ++j) {
    e.job_group.push_back(members[j].size() > 1 ? e.groups.add_group(members[j]) : -1);
    e.rollouts.push_back(sg4::Barrier::create(static_cast<unsigned>(members[j].size())));
    e.group_size.emplace_back();
  }
  PlatformSpec platform;
  if (e.groups.group_count() == 0) {
    platform.zone = "control";
    for (std::size_t u = 0; u < U; ++u) platform.host_names.push_back("gpu" + std::to_string(u));
  } else {
    ClusterSpec cs = setup_.cluster;
    const int tp = setup_.jobs.front()->spec.tp;
    for (const auto& j : setup_.jobs)
      if (j->spec.tp != tp)
        throw InputError("session", "jobs." + j->spec.name + ".tp", "jobs of one session share a TP size (one simulated host stands for a TP group)");
    cs.gpus_per_node = std::max(1, setup_.cluster.gpus_per_node / tp);  // hosts per node
    platform.kind = PlatformSpec::Kind::cluster;
    platform.cluster = cs;
    for (std::size_t u = 0; u < U; ++u) platform.slots.push_back(unit_first_gpu_[u] / tp);
  }
  e.world.build(platform, e.groups, setup_.cluster.allreduce);
  std::mt19937_64 phase_rng(latency_seed(setup_.seed, -1));
  for (std::size_t u = 0; u < U; ++u) {
    units_.push_back(std::make_unique<JobRankActor>(*this, static_cast<int>(u), unit_job_rank[u].first, unit_job_rank[u].second));
    unit_series_.emplace_back();
    unit_series_.back().bin_s = setup_.bin_s;
    unit_final_bins_.push_back(0);
    NvmlSpec n = setup_.nvml;
    // Each GPU refreshes its instant field and counter on its own phase, in whole bins.
    const double slots = std::max(1.0, std::round(n.instant_period_s / setup_.bin_s));
    n.phase_s = std::floor(uniform01(phase_rng) * slots) * setup_.bin_s;
    unit_nvml_.push_back(n);
  }
}

ControlSession::~ControlSession() {
  if (!engine_ || !engine_->world.live()) return;
  if (started_) engine_->world.stop();
  engine_->world.close();
}

void ControlSession::start_actors() {
  if (started_) return;
  started_ = true;
  for (std::size_t u = 0; u < units_.size(); ++u) {
    JobRankActor* a = units_[u].get();
    engine_->world.spawn_unguarded("unit" + std::to_string(u), u, [a] { a->body(); });  // the body handles its failures
  }
}

const IntervalReport& ControlSession::advance() {
  if (done()) throw std::logic_error("control session: advance() after the last interval");
  if (!started_) start_actors();
  else
    for (auto& u : units_) u->gate->release();
  const double t_end = (tick_ + 1) * setup_.interval_s;
  engine_->world.run_until(origin_s_ + t_end);
  ++tick_;
  refresh_series(t_end);

  IntervalReport r;
  r.tick = tick_;
  r.t_end_s = t_end;
  const std::size_t G = static_cast<std::size_t>(physical_gpus_);
  r.gpu_measured_w.resize(G);
  r.gpu_exact_w.resize(G);
  r.gpu_phase.resize(G);
  r.gpu_throttled.resize(G);
  for (std::size_t g = 0; g < G; ++g) {
    const auto u = static_cast<std::size_t>(unit_of_gpu_[g]);
    const PowerSeries& ps = unit_series_[u];
    r.gpu_measured_w[g] = nvml_sample_at(ps, setup_.field, t_end, setup_.interval_s, unit_nvml_[u]);
    r.gpu_exact_w[g] = ps.mean_w(t_end - setup_.interval_s, t_end);
    r.gpu_phase[g] = units_[u]->phase();
    r.gpu_throttled[g] = units_[u]->throttled() ? 1 : 0;
  }
  for (const PowerBudget& b : setup_.budgets) {
    double m = 0, x = 0;
    for (int g : b.gpus) m += r.gpu_measured_w[static_cast<std::size_t>(g)], x += r.gpu_exact_w[static_cast<std::size_t>(g)];
    r.budget_measured_w.push_back(m);
    r.budget_exact_w.push_back(x);
    r.budget_violated.push_back(m > b.budget_w ? 1 : 0);
  }
  r.job_generated_tokens.assign(setup_.jobs.size(), 0.0);
  r.job_trained_tokens.assign(setup_.jobs.size(), 0.0);
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const auto j = static_cast<std::size_t>(job_of_gpu_[static_cast<std::size_t>(unit_first_gpu_[u])]);
    r.job_generated_tokens[j] += units_[u]->tokens_in(static_cast<std::size_t>(tick_ - 1));
    r.job_trained_tokens[j] += units_[u]->trained_in(static_cast<std::size_t>(tick_ - 1));
  }
  reports_.push_back(std::move(r));
  return reports_.back();
}

void ControlSession::run_to_end() {
  if (started_) throw std::logic_error("control session: run_to_end() on a session already advanced");
  gating_ = false;
  start_actors();
  engine_->world.run_until(origin_s_ + ticks_total_ * setup_.interval_s);
  tick_ = ticks_total_;
  refresh_series(ticks_total_ * setup_.interval_s);
}

void ControlSession::refresh_series(double t_end) {
  const double bin = setup_.bin_s;
  const auto bins = static_cast<std::size_t>(std::llround(t_end / bin));
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const JobRankActor& a = *units_[u];
    const auto& tl = a.meter().timeline();
    PowerSeries& ps = unit_series_[u];
    ps.power_w.resize(bins, 0.0);
    const double acc = std::min(a.accounted_s(), t_end);
    const double idle_w = setup_.model->idle_power_w(a.sm_index());
    for (std::size_t b = unit_final_bins_[u]; b < bins; ++b) {
      const double lo = static_cast<double>(b) * bin, hi = lo + bin;
      const double recorded = b < tl.size() ? tl[b].energy_j : 0.0;
      // The part of the bin past what the GPU has replayed: it is blocked in a communication, idle.
      const double missing = std::max(0.0, hi - std::max(lo, acc));
      ps.power_w[b] = (recorded + idle_w * missing) / bin;
    }
    unit_final_bins_[u] = std::min(bins, static_cast<std::size_t>(std::max(0.0, std::floor(acc / bin + 1e-9))));
  }
}

double ControlSession::generation_progress(int job) const {
  double sum = 0;
  int n = 0;
  for (std::size_t u = 0; u < units_.size(); ++u)
    if (job_of_gpu_[static_cast<std::size_t>(unit_first_gpu_[u])] == job && units_[u]->phase() == GpuPhase::generating) {
      sum += units_[u]->progress();
      ++n;
    }
  return n ? sum / n : 1.0;
}

PowerSeries ControlSession::gpu_power(int g) const { return unit_series_[static_cast<std::size_t>(unit_of_gpu_[static_cast<std::size_t>(g)])]; }

double ControlSession::energy_j() const {
  double e = 0;
  for (std::size_t u = 0; u < units_.size(); ++u) e += unit_series_[u].energy_j(0, now_s()) * unit_gpus_[u];
  return e;
}

double ControlSession::generated_tokens() const {
  double t = 0;
  for (const auto& u : units_)
    for (int i = 0; i < tick_; ++i) t += u->tokens_in(static_cast<std::size_t>(i));
  return t;
}

double ControlSession::trained_tokens() const {
  double t = 0;
  for (const auto& u : units_)
    for (int i = 0; i < tick_; ++i) t += u->trained_in(static_cast<std::size_t>(i));
  return t;
}

int ControlSession::steps_done(int job) const {
  int n = 1 << 30;
  for (std::size_t u = 0; u < units_.size(); ++u)
    if (job_of_gpu_[static_cast<std::size_t>(unit_first_gpu_[u])] == job) n = std::min(n, units_[u]->steps_done());
  return n == (1 << 30) ? 0 : n;
}

}  // namespace dvfs
