#include "sim/control/controllers.hpp"

#include "sim/control/cap_allocation.hpp"
#include "sim/core/errors.hpp"

#include <algorithm>
#include <cmath>

namespace dvfs {

std::vector<std::string> controller_names() { return {"uncontrolled", "static-cap", "reactive", "pid", "rl", "per-kernel"}; }

std::vector<int> controlled_budgets(const ControlSession& s) {
  std::vector<int> out;
  for (std::size_t b = 0; b < s.setup().budgets.size(); ++b)
    if (s.setup().budgets[b].controlled) out.push_back(static_cast<int>(b));
  return out;
}

namespace {

void set_caps(ControlSession& s, int b, const std::vector<double>& caps) {
  const auto& gpus = s.setup().budgets[static_cast<std::size_t>(b)].gpus;
  for (std::size_t i = 0; i < gpus.size(); ++i) s.board().gpus[static_cast<std::size_t>(gpus[i])].power_cap_w = caps[i];
}

double measured(const ControlSession& s, int b) { return s.reports().back().budget_measured_w[static_cast<std::size_t>(b)]; }

class Uncontrolled : public Controller {
 public:
  std::string name() const override { return "uncontrolled"; }
  void control(ControlSession&) override {}
};

class StaticCap : public Controller {
 public:
  explicit StaticCap(std::string name = "static-cap") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  void start(ControlSession& s) override {
    for (int b : controlled_budgets(s)) {
      const PowerBudget& bud = s.setup().budgets[static_cast<std::size_t>(b)];
      set_caps(s, b, equal_caps(bud.budget_w, bud.gpus.size(), s.setup().min_cap_w, s.setup().max_cap_w));
    }
  }
  void control(ControlSession&) override {}

 private:
  std::string name_;
};

class Reactive : public Controller {
 public:
  explicit Reactive(const ControllerSpec& c) : c_(c) {}
  std::string name() const override { return "reactive"; }
  void start(ControlSession& s) override {
    for (int b : controlled_budgets(s)) target_.push_back(s.setup().max_cap_w * static_cast<double>(s.setup().budgets[static_cast<std::size_t>(b)].gpus.size()));
  }
  void control(ControlSession& s) override {
    const auto bs = controlled_budgets(s);
    for (std::size_t i = 0; i < bs.size(); ++i) {
      const PowerBudget& bud = s.setup().budgets[static_cast<std::size_t>(bs[i])];
      const double m = measured(s, bs[i]), B = bud.budget_w, n = static_cast<double>(bud.gpus.size());
      if (m > B) target_[i] -= c_.down_gain * (m - B);
      else if (m < B * (1 - c_.margin_frac)) target_[i] += c_.up_step_frac * B;
      target_[i] = std::clamp(target_[i], n * s.setup().min_cap_w, n * s.setup().max_cap_w);
      set_caps(s, bs[i], equal_caps(target_[i], bud.gpus.size(), s.setup().min_cap_w, s.setup().max_cap_w));
    }
  }

 private:
  ControllerSpec c_;
  std::vector<double> target_;
};

class Pid : public Controller {
 public:
  explicit Pid(const ControllerSpec& c) : c_(c) {}
  std::string name() const override { return "pid"; }
  void start(ControlSession& s) override {
    const auto bs = controlled_budgets(s);
    integral_.assign(bs.size(), 0.0);
    previous_.assign(bs.size(), 0.0);
  }
  void control(ControlSession& s) override {
    const auto bs = controlled_budgets(s);
    const double dt = s.setup().interval_s;
    for (std::size_t i = 0; i < bs.size(); ++i) {
      const PowerBudget& bud = s.setup().budgets[static_cast<std::size_t>(bs[i])];
      const double B = bud.budget_w, n = static_cast<double>(bud.gpus.size());
      const double e = B * (1 - c_.margin_frac) - measured(s, bs[i]);
      const double lo = n * s.setup().min_cap_w, hi = n * s.setup().max_cap_w;
      const double d = s.reports().size() > 1 ? (e - previous_[i]) / dt : 0.0;
      previous_[i] = e;
      double target = B + c_.kp * e + c_.ki * (integral_[i] + e * dt) + c_.kd * d;
      // Anti-windup: integrate only while the target is not held at a limit.
      if (target > lo && target < hi) integral_[i] += e * dt;
      target = std::clamp(target, lo, hi);
      allocate_budget_caps(s, bs[i], target, c_.headroom_w);
    }
  }

 private:
  ControllerSpec c_;
  std::vector<double> integral_, previous_;
};

class Learned : public Controller {
 public:
  Learned(const ControllerSpec& c, MlpPolicy p) : c_(c), policy_(std::move(p)) {}
  std::string name() const override { return "rl"; }
  // The first action from the observation before any interval, as the environment's first step takes it.
  void start(ControlSession& s) override { control(s); }
  void control(ControlSession& s) override {
    for (int b : controlled_budgets(s)) apply_budget_action(s, b, policy_.act(budget_observation(s, b)), c_.action);
  }

 private:
  ControllerSpec c_;
  MlpPolicy policy_;
};

}  // namespace

std::unique_ptr<Controller> make_controller(const ControllerSpec& c, const std::string& file) {
  auto bad = [&](const char* key, const std::string& problem) { throw InputError(file, std::string("control.controller.") + key, problem); };
  if (!(c.margin_frac >= 0 && c.margin_frac < 1)) bad("margin_frac", "expected a fraction in [0, 1)");
  if (!(c.down_gain > 0) || !(c.up_step_frac > 0)) bad("down_gain", "expected down_gain and up_step_frac > 0");
  if (!(c.kp >= 0) || !(c.ki >= 0) || !(c.kd >= 0)) bad("kp", "expected PID gains >= 0");
  if (!(c.headroom_w >= 0)) bad("headroom_w", "expected >= 0 W");
  if (c.name == "uncontrolled") return std::make_unique<Uncontrolled>();
  if (c.name == "static-cap") return std::make_unique<StaticCap>();
  if (c.name == "per-kernel") {
    if (!(c.budget_pct >= 0) || c.budget_pct > 100) bad("budget_pct", "expected a kernel-time budget in [0, 100] %");
    return std::make_unique<StaticCap>("per-kernel");  // the plans run in the session (make_session_setup)
  }
  if (c.name == "reactive") return std::make_unique<Reactive>(c);
  if (c.name == "pid") return std::make_unique<Pid>(c);
  if (c.name == "rl") {
    if (c.policy_file.empty()) bad("policy_file", "the rl controller needs a trained policy file");
    if (!file_exists(c.policy_file)) bad("policy_file", "no such file \"" + c.policy_file + "\" (expected a trained policy, e.g. from python3 -m dvfs_sim.rl.train)");
    MlpPolicy p = MlpPolicy::load(c.policy_file, observation_names(), action_names(c.action));
    ControllerSpec with = c;
    // The action mapping the policy was trained with.
    with.action.target_span = p.action_spec().value("target_span", c.action.target_span);
    with.action.headroom_w = p.action_spec().value("headroom_w", c.action.headroom_w);
    return std::make_unique<Learned>(with, std::move(p));
  }
  std::string list;
  for (const auto& n : controller_names()) list += (list.empty() ? "" : ", ") + n;
  bad("name", "unknown controller \"" + c.name + "\" (expected one of: " + list + ")");
  return nullptr;
}

}  // namespace dvfs
