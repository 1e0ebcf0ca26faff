#include "report/svg.h"

#include <math.h>
#include <stdio.h>

#include <algorithm>
#include <cmath>

namespace gofl::cli::svg {
namespace {

const char* const kFont = "font-family=\"system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif\"";

std::string num(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string fmt(double v, const char* unit) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.3g%s", v, unit);
  return buf;
}

// About how wide a label is at font size `px` (no font metrics without a browser).
double text_width(const std::string& s, double px) {
  size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;  // UTF-8: count code points
  return double(chars) * px * 0.58;
}

struct Ticks {
  std::vector<double> at;
  double lo, hi;  // the axis domain
};

Ticks log_ticks(double lo, double hi) {
  // The values come from traces, which may be damaged: the exponents below stay finite and in range
  // (a subnormal hi made hi / 10 zero, and log10(0) is -inf, which no int holds).
  constexpr double kMin = 1e-300, kMax = 1e300;
  hi = std::isfinite(hi) ? std::min(hi, kMax) : (hi > 0 ? kMax : 0.0);
  if (!(lo > 0)) lo = hi > 0 ? hi / 10 : 1;
  lo = std::clamp(lo, kMin, kMax);
  if (!(hi > 0) || hi < lo) hi = lo;
  int a = int(floor(log10(lo) + 1e-9)), b = int(ceil(log10(hi) - 1e-9));
  if (b <= a) b = a + 1;
  const int step = std::max(1, (b - a + 7) / 8);
  Ticks t{{}, pow(10.0, a), pow(10.0, b)};
  for (int e = a; e <= b; e += step) t.at.push_back(pow(10.0, e));
  return t;
}

Ticks linear_ticks(double lo, double hi) {
  lo = std::min(lo, 0.0);
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / 5;
  const double mag = pow(10.0, floor(log10(raw)));
  const double norm = raw / mag;
  const double step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  Ticks t{{}, floor(lo / step) * step, ceil(hi / step - 1e-9) * step};
  for (double v = t.lo; v <= t.hi + step * 0.5; v += step) t.at.push_back(fabs(v) < step * 1e-9 ? 0.0 : v);
  return t;
}

std::string tick_label(const Axis& a, double v) {
  if (a.tick) return a.tick(v);
  char buf[32];
  snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The legend's marker of a series, centred at (x, y).
std::string swatch(const Series& s, double x, double y) {
  switch (s.shape) {
    case Series::kCircle:
      return "<circle cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"4.5\" fill=\"" + s.color + "\"/>";
    case Series::kDiamond:
      return "<path d=\"M" + num(x) + " " + num(y - 5.5) + "l5.5 5.5l-5.5 5.5l-5.5 -5.5z\" fill=\"" + s.color + "\"/>";
    case Series::kLine:
    case Series::kDashed:
      return "<line x1=\"" + num(x - 9) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x + 9) + "\" y2=\"" + num(y) +
             "\" stroke=\"" + s.color + "\" stroke-width=\"2.5\"" +
             (s.shape == Series::kDashed ? " stroke-dasharray=\"5 3\"" : "") + "/>";
    case Series::kBox:
      break;
  }
  return "<rect x=\"" + num(x - 6) + "\" y=\"" + num(y - 6) + "\" width=\"12\" height=\"12\" rx=\"2\" fill=\"" +
         s.color + "\"/>";
}

// Legend items in a row (wrapping) starting at (x, y); returns the SVG and sets *bottom.
std::string legend_row(const std::vector<Series>& series, double x0, double y, double max_x, double* bottom) {
  std::string out = "<g class=\"legend\">";
  double x = x0;
  for (const Series& s : series) {
    const double w = 26 + text_width(s.name, 12) + 18;
    if (x > x0 && x + w > max_x) {
      x = x0;
      y += 20;
    }
    out += swatch(s, x + 8, y);
    out += "<text x=\"" + num(x + 22) + "\" y=\"" + num(y + 4) + "\" font-size=\"12\" fill=\"#333\">" +
           escape(s.name) + "</text>";
    x += w;
  }
  *bottom = y + 12;
  return out + "</g>";
}

}  // namespace

std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters have no place in the page (and some are not allowed in XML at all).
        if ((unsigned char)c < 0x20 && c != '\n' && c != '\t') out += '?';
        else out += c;
    }
  }
  return out;
}

std::string time_tick(double s) {
  if (s == 0) return "0";
  const double a = fabs(s);
  if (a >= 1) return fmt(s, " s");
  if (a >= 1e-3) return fmt(s * 1e3, " ms");
  if (a >= 1e-6) return fmt(s * 1e6, " \xC2\xB5s");
  return fmt(s * 1e9, " ns");
}

