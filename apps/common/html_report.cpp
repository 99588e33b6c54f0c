#include "common/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "neuralsim/core/format.hpp"

namespace neuralsim {
namespace {

const char* const kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

const char* const kStyle =
    "body{font-family:sans-serif;font-size:14px;color:#222;max-width:1180px;margin:16px auto;padding:0 12px}"
    "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:28px}h3{font-size:15px}"
    "table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ccc;padding:3px 7px;text-align:right}"
    "th{background:#f2f2f2}td:first-child,th:first-child,table.text td{text-align:left}tr.flag td{background:#fdecea}"
    "ul.warnings{background:#fff6e0;border:1px solid #e0b040;padding:8px 8px 8px 28px}"
    "pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:12px}"
    "figure{display:inline-block;margin:4px;vertical-align:top}svg{font-size:11px}";

// A step of 1, 2 or 5 times a power of ten that cuts [lo, hi] into about
// `target` parts (Heckbert, "Nice numbers for graph labels", Graphics Gems, 1990).
double nice_step(double lo, double hi, int target) {
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / magnitude;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * magnitude;
}

// An axis: its range widened to whole ticks, and the ticks.
struct Axis {
  double lo = 0, hi = 1;
  std::vector<double> ticks;
  bool log = false;  // lo, hi and ticks are log10 of the values
  double map(double v, double a, double b) const { return a + (v - lo) / (hi - lo) * (b - a); }
  std::string label(double t) const { return log ? format_printf("1e%d", static_cast<int>(std::lround(t))) : html_number(t); }
};

Axis make_axis(double lo, double hi, bool log, int target, bool integral = false) {
  Axis a;
  a.log = log;
  if (!(lo < hi)) {  // one value: a range around it
    const double pad = log ? 1 : (lo == 0 ? 1 : std::abs(lo) * 0.1);
    lo -= pad;
    hi += pad;
  }
  // Decades on a log axis, whole numbers on an axis of counts or iterations.
  const double step = log || integral ? std::max(1.0, log ? std::ceil((hi - lo) / target) : nice_step(lo, hi, target))
                                      : nice_step(lo, hi, target);
  a.lo = std::floor(lo / step) * step;
  a.hi = std::ceil(hi / step) * step;
  for (double t = a.lo; t <= a.hi + step * 1e-9; t += step) a.ticks.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  return a;
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle", const char* extra = "") {
  return format_printf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>", x, y, anchor, extra) + html_escape(s) +
         "</text>";
}

std::string shortened(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

// Frame, grid, ticks, labels and title of a chart whose plot area is
// [x0, x1] × [y0, y1] (y0 the top).
std::string axes(const Axis& ax, const Axis& ay, double x0, double x1, double y0, double y1, const std::string& title,
                 const std::string& x_label, const std::string& y_label) {
  std::string s;
  for (double t : ax.ticks) {
    const double x = ax.map(t, x0, x1);
    s += format_printf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>", x, y0, x, y1);
    s += text(x, y1 + 14, ax.label(t));
  }
  for (double t : ay.ticks) {
    const double y = ay.map(t, y1, y0);
    s += format_printf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>", x0, y, x1, y);
    s += text(x0 - 4, y + 4, ay.label(t), "end");
  }
  s += format_printf("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#555\"/>", x0,
                     y0, x1 - x0, y1 - y0);
  s += text((x0 + x1) / 2, y0 - 8, title, "middle", " font-weight=\"bold\"");
  s += text((x0 + x1) / 2, y1 + 30, x_label);
  s += text(12, (y0 + y1) / 2, y_label, "middle", format_printf(" transform=\"rotate(-90 12 %.1f)\"", (y0 + y1) / 2).c_str());
  return s;
}

// The finite points of a series (y as log10 on a log axis), thinned to at
// most kMaxPolylinePoints: the lowest and the highest point of each bucket.
std::vector<std::pair<double, double>> plotted_points(const PlotSeries& s, bool log_y) {
  std::vector<std::pair<double, double>> p;
  for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
    const double y = log_y ? (s.y[i] > 0 ? std::log10(s.y[i]) : NAN) : s.y[i];
    if (std::isfinite(s.x[i]) && std::isfinite(y)) p.emplace_back(s.x[i], y);
  }
  const std::size_t max_points = HtmlReport::kMaxPolylinePoints;
  if (p.size() <= max_points) return p;
  const std::size_t bucket = (2 * p.size() + max_points - 1) / max_points;
  std::vector<std::pair<double, double>> thin;
  for (std::size_t b = 0; b < p.size(); b += bucket) {
    const auto end = p.begin() + static_cast<std::ptrdiff_t>(std::min(p.size(), b + bucket));
    const auto [lo, hi] = std::minmax_element(p.begin() + static_cast<std::ptrdiff_t>(b), end,
                                              [](const auto& u, const auto& v) { return u.second < v.second; });
    thin.push_back(lo < hi ? *lo : *hi);
    if (lo != hi) thin.push_back(lo < hi ? *hi : *lo);
  }
  return thin;
}

std::string figure(int width, int height, const std::string& content) {
  return format_printf("<figure><svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">", width, height,
                       width, height) +
         content + "</svg></figure>\n";
}

// Blue (lower) - white - red (upper).
std::string diverging_colour(double t) {
  if (std::isnan(t)) return "#bbbbbb";
  t = std::min(1.0, std::max(0.0, t));
  const double u = std::abs(2 * t - 1);
  const int r = t < 0.5 ? static_cast<int>(255 * (1 - u) + 33 * u) : static_cast<int>(255 * (1 - u) + 178 * u);
  const int g = t < 0.5 ? static_cast<int>(255 * (1 - u) + 102 * u) : static_cast<int>(255 * (1 - u) + 24 * u);
  const int b = t < 0.5 ? static_cast<int>(255 * (1 - u) + 172 * u) : static_cast<int>(255 * (1 - u) + 43 * u);
  return format_printf("#%02x%02x%02x", r, g, b);
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string html_number(double v) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return format_printf("%.4g", v);
}

HtmlReport::HtmlReport(std::string title) : title_(std::move(title)) {}

void HtmlReport::section(const std::string& heading) { body_ += "<h2>" + html_escape(heading) + "</h2>\n"; }
void HtmlReport::subsection(const std::string& heading) { body_ += "<h3>" + html_escape(heading) + "</h3>\n"; }
void HtmlReport::paragraph(const std::string& t) { body_ += "<p>" + html_escape(t) + "</p>\n"; }
void HtmlReport::preformatted(const std::string& t) { body_ += "<pre>" + html_escape(t) + "</pre>\n"; }

void HtmlReport::list(const std::vector<std::string>& items) {
  body_ += "<ul>";
  for (const std::string& i : items) body_ += "<li>" + html_escape(i) + "</li>";
  body_ += "</ul>\n";
}

void HtmlReport::warnings(const std::vector<std::string>& items) {
  if (items.empty()) return paragraph("No warnings.");
  body_ += "<ul class=\"warnings\">";
  for (const std::string& i : items) body_ += "<li>" + html_escape(i) + "</li>";
  body_ += "</ul>\n";
}

void HtmlReport::table(const HtmlTable& t) {
  body_ += t.numeric ? "<table>" : "<table class=\"text\">";
  if (std::any_of(t.header.begin(), t.header.end(), [](const std::string& h) { return !h.empty(); })) {
    body_ += "<tr>";
    for (const std::string& h : t.header) body_ += "<th>" + html_escape(h) + "</th>";
    body_ += "</tr>\n";
  }
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    body_ += r < t.flagged.size() && t.flagged[r] ? "<tr class=\"flag\">" : "<tr>";
    for (const std::string& c : t.rows[r]) body_ += "<td>" + html_escape(c) + "</td>";
    body_ += "</tr>\n";
  }
  body_ += "</table>\n";
}

void HtmlReport::line_plot(const LinePlot& plot, int width, int height) {
  std::vector<std::vector<std::pair<double, double>>> points;
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  std::size_t longest_name = 0;
  bool integral = true;
  for (const PlotSeries& s : plot.series) {
    points.push_back(plotted_points(s, plot.log_y));
    for (const auto& [x, y] : points.back()) {
      integral = integral && x == std::round(x);
      x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x), y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
    }
    longest_name = std::max(longest_name, shortened(s.name, 28).size());
  }
  if (!(x_lo <= x_hi)) x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  const bool legend = plot.series.size() > 1;
  const double x0 = 62, y0 = 24, x1 = width - (legend ? 34 + 6.2 * static_cast<double>(longest_name) : 24.0),
               y1 = height - 40;
  const Axis ax = make_axis(x_lo, x_hi, false, std::max(3, static_cast<int>((x1 - x0) / 90)), integral);
  const Axis ay = make_axis(y_lo, y_hi, plot.log_y, std::max(3, static_cast<int>((y1 - y0) / 50)));
  std::string s = axes(ax, ay, x0, x1, y0, y1, plot.title, plot.x_label, plot.y_label);
  for (std::size_t k = 0; k < points.size(); ++k) {
    const char* colour = kPalette[k % 10];
    std::string pts;
    for (const auto& [x, y] : points[k]) pts += format_printf("%.1f,%.1f ", ax.map(x, x0, x1), ay.map(y, y1, y0));
    if (!pts.empty()) pts.pop_back();
    s += format_printf("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.3\"%s points=\"", colour,
                       plot.series[k].dashed ? " stroke-dasharray=\"5 3\"" : "") +
         pts + "\"/>";
    if (legend) {
      const double y = y0 + 8 + 15 * static_cast<double>(k);
      s += format_printf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>",
                         x1 + 8, y, x1 + 26, y, colour, plot.series[k].dashed ? " stroke-dasharray=\"5 3\"" : "");
      s += text(x1 + 30, y + 4, shortened(plot.series[k].name, 28), "start");
    }
  }
  body_ += figure(width, height, s);
}

