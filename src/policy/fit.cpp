#include "policy/fit.h"

#include <math.h>

#include <algorithm>

namespace gofl {

double lower_quartile(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = 0.25 * double(v.size() - 1);
  const size_t i = size_t(pos);
  const double frac = pos - double(i);
  return i + 1 < v.size() ? v[i] + frac * (v[i + 1] - v[i]) : v[i];
}

SpeedCurve curve_from_points(std::vector<std::pair<double, double>> points) {
  points.erase(std::remove_if(points.begin(), points.end(),
                              [](const auto& p) { return !(p.first > 0) || !(p.second > 0) || !std::isfinite(p.second); }),
               points.end());
  std::sort(points.begin(), points.end());
  SpeedCurve c;
  for (size_t i = 0; i < points.size();) {
    size_t j = i;
    double log_sum = 0;
    while (j < points.size() && points[j].first == points[i].first) log_sum += log(points[j++].second);
    c.points.emplace_back(points[i].first, exp(log_sum / double(j - i)));
    i = j;
  }
  return c;
}

bool fit_copy_cost(const std::vector<std::pair<double, double>>& samples, CopyCost* out, std::string* why) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : samples) {
    if (!(x > 0) || !(y >= 0)) continue;
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double var = n * sxx - sx * sx;
  if (n < 2 || var <= 1e-12 * sxx * n) {
    if (why) *why = "fewer than two different copy sizes were measured";
    return false;
  }
  double slope = (n * sxy - sx * sy) / var;  // seconds per byte
  double fixed = (sy - slope * sx) / n;
  if (fixed < 0) {
    fixed = 0;
    slope = sxy / sxx;
  }
  if (!(slope > 0)) {
    if (why) *why = "the copy time did not grow with the size";
    return false;
  }
  out->fixed_s = fixed;
  out->bytes_per_s = 1.0 / slope;
  return true;
}

}  // namespace gofl
