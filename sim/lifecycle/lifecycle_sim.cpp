#include "sim/lifecycle/lifecycle_sim.hpp"

#include "sim/network/simgrid_world.hpp"

#include <simgrid/plugins/energy.h>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <sstream>

namespace sg4 = simgrid::s4u;

namespace dvfs {
namespace {

struct Platform {
  sg4::Host* node = nullptr;
  std::map<std::string, sg4::Disk*> disks;   // by storage name
  std::map<std::string, sg4::Host*> server;  // remote storage: its file server host
};

std::string wattage(const NodeSpec& n) {
  std::ostringstream w;
  w.precision(17);
  for (std::size_t i = 0; i < n.pstates.size(); ++i)
    w << (i ? ", " : "") << n.pstates[i].idle_w << ":" << n.pstates[i].one_core_w << ":" << n.pstates[i].all_cores_w;
  return w.str();
}

Platform build(const NodeSpec& n, int pstate) {
  Platform p;
  auto* zone = sg4::create_full_zone("lifecycle");
  std::vector<double> speeds;
  for (const CpuPstate& s : n.pstates) speeds.push_back(s.ghz * 1e9);
  p.node = zone->create_host("node", speeds)->set_core_count(n.cores);
  p.node->set_property("wattage_per_state", wattage(n));
  p.node->set_property("wattage_off", "0");
  p.node->seal();
  for (const StorageSpec& s : n.storage) {
    if (!s.remote) {
      p.disks[s.name] = p.node->create_disk(s.name, s.read_bps, s.write_bps)->seal();
      continue;
    }
    sg4::Host* srv = zone->create_host("server-" + s.name, 1e9)->seal();
    p.disks[s.name] = srv->create_disk(s.name, s.read_bps, s.write_bps)->seal();
    const sg4::Link* l = zone->create_link("link-" + s.name, s.link_bps)->set_latency(s.link_latency_s)->seal();
    zone->add_route(p.node->get_netpoint(), srv->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(l)}, true);
    p.server[s.name] = srv;
  }
  zone->seal();
  p.node->set_pstate(pstate);
  return p;
}

// Per-phase tallies the actors add to.
struct Tally {
  double gpu_busy_s = 0, gpu_busy_j = 0, data_wait_s = 0, cycles = 0, read = 0, written = 0, network = 0;
  // Bytes by storage name, on its device (read + written) and over its link: each is charged at that storage's rates
  std::map<std::string, double> device_bytes, link_bytes;
  double gpu_other_s = 0, gpu_other_j = 0;  // warm-up and device-to-host copies: GPU time at their own power
};

class Runner {
 public:
  Runner(const NodeSpec& n, Platform& p, double recorded_ghz) : n_(n), p_(p), recorded_ghz_(recorded_ghz) {}

  // The tallies of `bytes` read from / written to storage `name` (its device's energy per byte) and, for a file
  // server, moved over its link (the link's energy per byte).
  void count_read(const std::string& name, double bytes, Tally& t) {
    const StorageSpec& s = n_.store(name, "", "");
    t.read += bytes;
    t.device_bytes[name] += bytes;
    if (s.remote) count_link(s, bytes, t);
  }
  void count_written(const std::string& name, double bytes, Tally& t) {
    const StorageSpec& s = n_.store(name, "", "");
    t.written += bytes;
    t.device_bytes[name] += bytes;
    if (s.remote) count_link(s, bytes, t);
  }
  static void count_link(const StorageSpec& s, double bytes, Tally& t) {
    t.network += bytes;
    t.link_bytes[s.name] += bytes;
  }

  // Reads `bytes` from storage `name` into the node (a disk read, then the link for remote storage).
  void read(const std::string& name, double bytes, Tally& t) {
    if (bytes <= 0) return;
    p_.disks.at(name)->read(static_cast<sg_size_t>(bytes));
    if (auto it = p_.server.find(name); it != p_.server.end()) sg4::Comm::sendto(it->second, p_.node, static_cast<std::uint64_t>(bytes));
    count_read(name, bytes, t);
  }