void HtmlReport::histogram(const Histogram& h, int width, int height) {
  std::vector<double> v;
  for (double x : h.values)
    if (std::isfinite(x)) v.push_back(x);
  const int bins = std::max(1, h.bins);
  double lo = v.empty() ? 0 : *std::min_element(v.begin(), v.end());
  double hi = v.empty() ? 1 : *std::max_element(v.begin(), v.end());
  if (!(lo < hi)) lo -= 0.5, hi += 0.5;
  std::vector<int> count(static_cast<std::size_t>(bins), 0);
  double mean = 0, sq = 0;
  for (double x : v) {
    ++count[static_cast<std::size_t>(std::min(bins - 1, static_cast<int>((x - lo) / (hi - lo) * bins)))];
    mean += x / static_cast<double>(v.size());
  }
  for (double x : v) sq += (x - mean) * (x - mean) / static_cast<double>(std::max<std::size_t>(1, v.size() - 1));
  const double x0 = 50, y0 = 24, x1 = width - 24, y1 = height - 52;
  const Axis ax = make_axis(lo, hi, false, std::max(2, static_cast<int>((x1 - x0) / 100)));
  const Axis ay = make_axis(0, std::max(1, *std::max_element(count.begin(), count.end())), false, 4, true);
  std::string s = axes(ax, ay, x0, x1, y0, y1, h.title, h.x_label, "count");
  for (int b = 0; b < bins; ++b) {
    const double a = ax.map(lo + (hi - lo) * b / bins, x0, x1), e = ax.map(lo + (hi - lo) * (b + 1) / bins, x0, x1);
    const double top = ay.map(count[static_cast<std::size_t>(b)], y1, y0);
    s += format_printf("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#1f77b4\" stroke=\"#fff\" "
                       "stroke-width=\"0.5\"/>",
                       a, top, std::max(0.0, e - a), y1 - top);
  }
  s += text((x0 + x1) / 2, height - 6.0,
            "n = " + std::to_string(v.size()) + ", mean = " + html_number(mean) + ", sd = " + html_number(std::sqrt(sq)));
  body_ += figure(width, height, s);
}

