#include "sim/results/recording_gpu.hpp"

#include "models/src/model_registry.hpp"

#include <algorithm>
#include <cctype>
#include <exception>

namespace dvfs {

std::vector<std::string> device_words(const std::string& device_name) {
  std::vector<std::string> out(1);
  for (char c : device_name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!out.back().empty()) {
      out.emplace_back();
    }
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

std::string chip_of(const std::string& device_name) {
  const std::vector<std::string> words = device_words(device_name);
  for (const std::string& w : words) {
    if (std::none_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) continue;
    // A Grace superchip's GPU: GH200's is an H100 with 96 GB of HBM3, or an H200-class part with 144 GB of HBM3e
    // ("NVIDIA GH200 144G HBM3e"); GB200's a B200.
    if (w == "gh200") {
      const bool hbm3e = std::any_of(words.begin(), words.end(), [](const std::string& x) { return x == "hbm3e" || x == "144g" || x == "144gb"; });
      return hbm3e ? "h200" : "h100";
    }
    if (w == "gb200") return "b200";
    return w;
  }
  return "";
}

std::string shipped_model_of(const std::string& device_name) {
  const std::string chip = chip_of(device_name);
  if (chip.empty()) return "";
  const std::vector<std::string> words = device_words(device_name);
  auto has = [](const std::vector<std::string>& ws, const std::string& w) { return std::find(ws.begin(), ws.end(), w) != ws.end(); };
  std::string best;
  int best_score = -1;
  for (const std::string& name : available_models()) {
    std::string display;
    try {
      display = load_gpu_model(name).display_name();
    } catch (const std::exception&) {
      continue;  // a broken model file beside the shipped ones: not a candidate, and no reason to fail the run
    }
    if (chip_of(display) != chip) continue;
    const std::vector<std::string> ws = device_words(display);
    int score = has(ws, "pcie") == has(words, "pcie") ? 100 : 0;
    for (const std::string& w : ws) score += has(words, w);
    if (score > best_score) best = name, best_score = score;
  }
  return best;
}

std::optional<std::string> other_gpu_note(const std::string& device_name, const GpuModel& model, bool retargeted) {
  if (retargeted) return std::nullopt;
  const std::string tail = " (simulated: ";
  const std::size_t at = device_name.rfind(tail);
  if (at != std::string::npos && device_name.size() > at + tail.size() && device_name.back() == ')') {
    // A dvfs-sim export (sim/results/trace_export.cpp): its kernel times are the model's it was simulated on.
    const std::string simulated = device_name.substr(at + tail.size(), device_name.size() - at - tail.size() - 1);
    if (simulated == model.name()) return std::nullopt;
    return "the trace is a dvfs-sim export simulated on the " + simulated + " model and is replayed on the " + model.name() +
           " model as exported: its kernel times are " + simulated + "'s; a scenario's \"trace_gpu\": \"" + simulated +
           "\" moves them to this one (README, \"Scenarios\")";
  }
  const std::string recorded_chip = chip_of(device_name), model_chip = chip_of(model.display_name());
  if (recorded_chip.empty() || model_chip.empty() || recorded_chip == model_chip) return std::nullopt;
  const std::string shipped = shipped_model_of(device_name);
  return "the trace was recorded on " + device_name + " and is replayed on the " + model.name() + " model (" +
         model.display_name() + ") as recorded: its kernel times are that GPU's; a scenario's \"trace_gpu\" " +
         (shipped.empty() ? std::string("naming the recording GPU's model (none is shipped for this chip) ")
                          : "(\"" + shipped + "\" for this chip) ") +
         "moves them to this one (README, \"Scenarios\")";
}

}  // namespace dvfs