  void write(const std::string& name, double bytes, Tally& t) {
    if (bytes <= 0) return;
    if (auto it = p_.server.find(name); it != p_.server.end()) sg4::Comm::sendto(p_.node, it->second, static_cast<std::uint64_t>(bytes));
    p_.disks.at(name)->write(static_cast<sg_size_t>(bytes));
    count_written(name, bytes, t);
  }

  // CPU work of `core_s` seconds at the recorded clock, on one core of the node.
  void compute(double core_s, Tally& t) {
    if (core_s <= 0) return;
    const double cycles = core_s * recorded_ghz_ * 1e9;
    sg4::this_actor::execute(cycles);
    t.cycles += cycles;
  }

  // A streaming copy (read-ahead and write-behind): its CPU work, the source reads, the link and the
  // target writes run at once, each stream moving its share; the slowest stage sets the time.
  void copy(const LifecyclePhase& ph, const std::string& to, Tally& t) {
    const StorageSpec& dst = n_.store(to, "", "");
    const int streams = std::max(1, ph.streams);
    std::vector<sg4::ActorPtr> actors;
    const double copy_core_s = staging_copy_core_s(ph, dst) / streams;  // each stream its share of the process's CPU
    for (int s = 0; s < streams; ++s) {
      actors.push_back(sg4::Actor::create("copy" + std::to_string(s), p_.node, [this, &ph, &to, &t, &dst, streams, copy_core_s] {
        const double bytes = ph.bytes / streams, files = ph.files / streams;
        const auto size = static_cast<sg_size_t>(bytes);
        std::vector<sg4::ActivityPtr> parts;
        if (const double core_s = copy_core_s; core_s > 0) {
          t.cycles += core_s * recorded_ghz_ * 1e9;
          parts.push_back(sg4::this_actor::exec_async(core_s * recorded_ghz_ * 1e9));
        }
        if (!ph.from.empty()) {
          if (const double open_s = n_.store(ph.from, "", "").file_open_s * files; open_s > 0) sg4::this_actor::sleep_for(open_s);
        }
        if (bytes > 0 && !ph.from.empty()) {
          parts.push_back(p_.disks.at(ph.from)->read_async(size));
          if (auto it = p_.server.find(ph.from); it != p_.server.end()) parts.push_back(sg4::Comm::sendto_async(it->second, p_.node, size));
          count_read(ph.from, bytes, t);
        }
        if (bytes > 0 && !dst.write_behind) {
          parts.push_back(p_.disks.at(to)->write_async(size));
          if (auto it = p_.server.find(to); it != p_.server.end()) parts.push_back(sg4::Comm::sendto_async(p_.node, it->second, size));
          count_written(to, bytes, t);
        }
        for (auto& a : parts) a->wait();
      }));
    }
    for (auto& a : actors) a->join();
    if (dst.write_behind) flush(ph, to, t);
    if (dst.sync_s > 0) sg4::this_actor::sleep_for(dst.sync_s);
  }

  // The sync of a write-behind disk: every dirty byte of the phase (its copy and `sync_bytes` of other files) is
  // written at the disk's rate, and each file's metadata takes the disk `sync_s_per_file` (as that many bytes' time
  // on the disk), while the kernel's writeback CPU runs beside it, on other cores than the waiting process: spread
  // over as many as it needs to keep up with the disk (flusher threads run on every CPU with work), at most the
  // node's; the longer of the two sets the time.
  void flush(const LifecyclePhase& ph, const std::string& to, Tally& t) {
    const StorageSpec& dst = n_.store(to, "", "");
    const double bytes = ph.bytes + ph.sync_bytes, files = ph.files + ph.sync_files;
    const double metadata_bytes = dst.sync_s_per_file * files * dst.write_bps;  // the disk's time per file, as bytes
    std::vector<sg4::ActivityPtr> parts;
    if (bytes + metadata_bytes > 0) {
      parts.push_back(p_.disks.at(to)->write_async(static_cast<sg_size_t>(bytes + metadata_bytes)));
      count_written(to, bytes, t);
    }
    if (const double core_s = dst.writeback_core_s_per_file * files; core_s > 0) {
      const double disk_s = (bytes + metadata_bytes) / dst.write_bps, speed = sg4::this_actor::get_host()->get_speed();
      const double wall_s = core_s * recorded_ghz_ * 1e9 / speed;
      const int cores = std::clamp(static_cast<int>(std::ceil(wall_s / std::max(disk_s, 1e-12))), 1, std::max(1, n_.cores - 1));
      t.cycles += core_s * recorded_ghz_ * 1e9;
      for (int c = 0; c < cores; ++c) parts.push_back(sg4::this_actor::exec_async(core_s * recorded_ghz_ * 1e9 / cores));
    }
    for (auto& a : parts) a->wait();
  }

