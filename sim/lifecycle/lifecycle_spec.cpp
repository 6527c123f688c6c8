#include "sim/lifecycle/lifecycle_spec.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace dvfs {

const StorageSpec& NodeSpec::store(const std::string& name, const std::string& f, const std::string& field) const {
  for (const StorageSpec& s : storage)
    if (s.name == name) return s;
  std::string names;
  for (const StorageSpec& s : storage) names += (names.empty() ? "" : ", ") + s.name;
  throw InputError(f, field, "expected a storage of the node (" + names + "), got \"" + name + "\"");
}

namespace {

// A number in [0, hi] (`positive`: in (0, hi]); the limit named in the message (sim/core/limits.hpp).
double bounded(const JsonReader& r, const char* key, double hi, bool positive = false) {
  const double v = positive ? r.positive(key) : r.non_negative(key);
  if (v > hi) {
    std::ostringstream os;
    os << "expected at most " << hi << " (a lifecycle limit, README \"Limits and bad input\"), got " << v;
    throw InputError(r.file(), r.field(key), os.str());
  }
  return v;
}

// A count of files or inodes: a whole number in [0, hi] (1.5 files has no meaning; it was read as 1.5 before).
double file_count(const JsonReader& r, const char* key, double hi) {
  const double v = bounded(r, key, hi);
  if (v != std::floor(v)) {
    std::ostringstream os;
    os << "expected a whole number of files or inodes, got " << v;
    throw InputError(r.file(), r.field(key), os.str());
  }
  return v;
}

double cpu_ghz(const JsonReader& r, const char* key) { return r.number_in(key, kMinCpuGhz, kMaxCpuGhz, "GHz"); }

CpuPstate parse_pstate(const JsonReader& r) {
  r.only_keys({"ghz", "idle_w", "one_core_w", "all_cores_w"});
  CpuPstate p{cpu_ghz(r, "ghz"), bounded(r, "idle_w", kMaxLifecycleUnitCost), bounded(r, "one_core_w", kMaxLifecycleUnitCost),
              bounded(r, "all_cores_w", kMaxLifecycleUnitCost)};
  if (p.one_core_w < p.idle_w || p.all_cores_w < p.one_core_w)
    throw InputError(r.file(), r.field("all_cores_w"), "expected idle_w <= one_core_w <= all_cores_w");
  return p;
}

StorageSpec parse_storage(const JsonReader& r) {
  r.only_keys({"name", "read_bps", "write_bps", "sync_s", "file_open_s", "remote", "link_bps", "link_latency_s", "idle_w", "j_per_byte",
               "link_j_per_byte", "write_behind", "writeback_core_s_per_file", "sync_s_per_file", "recent_free_scan_core_s",
               "inodes_per_group", "note"});
  StorageSpec s;
  s.name = r.string("name");
  // at least 1 byte per second: below it a copy's time runs to inf
  auto bandwidth = [&](const char* key) { return r.number_in(key, 1, kMaxLifecycleBandwidth, "bytes per second"); };
  s.read_bps = bandwidth("read_bps");
  s.write_bps = bandwidth("write_bps");
  s.sync_s = r.has("sync_s") ? bounded(r, "sync_s", kMaxLifecycleSeconds) : 0;
  s.file_open_s = r.has("file_open_s") ? bounded(r, "file_open_s", kMaxPerFileCoreS) : 0;
  s.remote = r.boolean_or("remote", false);
  // A disk of the node has no link: its link_bps and link_latency_s were ignored while its link_j_per_byte was charged.
  if (!s.remote)
    for (const char* key : {"link_bps", "link_latency_s", "link_j_per_byte"})
      if (r.has(key)) r.fail(key, "expected only on a remote storage (\"remote\": true): a disk of the node has no link");
  if (s.remote) {
    s.link_bps = bandwidth("link_bps");
    s.link_latency_s = bounded(r, "link_latency_s", kMaxLifecycleSeconds);
  }
  s.idle_w = r.has("idle_w") ? bounded(r, "idle_w", kMaxLifecycleUnitCost) : 0;
  s.j_per_byte = r.has("j_per_byte") ? bounded(r, "j_per_byte", kMaxLifecycleUnitCost) : 0;
  s.link_j_per_byte = r.has("link_j_per_byte") ? bounded(r, "link_j_per_byte", kMaxLifecycleUnitCost) : 0;
  s.write_behind = r.boolean_or("write_behind", false);
  s.writeback_core_s_per_file = r.has("writeback_core_s_per_file") ? bounded(r, "writeback_core_s_per_file", kMaxPerFileCoreS) : 0;
  s.sync_s_per_file = r.has("sync_s_per_file") ? r.non_negative("sync_s_per_file") : 0;
  if (s.sync_s_per_file > 1) r.fail("sync_s_per_file", "expected at most 1 s per file");
  if (s.sync_s_per_file > 0 && !s.write_behind) r.fail("sync_s_per_file", "expected only with write_behind (the sync's time per file)");
  s.recent_free_scan_core_s = r.has("recent_free_scan_core_s") ? bounded(r, "recent_free_scan_core_s", kMaxPerFileCoreS) : 0;
  s.inodes_per_group = r.has("inodes_per_group") ? r.number_in("inodes_per_group", 1, kMaxInodesPerGroup, "inodes") : 0;
  if (s.recent_free_scan_core_s > 0 && s.inodes_per_group <= 0)
    r.fail("inodes_per_group", "expected > 0 inodes per block group with recent_free_scan_core_s");
  if (s.write_behind && s.remote) throw InputError(r.file(), r.field("write_behind"), "expected write_behind only on a local disk");
  if (r.has("writeback_core_s_per_file") && !s.write_behind)  // only a write-behind disk's sync runs the writeback
    r.fail("writeback_core_s_per_file", "expected only with write_behind (the kernel's writeback CPU at the sync)");
  return s;
}

LifecyclePhase parse_phase(const JsonReader& r) {
  LifecyclePhase p;
  p.kind = r.string("kind");
  // Each kind reads its own keys: a key of another kind (a checkpoint's `steps`) was ignored before.
  if (p.kind == "staging")
    r.only_keys({"name", "kind", "bytes", "files", "from", "to", "core_s_per_gb", "core_s_per_file", "core_s_per_file_growth",
                 "recently_freed_inodes", "reused_before", "streams", "sync_bytes", "sync_files", "note"});
  else if (p.kind == "checkpoint")
    r.only_keys({"name", "kind", "bytes", "files", "to", "core_s_per_gb", "core_s_per_file", "core_s_per_file_growth",
                 "recently_freed_inodes", "reused_before", "streams", "sync_bytes", "sync_files", "note"});
  else if (p.kind == "train" || p.kind == "validation")
    r.only_keys({"name", "kind", "steps", "samples_per_step", "read_bytes_per_step", "read_from", "workers", "prefetch",
                 "core_s_per_sample", "main_core_busy", "host_step_s", "loader_start_s", "gpu_step_s", "gpu_step_w",
                 "gpu_step_j", "trace", "note"});
  else if (p.kind == "idle")
    r.only_keys({"name", "kind", "seconds", "note"});
  p.name = r.string("name");
  if (p.kind == "staging" || p.kind == "checkpoint") {
    p.bytes = bounded(r, "bytes", kMaxLifecycleBytes);
    p.files = r.has("files") ? file_count(r, "files", kMaxLifecycleFiles) : 1;
    if (p.kind == "staging") p.from = r.string("from");
    p.to = r.string("to");
    p.core_s_per_gb = r.has("core_s_per_gb") ? bounded(r, "core_s_per_gb", kMaxLifecycleUnitCost) : 0;
    p.core_s_per_file = r.has("core_s_per_file") ? bounded(r, "core_s_per_file", kMaxLifecycleUnitCost) : 0;
    p.core_s_per_file_growth = r.has("core_s_per_file_growth") ? bounded(r, "core_s_per_file_growth", kMaxLifecycleUnitCost) : 0;
    p.recently_freed_inodes = r.has("recently_freed_inodes") ? file_count(r, "recently_freed_inodes", kMaxLifecycleFiles) : 0;
    p.reused_before = r.has("reused_before") ? file_count(r, "reused_before", kMaxLifecycleFiles) : 0;
    p.streams = static_cast<int>(r.integer_in_or("streams", 1, 256, 1));
    p.sync_bytes = r.has("sync_bytes") ? bounded(r, "sync_bytes", kMaxLifecycleBytes) : 0;
    p.sync_files = r.has("sync_files") ? file_count(r, "sync_files", kMaxLifecycleFiles) : 0;
  } else if (p.kind == "train" || p.kind == "validation") {
    const long steps = r.integer_in("steps", 1, std::numeric_limits<long>::max());
    if (steps > kMaxLifecyclePhaseSteps)  // 1e6 steps ran for minutes (limits.hpp)
      r.fail("steps", "expected at most " + std::to_string(kMaxLifecyclePhaseSteps) +
                          " steps in a phase (a lifecycle limit, README \"Limits and bad input\"; split a longer run into phases), got " +
                          std::to_string(steps));
    p.steps = static_cast<int>(steps);
    p.samples_per_step = r.has("samples_per_step") ? bounded(r, "samples_per_step", kMaxLifecycleUnitCost, true) : 1;
    p.read_bytes_per_step = r.has("read_bytes_per_step") ? bounded(r, "read_bytes_per_step", kMaxLifecycleBytes) : 0;
    p.read_from = r.string_or("read_from", "local");
    p.workers = static_cast<int>(r.integer_in_or("workers", 0, 1024, 0));
    p.prefetch = static_cast<int>(r.integer_in_or("prefetch", 1, 1024, 2));
    p.core_s_per_sample = r.has("core_s_per_sample") ? bounded(r, "core_s_per_sample", kMaxLifecycleUnitCost) : 0;
    p.main_core_busy = r.has("main_core_busy") ? r.non_negative("main_core_busy") : 0;
    if (p.main_core_busy > 1) throw InputError(r.file(), r.field("main_core_busy"), "expected a share of one core in [0, 1]");
    p.host_step_s = r.has("host_step_s") ? bounded(r, "host_step_s", kMaxLifecycleSeconds) : 0;
    p.loader_start_s = r.has("loader_start_s") ? bounded(r, "loader_start_s", kMaxLifecycleSeconds) : 0;
    p.trace = r.string_or("trace", "");
    if (p.trace.empty()) {
      p.step.gpu_busy_s = bounded(r, "gpu_step_s", kMaxLifecycleSeconds, true);
      if (r.has("gpu_step_j") && r.has("gpu_step_w"))
        throw InputError(r.file(), r.field("gpu_step_w"), "expected either gpu_step_w (mean power) or gpu_step_j (energy per step), not both");
      if (r.has("gpu_step_j")) p.step.gpu_busy_j = bounded(r, "gpu_step_j", kMaxLifecycleUnitCost);
      else p.step.gpu_busy_w = bounded(r, "gpu_step_w", kMaxLifecycleUnitCost);
    } else {
      for (const char* key : {"gpu_step_s", "gpu_step_w", "gpu_step_j"})
        if (r.has(key)) throw InputError(r.file(), r.field(key), "expected either `trace` (the steps replayed) or gpu_step_s/_w/_j, not both");
    }
  } else if (p.kind == "idle") {
    p.seconds = bounded(r, "seconds", kMaxLifecycleSeconds);
  } else {
    throw InputError(r.file(), r.field("kind"), "expected staging, train, validation, checkpoint or idle, got \"" + p.kind + "\"");
  }
  return p;
}

LifecyclePolicy parse_policy(const JsonReader& r, int pstates) {
  r.only_keys({"name", "gpu_sm_mhz_input_bound", "cpu_pstate", "staging", "dataset_on", "note"});
  LifecyclePolicy p;
  p.name = r.string("name");
  p.gpu_sm_mhz_input_bound = r.has("gpu_sm_mhz_input_bound") ? r.positive("gpu_sm_mhz_input_bound") : 0;
  p.cpu_pstate = static_cast<int>(r.integer_in_or("cpu_pstate", 0, pstates - 1, 0));
  p.staging = r.string_or("staging", "");
  p.dataset_on = r.string_or("dataset_on", "");
  if (!p.staging.empty() && p.staging != "skip")
    throw InputError(r.file(), r.field("staging"), "expected \"skip\" (loaders read the staging source) or leave it out");
  return p;
}

WarmUp parse_warmup(const JsonReader& r) {
  r.only_keys({"s", "gpu_w", "core_s", "note"});
  return {bounded(r, "s", kMaxLifecycleSeconds), bounded(r, "gpu_w", kMaxLifecycleUnitCost),
          r.has("core_s") ? bounded(r, "core_s", kMaxLifecycleSeconds) : 0};
}

}  // namespace