std::string si_tick(double v) {
  static const char* const kPrefix[] = {"", " k", " M", " G", " T", " P", " E"};
  int i = 0;
  while (fabs(v) >= 999.5 && i < 6) {
    v /= 1000;
    ++i;
  }
  return fmt(v, kPrefix[i]);
}

void Axis::fit(double v) {
  if (!std::isfinite(v) || (log && v <= 0)) return;
  if (lo == 0 && hi == 0) lo = hi = v;
  lo = std::min(lo, v);
  hi = std::max(hi, v);
}

XYChart::XYChart(std::string id, int width, int height, Axis x, Axis y, std::vector<Series> legend)
    : id_(std::move(id)), w_(width), h_(height), x_(std::move(x)), y_(std::move(y)), legend_(std::move(legend)) {
  double bottom = 0;
  legend_row(legend_, l_, 18, w_ - r_, &bottom);
  t_ = std::max(t_, bottom + 14);
  const Ticks tx = x_.log ? log_ticks(x_.lo, x_.hi) : linear_ticks(x_.lo, x_.hi);
  const Ticks ty = y_.log ? log_ticks(y_.lo, y_.hi) : linear_ticks(y_.lo, y_.hi);
  x_.lo = tx.lo, x_.hi = tx.hi, y_.lo = ty.lo, y_.hi = ty.hi;
}

double XYChart::px(double x) const {
  const double f = x_.log ? (log10(x) - log10(x_.lo)) / (log10(x_.hi) - log10(x_.lo)) : (x - x_.lo) / (x_.hi - x_.lo);
  return l_ + f * (w_ - l_ - r_);
}

double XYChart::py(double y) const {
  const double f = y_.log ? (log10(y) - log10(y_.lo)) / (log10(y_.hi) - log10(y_.lo)) : (y - y_.lo) / (y_.hi - y_.lo);
  return (h_ - b_) - f * (h_ - b_ - t_);
}

void XYChart::point(double x, double y, int s, const std::string& tooltip) {
  if ((x_.log && x <= 0) || (y_.log && y <= 0) || !std::isfinite(x) || !std::isfinite(y)) return;
  const Series& se = legend_[size_t(s)];
  const double cx = px(x), cy = py(y);
  std::string shape;
  if (se.shape == Series::kDiamond)
    shape = "<path d=\"M" + num(cx) + " " + num(cy - 4.5) + "l4.5 4.5l-4.5 4.5l-4.5 -4.5z\"";
  else
    shape = "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"3.6\"";
  body_ += shape + " fill=\"" + se.color + "\" fill-opacity=\"0.72\" stroke=\"#fff\" stroke-width=\"0.6\"><title>" +
           escape(tooltip) + "</title>" + (se.shape == Series::kDiamond ? "</path>" : "</circle>");
}

void XYChart::line(const std::vector<std::pair<double, double>>& pts, int s) {
  const Series& se = legend_[size_t(s)];
  std::string d;
  for (const auto& [x, y] : pts) {
    if ((x_.log && x <= 0) || (y_.log && y <= 0)) continue;
    d += (d.empty() ? "M" : " L") + num(px(x)) + " " + num(py(y));
  }
  if (d.empty()) return;
  body_ += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + se.color + "\" stroke-width=\"2.2\"" +
           (se.shape == Series::kDashed ? " stroke-dasharray=\"6 4\"" : "") + "/>";
}

void XYChart::reference(double x0, double y0, double x1, double y1, const std::string& label, bool dotted) {
  if ((x_.log && (x0 <= 0 || x1 <= 0)) || (y_.log && (y0 <= 0 || y1 <= 0))) return;
  body_ += "<line x1=\"" + num(px(x0)) + "\" y1=\"" + num(py(y0)) + "\" x2=\"" + num(px(x1)) + "\" y2=\"" +
           num(py(y1)) + "\" stroke=\"#9a9a9a\" stroke-width=\"1\"" + (dotted ? " stroke-dasharray=\"2 3\"" : "") +
           "/>";
  if (label.empty()) return;
  // The label sits where the line leaves the plot (top or right edge), inside the plot area.
  double lx = px(x1), ly = py(y1);
  const double right = w_ - r_, top = t_;
  if (lx > right || ly < top) {
    // Walk back along the line to the edge.
    const double ax = px(x0), ay = py(y0);
    double f = 1;
    if (lx > right) f = std::min(f, (right - ax) / (lx - ax));
    if (ly < top) f = std::min(f, (top - ay) / (ly - ay));
    lx = ax + f * (lx - ax);
    ly = ay + f * (ly - ay);
  }
  if (lx < l_ || ly > h_ - b_) return;  // the line never enters the plot
  body_ += "<text x=\"" + num(lx - 4) + "\" y=\"" + num(ly + 12) +
           "\" font-size=\"10\" fill=\"#8a8a8a\" text-anchor=\"end\">" + escape(label) + "</text>";
}