  // The one-time costs of a first occurrence: the trainer holds its first step `s` longer (loaders keep filling
  // their prefetch slots), the GPU draws `gpu_w` and the training process does `core_s` of CPU work meanwhile.
  void warm_up(const WarmUp& w, Tally& t) {
    if (w.s <= 0) return;
    sg4::ExecPtr work;
    if (w.core_s > 0) {
      work = sg4::this_actor::exec_async(w.core_s * recorded_ghz_ * 1e9);
      t.cycles += w.core_s * recorded_ghz_ * 1e9;
    }
    sg4::this_actor::sleep_for(w.s);
    if (work) work->wait();
    t.gpu_other_s += w.s;
    t.gpu_other_j += w.gpu_w * w.s;
  }

  void steps(const SimPhase& sp, Tally& t) {
    const LifecyclePhase& ph = sp.phase;
    const int workers = std::max(1, ph.workers);
    auto ready = std::make_shared<std::vector<char>>(ph.steps, 0);
    auto mutex = sg4::Mutex::create();
    auto cv = sg4::ConditionVariable::create();
    auto slots = sg4::Semaphore::create(workers * std::max(1, ph.prefetch));
    std::vector<sg4::ActorPtr> actors;
    // The training process's own CPU use: a bounded execution on one core for the whole phase.
    sg4::ExecPtr main_process;
    const double speed = sg4::this_actor::get_host()->get_speed();
    if (ph.main_core_busy > 0) {
      main_process = sg4::this_actor::exec_init(1e300)->set_bound(ph.main_core_busy * speed);
      main_process->start();
    }
    const double phase_t0 = sg4::Engine::get_clock();
    if (ph.loader_start_s > 0) sg4::this_actor::sleep_for(ph.loader_start_s);  // no worker exists before it
    for (int w = 0; w < workers; ++w) {
      actors.push_back(sg4::Actor::create("loader" + std::to_string(w), p_.node, [=, &ph, &t] {
        for (int b = w; b < ph.steps; b += workers) {
          slots->acquire();
          if (const double open_s = n_.store(ph.read_from, "", "").file_open_s * ph.samples_per_step; open_s > 0)
            sg4::this_actor::sleep_for(open_s);
          read(ph.read_from, ph.read_bytes_per_step, t);
          compute(ph.core_s_per_sample * ph.samples_per_step, t);
          std::unique_lock lock(*mutex);
          (*ready)[b] = 1;
          cv->notify_all();
        }
      }));
    }
    for (int b = 0; b < ph.steps; ++b) {
      const double t0 = sg4::Engine::get_clock();
      {
        std::unique_lock lock(*mutex);
        while (!(*ready)[b]) cv->wait(lock);
      }
      t.data_wait_s += sg4::Engine::get_clock() - t0;
      slots->release();
      if (b == 0) warm_up(ph.warmup, t);
      // The step takes the GPU's time or the host's (launches, Python), whichever is longer; at a lower CPU clock
      // only the host time beyond the GPU's stretches (the rest is spent waiting for the GPU).
      const double gpu_s = ph.step.gpu_busy_s;
      const double ratio = recorded_ghz_ / (sg4::this_actor::get_host()->get_speed() / 1e9);
      const double host_s = ph.host_step_s <= gpu_s ? ph.host_step_s : gpu_s + (ph.host_step_s - gpu_s) * ratio;
      sg4::this_actor::sleep_for(std::max(gpu_s, host_s));
      t.gpu_busy_s += ph.step.gpu_busy_s;
      t.gpu_busy_j += ph.step.gpu_busy_j > 0 ? ph.step.gpu_busy_j : ph.step.gpu_busy_w * ph.step.gpu_busy_s;
    }
    for (auto& a : actors) a->join();
    if (main_process) {
      t.cycles += ph.main_core_busy * speed * (sg4::Engine::get_clock() - phase_t0);
      main_process->cancel();
    }
  }

