// report.html: a report a person reads, one self-contained file. No script,
// no external resource, no network access: the style is one <style>
// element and every chart is inline SVG drawn here (line plots with axes,
// ticks and a legend; histograms; a heat map with its colour scale). The
// document is also well-formed XML (void elements closed, only the XML
// entities), so a test can parse it.
//
//   HtmlReport report("simid: double_pendulum");
//   report.section("Parameters");
//   report.table({{"name", "fitted"}, {{"link.link1.length", html_number(3.0)}}});
//   report.line_plot({"cost per iteration", "iteration", "cost", {{"cost", x, y}}, true});
//   write_text_atomic(path, report.document());   // tools: ToolRun::write_report
//
// Every text given is escaped (names come from configs and data files:
// user input). Long series are thinned to at most kMaxPolylinePoints points
// per polyline (the minimum and maximum of each bucket, so peaks stay).
#pragma once

#include <string>
#include <vector>

namespace neuralsim {

// &, <, >, ", ' as entities.
std::string html_escape(const std::string& text);
// %.4g; "n/a" for NaN, "inf" / "-inf".
std::string html_number(double v);

struct PlotSeries {
  std::string name;
  std::vector<double> x, y;  // non-finite points are left out
  bool dashed = false;
};

struct LinePlot {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
  bool log_y = false;  // points with y <= 0 are left out
};

struct Histogram {
  std::string title, x_label;
  std::vector<double> values;  // non-finite values are left out
  int bins = 30;
};

// A square matrix of values in [lower, upper] (e.g. correlations), one
// colour per cell on a blue-white-red scale; NaN cells are grey.
struct HeatMap {
  std::string title;
  std::vector<std::string> labels;          // one per row (and column)
  std::vector<std::vector<double>> values;  // labels.size() rows
  double lower = -1, upper = 1;
};

struct HtmlTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // plain text, escaped when written
  std::vector<bool> flagged;                   // per row (may be empty): highlighted
  bool numeric = true;  // numbers right-aligned after the first column; false: text, all left-aligned
};

class HtmlReport {
 public:
  static constexpr int kMaxPolylinePoints = 2000;

  explicit HtmlReport(std::string title);

  void section(const std::string& heading);     // <h2>
  void subsection(const std::string& heading);  // <h3>
  void paragraph(const std::string& text);
  void preformatted(const std::string& text);
  void list(const std::vector<std::string>& items);
  // A highlighted list; "No warnings." when empty.
  void warnings(const std::vector<std::string>& items);
  void table(const HtmlTable& table);
  // Charts flow side by side, as many as the page width holds.
  void line_plot(const LinePlot& plot, int width = 560, int height = 300);
  void histogram(const Histogram& histogram, int width = 360, int height = 240);
  void heat_map(const HeatMap& map);

  // The whole file.
  std::string document() const;

 private:
  std::string title_;
  std::string body_;
};

}  // namespace neuralsim
