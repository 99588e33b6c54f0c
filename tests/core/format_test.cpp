// core/format: printable() keeps valid printable UTF-8 and escapes
// everything that could break a one-line message, a terminal or a JSON
// summary; every library error's message goes through it.
#include <gtest/gtest.h>

#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"

namespace neuralsim {
namespace {

TEST(Printable, KeepsPrintableUtf8) {
  for (const std::string s : {"", "time", "q̇ ≥ 0 °C", "日本語", "emoji \xF0\x9F\x98\x80", "a\\b 'c' \"d\""})
    EXPECT_EQ(printable(s), s);
}

TEST(Printable, EscapesControlsInvisibleMarksAndBytesThatAreNotUtf8) {
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("line\nbreak\r\ttab\x1b[31m\x7f"), "line\\x0abreak\\x0d\\x09tab\\x1b[31m\\x7f");
  EXPECT_EQ(printable("\xEF\xBB\xBFtime"), "\\ufefftime");                    // byte-order mark
  EXPECT_EQ(printable("a\xE2\x80\x8B" "b\xE2\x80\xAE" "c"), "a\\u200bb\\u202ec");  // zero width, bidi override
  EXPECT_EQ(printable("\xC2\x85"), "\\u0085");                                 // C1 control (NEL)
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");                              // not UTF-8
  EXPECT_EQ(printable("\xC3"), "\\xc3");                                       // truncated sequence
  EXPECT_EQ(printable("\xC0\xAF"), "\\xc0\\xaf");                              // overlong '/'
  EXPECT_EQ(printable("\xED\xA0\x80"), "\\xed\\xa0\\x80");                     // surrogate
  EXPECT_EQ(printable("\xF4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");            // above U+10FFFF
  // Escaped text is printable already: escaping twice changes nothing.
  const std::string once = printable(std::string("\x01\xff\xEF\xBB\xBF", 5));
  EXPECT_EQ(printable(once), once);
}

TEST(Printable, EveryLibraryErrorIsOnePrintableLine) {
  const std::string binary("col\0\x01\xff\t", 7);
  EXPECT_STREQ(DataError("f.csv:1: unknown column '" + binary + "'").what(),
               "f.csv:1: unknown column 'col\\x00\\x01\\xff\\x09'");
  EXPECT_STREQ(ConfigError("first\nsecond\r\nthird").what(), "first second  third");  // line breaks: spaces
}

}  // namespace
}  // namespace neuralsim