  // A checkpoint's tensors reach the host before they are serialised: a device-to-host copy at the node's rate.
  void copy_to_host(const SimPhase& sp, Tally& t) {
    if (n_.gpu_d2h_bps <= 0 || sp.phase.bytes <= 0) return;
    const double s = sp.phase.bytes / n_.gpu_d2h_bps;
    sg4::this_actor::sleep_for(s);
    t.gpu_other_s += s;
    t.gpu_other_j += sp.gpu_copy_w * s;
  }

  void run(const SimPhase& sp, Tally& t) {
    const LifecyclePhase& ph = sp.phase;
    if (ph.kind == "checkpoint") copy_to_host(sp, t);
    if (ph.kind == "staging" || ph.kind == "checkpoint") copy(ph, ph.to, t);
    else if (ph.kind == "train" || ph.kind == "validation") steps(sp, t);
    else sg4::this_actor::sleep_for(ph.seconds);
  }

 private:
  const NodeSpec& n_;
  Platform& p_;
  double recorded_ghz_;
};

PhaseOutcome outcome(const NodeSpec& n, const SimPhase& sp, const Tally& t, double time_s, double cpu_j, double ghz) {
  PhaseOutcome o;
  o.name = sp.phase.name;
  o.kind = sp.phase.kind;
  o.time_s = time_s;
  o.cpu_j = cpu_j;
  o.gpu_busy_s = t.gpu_busy_s;
  o.gpu_j = t.gpu_busy_j + t.gpu_other_j + sp.gpu_idle_w * std::max(0.0, time_s - t.gpu_busy_s - t.gpu_other_s);
  o.data_wait_s = t.data_wait_s;
  o.cpu_core_s = t.cycles / (ghz * 1e9);
  o.bytes_read = t.read;
  o.bytes_written = t.written;
  o.bytes_network = t.network;
  o.steps = sp.phase.steps;
  // every storage's idle power while the job runs; each byte at its own storage's and link's rate (the highest
  // rate of any storage was charged for every byte before)
  double idle_w = 0, bytes_j = 0, link_j = 0;
  for (const StorageSpec& s : n.storage) {
    idle_w += s.idle_w;
    if (auto it = t.device_bytes.find(s.name); it != t.device_bytes.end()) bytes_j += s.j_per_byte * it->second;
    if (auto it = t.link_bytes.find(s.name); it != t.link_bytes.end()) link_j += s.link_j_per_byte * it->second;
  }
  o.storage_j = idle_w * time_s + bytes_j;
  o.network_j = link_j;
  return o;
}

}  // namespace

std::vector<PhaseOutcome> simulate_lifecycle(const NodeSpec& node, const std::vector<SimPhase>& phases, int cpu_pstate,
                                             double recorded_cpu_ghz) {
  std::unique_ptr<sg4::Engine> engine = make_simgrid_engine();
  sg_host_energy_plugin_init();
  Platform p = build(node, cpu_pstate);
  std::vector<PhaseOutcome> out;
  std::exception_ptr failure;
  const double ghz = node.pstates.at(cpu_pstate).ghz;
  sg4::Actor::create("job", p.node, [&] {
    guarded(failure, [&] {
      Runner runner(node, p, recorded_cpu_ghz);
      for (const SimPhase& sp : phases) {
        Tally t;
        const double t0 = sg4::Engine::get_clock(), e0 = sg_host_get_consumed_energy(p.node);
        runner.run(sp, t);
        const double t1 = sg4::Engine::get_clock(), e1 = sg_host_get_consumed_energy(p.node);
        out.push_back(outcome(node, sp, t, t1 - t0, e1 - e0, ghz));
      }
    });
  });
  run_and_rethrow(engine, failure);
  return out;
}

}  // namespace dvfs
