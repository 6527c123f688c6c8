#pragma once
// Which GPU a trace's kernel times belong to, from its device name, and the note a run gets when they are replayed
// on another chip's model as recorded (summary.json `notes`, a warning on stderr).
#include "models/src/gpu_model.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dvfs {

// The lower-case alphanumeric words of a device name ("NVIDIA A100-SXM4-80GB" -> nvidia, a100, sxm4, 80gb).
std::vector<std::string> device_words(const std::string& device_name);
// The chip a device name names: its first word with a digit ("NVIDIA A100-SXM4-80GB" -> "a100", "Tesla
// V100-SXM2-32GB" -> "v100", "NVIDIA GeForce RTX 3080 Ti" -> "3080", "B200-like (NVIDIA Blackwell)" -> "b200"), a
// Grace superchip's its GPU's ("NVIDIA GH200 480GB" -> "h100", "NVIDIA GH200 144G HBM3e" -> "h200"); "" if none.
std::string chip_of(const std::string& device_name);
// The shipped model of the chip a device name names, the one whose display name shares the most words with it (a
// PCIe board's with a PCIe model); "" when none is shipped. Model files that do not load are passed over.
std::string shipped_model_of(const std::string& device_name);
// The note for a trace replayed on `model` as recorded (`retargeted`: the scenario names the recording GPU) whose
// device is another NVIDIA chip, or a dvfs-sim export simulated on another model ("<device> (simulated: <model>)").
std::optional<std::string> other_gpu_note(const std::string& device_name, const GpuModel& model, bool retargeted);

}  // namespace dvfs