void HtmlReport::heat_map(const HeatMap& m) {
  const std::size_t n = m.labels.size();
  std::size_t longest = 0;
  for (const std::string& l : m.labels) longest = std::max(longest, shortened(l, 34).size() + 4);
  const double cell = std::min(44.0, std::max(12.0, 440.0 / std::max<std::size_t>(1, n)));
  const double x0 = 10 + 6.2 * static_cast<double>(longest), y0 = 44;
  const int width = static_cast<int>(x0 + cell * n + 90), height = static_cast<int>(y0 + cell * n + 16);
  std::string s = text(x0 + cell * n / 2, 16, m.title, "middle", " font-weight=\"bold\"");
  for (std::size_t i = 0; i < n; ++i) {
    s += text(x0 - 6, y0 + cell * (i + 0.5) + 4, std::to_string(i + 1) + " " + shortened(m.labels[i], 34), "end");
    s += text(x0 + cell * (i + 0.5), y0 - 6, std::to_string(i + 1));
    for (std::size_t j = 0; j < n; ++j) {
      const double v = i < m.values.size() && j < m.values[i].size() ? m.values[i][j] : NAN;
      s += format_printf("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"#fff\"/>",
                         x0 + cell * j, y0 + cell * i, cell, cell,
                         diverging_colour((v - m.lower) / (m.upper - m.lower)).c_str());
      const bool dark = std::abs(2 * (v - m.lower) / (m.upper - m.lower) - 1) > 0.6;
      if (cell >= 30)
        s += text(x0 + cell * (j + 0.5), y0 + cell * (i + 0.5) + 4, format_printf("%.2f", v), "middle",
                  dark ? " fill=\"#fff\"" : "");
    }
  }
  // The colour scale: 20 steps from upper (top) to lower.
  const double sx = x0 + cell * n + 16, sh = std::max(100.0, cell * n);
  for (int k = 0; k < 20; ++k)
    s += format_printf("<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"%.2f\" fill=\"%s\"/>", sx, y0 + sh * k / 20,
                       sh / 20 + 0.3, diverging_colour(1 - (k + 0.5) / 20).c_str());
  for (int k = 0; k <= 2; ++k)
    s += text(sx + 18, y0 + sh * k / 2 + 4, html_number(m.upper - (m.upper - m.lower) * k / 2), "start");
  body_ += figure(width, std::max(height, static_cast<int>(y0 + sh + 16)), s);
}

std::string HtmlReport::document() const {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>" + html_escape(title_) +
         "</title><style>" + kStyle + "</style></head>\n<body><h1>" + html_escape(title_) + "</h1>\n" + body_ +
         "</body></html>\n";
}

}  // namespace neuralsim