void XYChart::vline(double x, int s, const std::string& label) {
  if (x_.log && x <= 0) return;
  const Series& se = legend_[size_t(s)];
  const double X = px(x);
  body_ += "<line x1=\"" + num(X) + "\" y1=\"" + num(t_) + "\" x2=\"" + num(X) + "\" y2=\"" + num(h_ - b_) +
           "\" stroke=\"" + se.color + "\" stroke-width=\"2\" stroke-dasharray=\"7 4\"/>";
  const bool right_half = X > (l_ + w_ - r_) / 2;
  // Below the labels of the reference lines, on a white halo so that grid and points do not cross it.
  body_ += "<text x=\"" + num(right_half ? X - 6 : X + 6) + "\" y=\"" + num(t_ + 32) + "\" font-size=\"12\" fill=\"" +
           se.color +
           "\" font-weight=\"600\" stroke=\"#fff\" stroke-width=\"4\" paint-order=\"stroke\" text-anchor=\"" +
           (right_half ? "end" : "start") + "\">" + escape(label) + "</text>";
}

std::string XYChart::str() const {
  const double pl = l_, pr = w_ - r_, pt = t_, pb = h_ - b_;
  std::string out = "<svg id=\"" + escape(id_) + "\" class=\"chart xy\" width=\"" + std::to_string(w_) +
                    "\" height=\"" + std::to_string(h_) + "\" viewBox=\"0 0 " + std::to_string(w_) + " " +
                    std::to_string(h_) + "\" " + kFont + " role=\"img\">";
  out += "<defs><clipPath id=\"" + escape(id_) + "-clip\"><rect x=\"" + num(pl) + "\" y=\"" + num(pt) + "\" width=\"" +
         num(pr - pl) + "\" height=\"" + num(pb - pt) + "\"/></clipPath></defs>";
  out += "<rect x=\"" + num(pl) + "\" y=\"" + num(pt) + "\" width=\"" + num(pr - pl) + "\" height=\"" + num(pb - pt) +
         "\" fill=\"#fcfcfd\" stroke=\"#c8c8c8\"/>";
  // Grid and tick labels.
  const Ticks tx = x_.log ? log_ticks(x_.lo, x_.hi) : linear_ticks(x_.lo, x_.hi);
  const Ticks ty = y_.log ? log_ticks(y_.lo, y_.hi) : linear_ticks(y_.lo, y_.hi);
  out += "<g class=\"axis x\">";
  for (double v : tx.at) {
    const double X = px(v);
    out += "<line x1=\"" + num(X) + "\" y1=\"" + num(pt) + "\" x2=\"" + num(X) + "\" y2=\"" + num(pb) +
           "\" stroke=\"#e6e6e6\"/><text x=\"" + num(X) + "\" y=\"" + num(pb + 16) +
           "\" font-size=\"11\" fill=\"#444\" text-anchor=\"middle\">" + escape(tick_label(x_, v)) + "</text>";
  }
  out += "<text x=\"" + num((pl + pr) / 2) + "\" y=\"" + num(h_ - 12) +
         "\" font-size=\"13\" fill=\"#222\" text-anchor=\"middle\">" + escape(x_.label) + "</text></g>";
  out += "<g class=\"axis y\">";
  for (double v : ty.at) {
    const double Y = py(v);
    out += "<line x1=\"" + num(pl) + "\" y1=\"" + num(Y) + "\" x2=\"" + num(pr) + "\" y2=\"" + num(Y) +
           "\" stroke=\"#e6e6e6\"/><text x=\"" + num(pl - 6) + "\" y=\"" + num(Y + 4) +
           "\" font-size=\"11\" fill=\"#444\" text-anchor=\"end\">" + escape(tick_label(y_, v)) + "</text>";
  }
  out += "<text transform=\"translate(16 " + num((pt + pb) / 2) +
         ") rotate(-90)\" font-size=\"13\" fill=\"#222\" text-anchor=\"middle\">" + escape(y_.label) + "</text></g>";
  out += "<g class=\"data\" clip-path=\"url(#" + escape(id_) + "-clip)\">" + body_ + "</g>";
  double bottom = 0;
  out += legend_row(legend_, pl, 18, pr, &bottom);
  return out + "</svg>";
}

