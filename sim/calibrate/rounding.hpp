#pragma once
// Rounding of fitted values written into model files.
#include <cmath>

namespace dvfs {

// Rounds to a power-of-ten step (0.1, 0.001, ...) so the value prints as its shortest decimal.
inline double round_to(double v, double step) {
  const double inv = std::round(1.0 / step);
  return std::round(v * inv) / inv;
}

}  // namespace dvfs
