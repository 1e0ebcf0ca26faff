// Fitting a machine profile from measurements (gpu-offload calibrate): the statistics, kept apart
// from the workload and the trace reading so that unit tests check them with made-up numbers.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "policy/profile.h"

namespace gofl {

// The lower quartile (25th percentile, linear between order statistics) of the values; 0 for none.
// Repetitions slowed by a noisy machine land above it.
double lower_quartile(std::vector<double> v);

// A speed curve from (flops, flops/s) points in any order: sorted by work, points of equal work
// merged (geometric mean of their speeds), non-positive values dropped.
SpeedCurve curve_from_points(std::vector<std::pair<double, double>> points);

// The straight line seconds = fixed + bytes / bandwidth through (bytes, seconds) samples, by least
// squares. A negative fixed cost is taken as 0 (line through the origin). False when the samples do
// not determine a positive bandwidth (fewer than two distinct sizes, or time not growing with size).
bool fit_copy_cost(const std::vector<std::pair<double, double>>& samples, CopyCost* out, std::string* why);

}  // namespace gofl
