#include "policy/level.h"

namespace gofl {

namespace {
constexpr LevelRow kLevels[10] = {
    {1, 3.0, 0.30, 0.50, 3.0},   {2, 2.5, 0.37, 0.45, 2.75}, {3, 2.0, 0.44, 0.40, 2.5},
    {4, 1.6, 0.52, 0.35, 2.25},  {5, 1.3, 0.59, 0.30, 2.0},  {6, 1.2, 0.66, 0.25, 1.75},
    {7, 1.1, 0.73, 0.20, 1.5},   {8, 1.05, 0.81, 0.15, 1.25}, {9, 1.0, 0.88, 0.10, 1.0},
    {10, 0.9, 0.95, 0.05, 0.75},
};
}  // namespace

const LevelRow& level_row(int level) {
  if (level < 1) level = 1;
  if (level > 10) level = 10;
  return kLevels[level - 1];
}

}  // namespace gofl
