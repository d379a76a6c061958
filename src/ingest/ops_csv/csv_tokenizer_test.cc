// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/csv_tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strag::ingest {
namespace {

std::vector<std::vector<std::string>> Tokenize(std::string_view text) {
  CsvTokenizer tokenizer(text);
  std::vector<CsvField> fields;
  std::vector<std::vector<std::string>> records;
  while (tokenizer.Next(&fields)) {
    auto& record = records.emplace_back();
    for (const CsvField& field : fields) record.push_back(field.Value());
  }
  EXPECT_FALSE(tokenizer.error().has_value()) << tokenizer.error()->what;
  return records;
}

using Records = std::vector<std::vector<std::string>>;

// Plain, empty and quoted fields; `""` is one quote; commas and line breaks
// inside quotes are data.
TEST(CsvTokenizerTest, SplitsFields) {
  EXPECT_EQ(Tokenize("a,,\"b,c\",\"d\"\"e\"\n\"x\ny\",z\n"),
            (Records{{"a", "", "b,c", "d\"e"}, {"x\ny", "z"}}));
}

// CRLF, a BOM, blank lines, a trailing comma and no final newline.
TEST(CsvTokenizerTest, HandlesLineEnds) {
  EXPECT_EQ(Tokenize("\xEF\xBB\xBF"
                     "a,b\r\n\r\n\nc,\"d\"\r\ne,"),
            (Records{{"a", "b"}, {"c", "d"}, {"e", ""}}));
}

// record_line() is the physical line where a record starts.
TEST(CsvTokenizerTest, CountsLines) {
  CsvTokenizer tokenizer("h\n\n\"a\nb\"\nc\n");
  std::vector<CsvField> fields;
  ASSERT_TRUE(tokenizer.Next(&fields));
  EXPECT_EQ(tokenizer.record_line(), 1u);
  ASSERT_TRUE(tokenizer.Next(&fields));
  EXPECT_EQ(tokenizer.record_line(), 3u);
  ASSERT_TRUE(tokenizer.Next(&fields));
  EXPECT_EQ(tokenizer.record_line(), 5u);
  EXPECT_FALSE(tokenizer.Next(&fields));
}

// Text after a closing quote is an error with its line and field.
TEST(CsvTokenizerTest, ReportsBadQuotes) {
  CsvTokenizer tokenizer("a\nb,\"c\"d\n");
  std::vector<CsvField> fields;
  ASSERT_TRUE(tokenizer.Next(&fields));
  EXPECT_FALSE(tokenizer.Next(&fields));
  ASSERT_TRUE(tokenizer.error().has_value());
  EXPECT_EQ(tokenizer.error()->line, 2u);
  EXPECT_EQ(tokenizer.error()->field_index, 1u);
}

// Only values with a comma, quote or line break are quoted.
TEST(CsvTokenizerTest, QuotesOnlyWhenNeeded) {
  std::string out;
  AppendCsvField("plain text", &out);
  out += '|';
  AppendCsvField("a,\"b\"\n", &out);
  EXPECT_EQ(out, "plain text|\"a,\"\"b\"\"\n\"");
  EXPECT_EQ(Tokenize(out.substr(out.find('|') + 1)), (Records{{"a,\"b\"\n"}}));
}

}  // namespace
}  // namespace strag::ingest