double recent_free_inodes_scanned(double n, double k, double per_group) {
  if (n <= 0 || per_group <= 0) return 0;
  // Files placed in a group whose `left` inodes are free scan left + (left - 1) + ...: k's partial group first, then
  // whole groups (each g (g + 1) / 2), then the last partial one; closed form, so a tiny group size cannot loop long.
  auto group = [](double take, double left) { return take * left - take * (take - 1) / 2; };
  const double first_left = per_group - std::fmod(k, per_group);
  const double first = std::min(n, first_left);
  double scanned = group(first, first_left);
  n -= first;
  const double whole = std::floor(n / per_group);
  scanned += whole * group(per_group, per_group);
  n -= whole * per_group;
  return scanned + group(n, per_group);
}

double staging_copy_core_s(const LifecyclePhase& ph, const StorageSpec& dst) {
  const double files = ph.files;
  const double reused = std::min(files, std::max(0.0, ph.recently_freed_inodes - ph.reused_before));
  return ph.core_s_per_gb * ph.bytes / 1e9 + ph.core_s_per_file * files + ph.core_s_per_file_growth * files * (files - 1) / 2 +
         dst.recent_free_scan_core_s * recent_free_inodes_scanned(reused, ph.reused_before, dst.inodes_per_group);
}

namespace {

// Each field of a copy is bounded, but not what they make together: the CPU work of its files (per file, folder
// growth, inodes scanned) and of the kernel's writeback must stay within the lifecycle's time limit on the node.
void check_copy_work(const LifecyclePhase& ph, const StorageSpec& dst, const JsonReader& r) {
  const double core_s = staging_copy_core_s(ph, dst) + dst.writeback_core_s_per_file * (ph.files + ph.sync_files);
  if (core_s <= kMaxLifecycleSeconds) return;
  std::ostringstream os;
  os << "expected a copy whose CPU work is at most " << kMaxLifecycleSeconds << " core-seconds (a lifecycle limit, README \"Limits and "
     << "bad input\"); its bytes, files and per-file costs with storage \"" << dst.name << "\" come to " << core_s;
  throw InputError(r.file(), r.field("files"), os.str());
}

// Every phase's steps are simulated once for the job as described and once per policy: beyond
// kMaxLifecycleSimulatedSteps in all the run takes minutes. Names the phase whose steps cross the limit.
void check_simulated_steps(const LifecycleSpec& s, const JsonReader& r) {
  const double runs = 1.0 + static_cast<double>(s.policies.size());
  double steps = 0;
  for (std::size_t i = 0; i < s.phases.size(); ++i) {
    steps += s.phases[i].steps;
    if (steps * runs <= kMaxLifecycleSimulatedSteps) continue;
    std::ostringstream os;
    os << "expected at most " << kMaxLifecycleSimulatedSteps << " steps simulated in all (a lifecycle limit, README \"Limits and bad "
       << "input\"): the phases' steps up to this one, " << steps << ", run " << runs << " times (the job and its " << s.policies.size()
       << " policies)";
    throw InputError(r.file(), r.child("phases").at(i).field("steps"), os.str());
  }
}

// What the phases and policies say of the scenario's GPU, against its model and the node: a policy's SM clock one the
// GPU has (99999 MHz on a given step was extrapolated to -206 % savings; replayed steps refused it); a node's idle
// power below the board's limit; a given step's GPU power from the node's idle up, its energy at most the board's
// limit over the step (the longer of gpu_step_s and host_step_s: gpu_step_w is energy per busy second, and a replayed
// step's counts the short idle between its kernels, so it may exceed the limit over the busy time alone); a warm-up's
// power from the node's idle to the limit. gpu_step_w 5000 W or 0 W and a node idle of 900 W on a 700 W H200 ran.
void check_against_gpu(const LifecycleSpec& s, const GpuModel& m, const JsonReader& r) {
  const double cap = m.power_cap_w(), idle = s.node.gpu_idle_w;
  auto watts = [](double w) {
    std::ostringstream os;
    os << w << " W";
    return os.str();
  };
  if (idle >= cap)
    throw InputError(s.node.file, "gpu_idle_w", "expected an idle power below the board limit of the scenario's GPU (" + m.name() + ": " +
                                                    watts(cap) + ", " + s.file + " lifecycle.gpu), got " + watts(idle));
  const JsonReader ph = r.child("phases");
  for (std::size_t i = 0; i < s.phases.size(); ++i) {
    const LifecyclePhase& p = s.phases[i];
    if (!p.trace.empty() || (p.kind != "train" && p.kind != "validation")) continue;
    const JsonReader pr = ph.at(i);
    const bool given_j = pr.has("gpu_step_j");
    const char* key = given_j ? "gpu_step_j" : "gpu_step_w";
    const double j = given_j ? p.step.gpu_busy_j : p.step.gpu_busy_w * p.step.gpu_busy_s;
    const double w = j / p.step.gpu_busy_s, step_s = std::max(p.step.gpu_busy_s, p.host_step_s);
    std::ostringstream os;
    if (w < idle || !(w > 0)) {
      os << "expected a busy GPU's mean power of at least the node's GPU idle power (" << idle << " W, " << s.node.file
         << " gpu_idle_w) and above 0, got " << w << " W" << (given_j ? " (gpu_step_j / gpu_step_s)" : "");
      pr.fail(key, os.str());
    }
    if (j > cap * step_s * (1 + 1e-12)) {
      os << "expected a step's GPU energy of at most " << m.name() << "'s board limit over the step (" << cap << " W x " << step_s
         << " s, the longer of gpu_step_s and host_step_s = " << cap * step_s << " J), got " << j << " J";
      pr.fail(key, os.str());
    }
  }
  for (const auto& [kind, w] : s.first_occurrence)
    if (w.s > 0 && (w.gpu_w < idle || w.gpu_w > cap)) {
      std::ostringstream os;
      os << "expected a GPU power from the node's GPU idle power (" << idle << " W) to " << m.name() << "'s board limit (" << cap
         << " W), got " << w.gpu_w << " W";
      throw InputError(s.file, "lifecycle.first_occurrence." + kind + ".gpu_w", os.str());
    }
  if (!r.has("policies")) return;
  const JsonReader po = r.child("policies");
  for (std::size_t i = 0; i < s.policies.size(); ++i)
    if (s.policies[i].gpu_sm_mhz_input_bound > 0)
      m.sm_index_or_throw(s.policies[i].gpu_sm_mhz_input_bound, s.file, po.at(i).field("gpu_sm_mhz_input_bound"));
}

// A policy is a re-run of the job with a change: one that changes nothing ({"name": "nothing"}, dataset_on or
// staging: "skip" without a staging phase, a GPU clock without steps) ran and reported its zero savings as a result.
void check_policy_changes(const LifecycleSpec& s, const LifecyclePolicy& p, const JsonReader& r) {
  if (p.gpu_sm_mhz_input_bound <= 0 && p.cpu_pstate == 0 && p.staging.empty() && p.dataset_on.empty())
    throw InputError(r.file(), r.path(), "expected a policy that changes something: gpu_sm_mhz_input_bound, cpu_pstate > 0, "
                                         "staging: \"skip\" or dataset_on");
  bool staging = false, stepped = false, other_source = false;
  for (const LifecyclePhase& ph : s.phases) {
    staging = staging || ph.kind == "staging";
    stepped = stepped || ph.kind == "train" || ph.kind == "validation";
    other_source = other_source || (ph.kind == "staging" && ph.from != p.dataset_on);
  }
  if (!p.staging.empty() && !staging) r.fail("staging", "expected a staging phase to skip (the job has none)");
  if (!p.dataset_on.empty() && !staging) r.fail("dataset_on", "expected a staging phase whose source it sets (the job has none)");
  if (!p.dataset_on.empty() && !other_source)
    r.fail("dataset_on", "expected a storage other than the staging phases' source (\"" + p.dataset_on + "\" already is: it changes nothing)");
  if (p.gpu_sm_mhz_input_bound > 0 && !stepped)
    r.fail("gpu_sm_mhz_input_bound", "expected a train or validation phase whose GPU clock it sets (the job has none)");
}

}  // namespace

