// The report writer (apps/common/html_report.hpp): escaping of hostile
// names, a well-formed self-contained document, charts with the polylines,
// bars and cells their data asks for, long series thinned with their peaks
// kept.
#include "common/html_report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "support/html_check.hpp"

namespace neuralsim {
namespace {

using testing::html_count;
using testing::html_report_violation;

const char* const kHtmlReportHostileName = "<script>alert('x')</script> & \"q\"";

TEST(HtmlReport, EscapesEveryTextAndIsWellFormed) {
  EXPECT_EQ(html_escape(kHtmlReportHostileName), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  HtmlReport report(kHtmlReportHostileName);
  report.section(kHtmlReportHostileName);
  report.paragraph(kHtmlReportHostileName);
  report.warnings({kHtmlReportHostileName});
  report.table({{kHtmlReportHostileName, "b"}, {{kHtmlReportHostileName, "1"}}, {true}});
  report.line_plot({kHtmlReportHostileName, kHtmlReportHostileName, kHtmlReportHostileName, {{kHtmlReportHostileName, {0, 1}, {1, 2}}, {"b", {0, 1}, {2, 1}}}});
  report.histogram({kHtmlReportHostileName, kHtmlReportHostileName, {1, 2, 3}});
  report.heat_map({kHtmlReportHostileName, {kHtmlReportHostileName, "b"}, {{1, -0.5}, {-0.5, 1}}});
  report.preformatted(kHtmlReportHostileName);
  const std::string doc = report.document();
  EXPECT_EQ(html_report_violation(doc), "");
  EXPECT_EQ(doc.find("<script"), std::string::npos);
  EXPECT_EQ(doc.find("'x'"), std::string::npos);
  EXPECT_NE(doc.find("&lt;script&gt;"), std::string::npos);
  // The checker itself catches what it is for.
  EXPECT_NE(testing::html_report_problem("<p><b>x</p></b>"), "");
  EXPECT_NE(testing::html_report_problem("<p>a &nbsp; b</p>"), "");
  EXPECT_NE(html_report_violation("<p><img src=\"http://x/y.png\"/></p>"), "");
}

TEST(HtmlReport, NumbersAreReadable) {
  EXPECT_EQ(html_number(3.14159265), "3.142");
  EXPECT_EQ(html_number(1.5e-7), "1.5e-07");
  EXPECT_EQ(html_number(NAN), "n/a");
  EXPECT_EQ(html_number(-INFINITY), "-inf");
}

TEST(HtmlReport, ChartsDrawOnePolylinePerSeriesAndABarPerBin) {
  HtmlReport report("charts");
  std::vector<double> x, y;
  for (int k = 0; k < 10000; ++k) x.push_back(k * 1e-3), y.push_back(std::sin(k * 1e-3));
  y[7777] = 50;  // a spike the thinning must keep
  report.line_plot({"long", "t", "y", {{"a", x, y}, {"b", x, x, true}, {"c", {0, 1}, {NAN, NAN}}}});
  const std::string doc = report.document();
  EXPECT_EQ(html_count(doc, "<polyline"), 3u);
  EXPECT_EQ(html_count(doc, "stroke-dasharray"), 2u);  // series b and its legend entry
  // At most 2000 points per polyline, and the spike's maximum is among them.
  const std::regex points("points=\"([^\"]*)\"");
  double top = 1e9;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), points); it != std::sregex_iterator(); ++it) {
    const std::string p = (*it)[1];
    EXPECT_LE(html_count(p, ","), static_cast<std::size_t>(HtmlReport::kMaxPolylinePoints));
    for (std::size_t i = p.find(','); i != std::string::npos; i = p.find(',', i + 1)) top = std::min(top, std::stod(p.substr(i + 1)));
  }
  EXPECT_LT(top, 30.0);  // the spike at y = 50 is the plot's top edge (y0 = 24 px), not thinned away
  HtmlReport h("histogram");
  h.histogram({"r", "x", {0, 0.1, 0.2, 0.9, 1.0, NAN}, 5});
  EXPECT_EQ(html_count(h.document(), "<rect") - 1, 5u);  // 5 bars and the frame
  EXPECT_NE(h.document().find("n = 5,"), std::string::npos);
  HtmlReport m("heat map");
  m.heat_map({"c", {"a", "b", "c"}, {{1, 0, 0}, {0, 1, 0}, {0, 0, NAN}}});
  EXPECT_EQ(html_count(m.document(), "<rect"), 9u + 20u);  // the cells and the colour scale's steps
  EXPECT_NE(m.document().find("#bbbbbb"), std::string::npos);  // NaN: grey
  EXPECT_EQ(html_report_violation(m.document()), "");
}

}  // namespace
}  // namespace neuralsim
