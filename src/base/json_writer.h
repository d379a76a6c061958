// SPDX-License-Identifier: Apache-2.0
// JsonWriter: a small streaming JSON writer with stable, shortest
// round-trip number formatting (non-finite numbers become null).

#ifndef STRAG_SRC_BASE_JSON_WRITER_H_
#define STRAG_SRC_BASE_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strag {

class JsonWriter {
 public:
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);
  void String(std::string_view value);
  void Number(double value);
  void Int(int64_t value);
  void Bool(bool value);
  void Null();

  // Key + value shorthands.
  void Field(std::string_view key, double value) {
    Key(key);
    Number(value);
  }
  void FieldInt(std::string_view key, int64_t value) {
    Key(key);
    Int(value);
  }
  template <typename Int>
  void FieldIntArray(std::string_view key, const std::vector<Int>& values) {
    Key(key);
    BeginArray();
    for (Int v : values) this->Int(static_cast<int64_t>(v));
    EndArray();
  }
  void FieldString(std::string_view key, std::string_view value) {
    Key(key);
    String(value);
  }

  const std::string& str() const { return out_; }

 private:
  void BeforeValue();
  void Open(char bracket);
  void Close(char bracket);
  void WriteString(std::string_view value);
  void Newline();

  int indent_;
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace strag

#endif  // STRAG_SRC_BASE_JSON_WRITER_H_