NodeSpec parse_node_spec(const Json& doc, const std::string& file) {
  JsonReader r(doc, file, "");
  r.only_keys({"name", "description", "cores", "cpu_pstates", "storage", "gpu_idle_w", "gpu_d2h_bps", "provenance"});
  NodeSpec n;
  n.file = file;
  n.cores = static_cast<int>(r.integer_in("cores", 1, 4096));
  JsonReader ps = r.child("cpu_pstates");
  if (!ps.is_array() || ps.size() == 0) throw InputError(file, r.field("cpu_pstates"), "expected a non-empty array, fastest first");
  for (std::size_t i = 0; i < ps.size(); ++i) {
    n.pstates.push_back(parse_pstate(ps.at(i)));
    if (i > 0 && n.pstates[i].ghz > n.pstates[i - 1].ghz)
      throw InputError(file, ps.at(i).field("ghz"), "expected the power states fastest first");
  }
  JsonReader st = r.child("storage");
  if (!st.is_array() || st.size() == 0) throw InputError(file, r.field("storage"), "expected a non-empty array");
  for (std::size_t i = 0; i < st.size(); ++i) {
    n.storage.push_back(parse_storage(st.at(i)));
    for (std::size_t j = 0; j < i; ++j)
      if (n.storage[j].name == n.storage[i].name)
        throw InputError(file, st.at(i).field("name"), "expected a name no other storage has (\"" + n.storage[i].name + "\" is storage[" +
                                                          std::to_string(j) + "]'s)");
  }
  n.gpu_idle_w = bounded(r, "gpu_idle_w", kMaxModelPowerW);  // a GPU model's limit; below the scenario's GPU's cap (parse_lifecycle)
  n.gpu_d2h_bps = r.has("gpu_d2h_bps") ? r.number_in("gpu_d2h_bps", 1, kMaxLifecycleBandwidth, "bytes per second") : 0;
  n.provenance = r.raw("provenance");
  return n;
}

