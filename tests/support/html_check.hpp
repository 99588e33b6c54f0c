// Checks of a report.html (apps/common/html_report.hpp) shared by the
// writer's test and the tools' tests: the document is well-formed XML
// (every element closed in order, attributes quoted, only the XML
// entities), has no script and loads nothing from the network.
#pragma once

#include <cctype>
#include <string>
#include <vector>

namespace neuralsim::testing {

// "" when `doc` is well-formed as above, else what is wrong and where.
inline std::string html_report_problem(const std::string& doc) {
  std::vector<std::string> open;
  const auto at = [&](std::size_t i) { return " at byte " + std::to_string(i); };
  for (std::size_t i = 0; i < doc.size(); ++i) {
    if (doc[i] == '&') {
      const std::size_t end = doc.find(';', i);
      const std::string e = end == std::string::npos ? "" : doc.substr(i, end - i + 1);
      const bool numeric = e.size() > 3 && e[1] == '#' &&
                           e.find_first_not_of("0123456789", 2) == e.size() - 1;
      if (!numeric && e != "&amp;" && e != "&lt;" && e != "&gt;" && e != "&quot;" && e != "&apos;")
        return "an entity XML does not know" + at(i);
      continue;
    }
    if (doc[i] == '>') return "a '>' outside a tag" + at(i);
    if (doc[i] != '<') continue;
    if (doc.compare(i, 2, "<!") == 0) {  // the doctype
      i = doc.find('>', i);
      if (i == std::string::npos) return "an unclosed declaration";
      continue;
    }
    // The tag: quoted attribute values may hold '>' in no case (escaped).
    std::size_t end = i + 1;
    char quote = 0;
    for (; end < doc.size(); ++end) {
      const char c = doc[end];
      if (quote) {
        if (c == quote) quote = 0;
        else if (c == '<') return "a '<' inside an attribute value" + at(end);
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '>') {
        break;
      } else if (c == '<') {
        return "a '<' inside a tag" + at(end);
      }
    }
    if (end >= doc.size()) return "an unclosed tag" + at(i);
    const std::string tag = doc.substr(i + 1, end - i - 1);
    const bool closing = !tag.empty() && tag[0] == '/';
    std::size_t n = closing ? 1 : 0;
    while (n < tag.size() && (std::isalnum(static_cast<unsigned char>(tag[n])) || tag[n] == '-')) ++n;
    const std::string name = tag.substr(closing ? 1 : 0, n - (closing ? 1 : 0));
    if (name.empty()) return "a tag without a name" + at(i);
    if (closing) {
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + open.back() + ">") + at(i);
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(name);
    }
    i = end;
  }
  return open.empty() ? "" : "<" + open.back() + "> is never closed";
}

inline std::size_t html_count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t i = text.find(what); i != std::string::npos; i = text.find(what, i + 1)) ++n;
  return n;
}

// The part of `doc` from <h2>heading</h2> to the next <h2> ("" when absent).
inline std::string html_section(const std::string& doc, const std::string& heading) {
  const std::size_t begin = doc.find("<h2>" + heading + "</h2>");
  if (begin == std::string::npos) return "";
  const std::size_t end = doc.find("<h2>", begin + 4);
  return doc.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// A self-contained report: well-formed, no script or event handler, nothing
// fetched (no src or href naming another host or file).
inline std::string html_report_violation(const std::string& doc) {
  if (std::string p = html_report_problem(doc); !p.empty()) return p;
  for (const char* bad : {"<script", " onload=", " onclick=", "src=", "href=", "url(", "@import"})
    if (doc.find(bad) != std::string::npos) return std::string("holds ") + bad;
  return "";
}

}  // namespace neuralsim::testing
