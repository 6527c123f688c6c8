#pragma once
// Two-stream kernel pairs (traces/recorder/record_stream_pairs.py; traces/recordings/h200-stream-pairs/): each
// pair recorded as A alone, B alone and both on two streams. The overlap-aware replay (sim/engine/overlap_replay)
// predicts the together run from the two alone runs; so does the busy union (the same kernels one after another),
// both under the same power cap. Which pairs a contention model may be fit on is fixed by a split file.
#include "models/src/gpu_model.hpp"
#include "models/src/stream_contention.hpp"
#include "sim/core/json_util.hpp"
#include "sim/engine/overlap_replay.hpp"

#include <string>
#include <vector>

namespace dvfs {

// A kernel of the together run, with what its alone run measured.
struct PairKernel {
  double alone_s = 0, alone_power_w = 0;
  double sm_fill = 1, memory_share = 0;
  bool copy_engine = false;
  bool elastic = false;
  double max_clock_ratio = 1;
};

struct StreamPair {
  std::string name;
  bool held_out = false;
  // Per profiled step of the together run: its streams' kernels in stream order, and all of them in start order.
  std::vector<std::vector<std::vector<PairKernel>>> steps;
  std::vector<std::vector<std::pair<int, int>>> start_order;
  double measured_step_s = 0, measured_step_j = 0;  // steady window of the together run (energy counter)
  GpuEnvelope gpu;
};

struct PairPrediction {
  double overlap_s = 0, overlap_j = 0, busy_union_s = 0, busy_union_j = 0;
  double serial_s = 0, serial_j = 0;  // the busy union without the cap's settlement (each kernel at its alone power)
};

struct StreamPairSplit {
  std::vector<std::string> fit, held_out;
};
StreamPairSplit read_stream_pair_split(const std::string& path);

// Loads DIR/<pair>-a, -b, -ab for every pair of the split; `gpu` gives the static power and DRAM peak.
std::vector<StreamPair> load_stream_pairs(const std::string& dir, const StreamPairSplit& split, const GpuModel& gpu);

PairPrediction predict_stream_pair(const StreamPair& pair, const ContentionModel& m);

// Every pair's time and energy error, overlap replay and busy union, fit and held-out side by side.
Json validate_stream_pairs(const std::string& dir, const std::string& split_file, const std::string& contention_file);
std::string format_stream_pairs(const Json& report);

}  // namespace dvfs