LifecycleSpec parse_lifecycle(const Json& doc, const std::string& file, const std::string& base_dir) {
  JsonReader top(doc, file, "");
  JsonReader r = top.child("lifecycle");
  r.only_keys({"node", "gpu", "recorded_cpu_ghz", "phases", "policies", "first_occurrence", "note"});
  LifecycleSpec s;
  s.file = file;
  const std::string node_path = join_path(base_dir, r.string("node"));
  if (!file_exists(node_path)) throw InputError(file, r.field("node"), "no such node model file: " + node_path);
  s.node = parse_node_spec(read_json_file(node_path), node_path);
  s.gpu = r.string_or("gpu", "h200");
  s.recorded_cpu_ghz = r.has("recorded_cpu_ghz") ? cpu_ghz(r, "recorded_cpu_ghz") : s.node.pstates.front().ghz;
  JsonReader ph = r.child("phases");
  if (!ph.is_array() || ph.size() == 0) throw InputError(file, r.field("phases"), "expected a non-empty array of phases");
  for (std::size_t i = 0; i < ph.size(); ++i) {
    LifecyclePhase p = parse_phase(ph.at(i));
    const JsonReader pr = ph.at(i);
    if (!p.from.empty()) s.node.store(p.from, file, pr.field("from"));
    if (!p.to.empty()) s.node.store(p.to, file, pr.field("to"));
    if (p.kind == "train" || p.kind == "validation") s.node.store(p.read_from, file, pr.field("read_from"));
    if (!p.trace.empty()) p.trace = join_path(base_dir, p.trace);
    if (!p.to.empty()) check_copy_work(p, s.node.store(p.to, file, pr.field("to")), pr);
    // Only a write-behind disk's sync writes other dirty data; elsewhere the copy writes as it goes and they were ignored.
    for (const char* key : {"sync_bytes", "sync_files"})
      if (pr.has(key) && !s.node.store(p.to, file, pr.field("to")).write_behind)
        pr.fail(key, "expected only for a copy to a write_behind disk (storage \"" + p.to + "\" writes as the copy goes: its sync has no "
                     "other dirty data to write)");
    s.phases.push_back(p);
  }
  if (r.has("first_occurrence")) {
    JsonReader fo = r.child("first_occurrence");
    fo.only_keys({"train", "validation", "note"});
    for (const char* kind : {"train", "validation"})
      if (fo.has(kind)) s.first_occurrence[kind] = parse_warmup(fo.child(kind));
  }
  if (r.has("policies")) {
    JsonReader po = r.child("policies");
    if (!po.is_array()) throw InputError(file, r.field("policies"), "expected an array");
    for (std::size_t i = 0; i < po.size(); ++i) {
      s.policies.push_back(parse_policy(po.at(i), static_cast<int>(s.node.pstates.size())));
      if (!s.policies.back().dataset_on.empty()) s.node.store(s.policies.back().dataset_on, file, po.at(i).field("dataset_on"));
      check_policy_changes(s, s.policies.back(), po.at(i));
    }
  }
  check_simulated_steps(s, r);
  check_against_gpu(s, load_gpu_model(s.gpu, file, r.field("gpu")), r);
  return s;
}

}  // namespace dvfs
