// Charts drawn as inline SVG text, for the HTML report: no scripts, no fonts, no network. An x/y
// chart with linear or log axes (points, lines, reference lines) and horizontal stacked bars, both
// with axis labels, units and a legend.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gofl::cli::svg {

// Text for HTML and SVG: & < > " ' escaped.
std::string escape(const std::string& s);

// Tick labels: "1 ms", "10 µs" (seconds); "1 k", "10 G" (SI, no unit).
std::string time_tick(double seconds);
std::string si_tick(double v);

struct Series {
  std::string name;
  std::string color;  // CSS colour
  enum Shape { kCircle, kDiamond, kLine, kDashed, kBox } shape = kBox;
};

struct Axis {
  std::string label;              // with the unit: "time (s)"
  bool log = false;
  std::string (*tick)(double) = nullptr;  // formats tick values (default: %g)
  double lo = 0, hi = 0;          // data range; set by fit() or by hand
  void fit(double v);             // widen the range to hold v
};

// A chart whose x and y map linearly or logarithmically to the plot area.
class XYChart {
 public:
  XYChart(std::string id, int width, int height, Axis x, Axis y, std::vector<Series> legend);

  // Marker of legend series `s` at (x, y) with a tooltip.
  void point(double x, double y, int s, const std::string& tooltip);
  // A polyline in data coordinates, drawn with series s's colour (dashed for kDashed).
  void line(const std::vector<std::pair<double, double>>& pts, int s);
  // A thin grey reference line from (x0, y0) to (x1, y1), clipped to the plot, with a label at its end.
  void reference(double x0, double y0, double x1, double y1, const std::string& label, bool dotted);
  // A vertical line at x with a label at the top, in series s's colour.
  void vline(double x, int s, const std::string& label);

  std::string str() const;  // the <svg> element
  const Axis& x_axis() const { return x_; }  // domains as drawn (widened to whole ticks)
  const Axis& y_axis() const { return y_; }

 private:
  double px(double x) const;
  double py(double y) const;

  std::string id_;
  int w_, h_;
  Axis x_, y_;
  std::vector<Series> legend_;
  double l_ = 78, r_ = 24, t_ = 44, b_ = 52;  // margins: left axis labels, top legend
  std::string body_;
};

// Horizontal bars, one row per category, each split into the series' segments; an optional note
// at the end of each bar. Rows may be headings (a category name without bars).
class BarChart {
 public:
  BarChart(std::string id, int width, std::vector<Series> series, std::string x_label, std::string (*tick)(double));
  void row(const std::string& label, const std::vector<double>& values, const std::string& note);
  void heading(const std::string& label);
  std::string str() const;

 private:
  struct Row {
    std::string label, note;
    std::vector<double> values;
    bool heading = false;
  };
  std::string id_;
  int w_;
  std::vector<Series> series_;
  std::string x_label_;
  std::string (*tick_)(double);
  std::vector<Row> rows_;
};

}  // namespace gofl::cli::svg