BarChart::BarChart(std::string id, int width, std::vector<Series> series, std::string x_label,
                   std::string (*tick)(double))
    : id_(std::move(id)), w_(width), series_(std::move(series)), x_label_(std::move(x_label)), tick_(tick) {}

void BarChart::row(const std::string& label, const std::vector<double>& values, const std::string& note) {
  rows_.push_back({label, note, values, false});
}

void BarChart::heading(const std::string& label) { rows_.push_back({label, "", {}, true}); }

std::string BarChart::str() const {
  double label_w = 60, note_w = 0, max_total = 0;
  for (const Row& r : rows_) {
    if (!r.heading) label_w = std::max(label_w, text_width(r.label, 12) + 14);  // headings start at the left edge
    note_w = std::max(note_w, text_width(r.note, 11) + 10);
    double total = 0;
    for (double v : r.values) total += std::max(0.0, v);
    max_total = std::max(max_total, total);
  }
  label_w = std::min(label_w, w_ * 0.34);
  note_w = std::min(note_w, w_ * 0.34);
  double legend_bottom = 0;
  const std::string legend = legend_row(series_, label_w, 18, w_ - 16, &legend_bottom);
  const double top = legend_bottom + 14, row_h = 26, heading_h = 24;
  double y = top;
  const double x0 = label_w, x1 = w_ - 16 - note_w;
  const Ticks tx = linear_ticks(0, max_total > 0 ? max_total : 1);
  const double scale = (x1 - x0) / (tx.hi - tx.lo);

  std::string bars;
  for (const Row& r : rows_) {
    if (r.heading) {
      bars += "<text x=\"8\" y=\"" + num(y + 16) + "\" font-size=\"12.5\" font-weight=\"600\" fill=\"#222\">" +
              escape(r.label) + "</text>";
      y += heading_h;
      continue;
    }
    bars += "<g class=\"bar\"><text x=\"" + num(x0 - 8) + "\" y=\"" + num(y + 17) +
            "\" font-size=\"12\" fill=\"#222\" text-anchor=\"end\">" + escape(r.label) + "</text>";
    double x = x0;
    for (size_t i = 0; i < r.values.size() && i < series_.size(); ++i) {
      const double w = std::max(0.0, r.values[i]) * scale;
      if (w <= 0) continue;
      bars +=
          "<rect x=\"" + num(x) + "\" y=\"" + num(y + 4) + "\" width=\"" + num(std::max(w, 0.8)) +
          "\" height=\"18\" fill=\"" + series_[i].color + "\"><title>" +
          escape(r.label + ": " + series_[i].name + " " + (tick_ ? tick_(r.values[i]) : std::to_string(r.values[i]))) +
          "</title></rect>";
      x += w;
    }
    if (!r.note.empty())
      bars += "<text x=\"" + num(x + 6) + "\" y=\"" + num(y + 17) + "\" font-size=\"11\" fill=\"#555\">" +
              escape(r.note) + "</text>";
    bars += "</g>";
    y += row_h;
  }
  const double axis_y = y + 4;
  const int height = int(axis_y + 48);
  std::string out = "<svg id=\"" + escape(id_) + "\" class=\"chart bars\" width=\"" +
                    std::to_string(w_) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
                    std::to_string(w_) + " " + std::to_string(height) + "\" " + kFont + " role=\"img\">";
  out += "<g class=\"axis x\">";
  for (double v : tx.at) {
    const double X = x0 + (v - tx.lo) * scale;
    out += "<line x1=\"" + num(X) + "\" y1=\"" + num(top) + "\" x2=\"" + num(X) + "\" y2=\"" + num(axis_y) +
           "\" stroke=\"#e6e6e6\"/><text x=\"" + num(X) + "\" y=\"" + num(axis_y + 15) +
           "\" font-size=\"11\" fill=\"#444\" text-anchor=\"middle\">" + escape(tick_ ? tick_(v) : std::to_string(v)) +
           "</text>";
  }
  out += "<line x1=\"" + num(x0) + "\" y1=\"" + num(axis_y) + "\" x2=\"" + num(x1) + "\" y2=\"" + num(axis_y) +
         "\" stroke=\"#999\"/><text x=\"" + num((x0 + x1) / 2) + "\" y=\"" + num(axis_y + 36) +
         "\" font-size=\"13\" fill=\"#222\" text-anchor=\"middle\">" + escape(x_label_) + "</text></g>";
  out += "<g class=\"data\">" + bars + "</g>" + legend;
  return out + "</svg>";
}

}  // namespace gofl::cli::svg
