#include "sim/control/cap_allocation.hpp"

#include <algorithm>
#include <numeric>

namespace dvfs {

std::vector<double> allocate_caps(double target_w, const std::vector<double>& measured_w, const std::vector<double>& caps_w,
                                  double min_w, double max_w, double headroom_w) {
  const std::size_t n = measured_w.size();
  std::vector<double> ask(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool below = i < caps_w.size() && measured_w[i] + headroom_w < caps_w[i];
    ask[i] = std::clamp(below ? measured_w[i] + headroom_w : max_w, min_w, max_w);
  }
  // Level L with sum(min(ask, L)) = target, found over the sorted asks.
  std::vector<double> sorted = ask;
  std::sort(sorted.begin(), sorted.end());
  double level = max_w, below_sum = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double rest = static_cast<double>(n - k);
    const double l = (target_w - below_sum) / rest;  // the remaining GPUs all at the level
    if (l <= sorted[k]) {
      level = l;
      break;
    }
    below_sum += sorted[k];
  }
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = std::clamp(std::min(ask[i], level), min_w, max_w);
  // Every ask met and power left: spread it equally over the GPUs below max_w, so a GPU that ramps up
  // before the next interval finds room.
  for (std::size_t pass = 0; pass < n; ++pass) {
    const double left = target_w - std::accumulate(out.begin(), out.end(), 0.0);
    const auto open = static_cast<double>(std::count_if(out.begin(), out.end(), [&](double c) { return c < max_w; }));
    if (left <= 1e-9 || open == 0) break;
    for (double& c : out)
      if (c < max_w) c = std::min(max_w, c + left / open);
  }
  return out;
}

std::vector<double> equal_caps(double target_w, std::size_t gpus, double min_w, double max_w) {
  return std::vector<double>(gpus, gpus ? std::clamp(target_w / static_cast<double>(gpus), min_w, max_w) : 0.0);
}

}  // namespace dvfs
