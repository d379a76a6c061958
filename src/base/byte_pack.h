// SPDX-License-Identifier: Apache-2.0
// BytePacker / ByteUnpacker: plain values and arrays of them, packed into
// bytes (host byte order) to travel between the processes of one analysis
// (base/collective.h) and read back with bounds checks.

#ifndef STRAG_SRC_BASE_BYTE_PACK_H_
#define STRAG_SRC_BASE_BYTE_PACK_H_

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace strag {

class BytePacker {
 public:
  template <typename T>
  void Put(T x) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&x), sizeof(T));
  }
  // The count, then the values.
  template <typename T>
  void PutArray(std::span<const T> xs) {
    static_assert(std::is_trivially_copyable_v<T>);
    Put<uint64_t>(xs.size());
    if (xs.empty()) return;
    bytes_.append(reinterpret_cast<const char*>(xs.data()), xs.size_bytes());
  }
  std::string Take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

// Reads what a BytePacker wrote, in the same order; ok() turns false (and
// stays false, every later value zero or empty) at the first read past the
// end.
class ByteUnpacker {
 public:
  explicit ByteUnpacker(std::string_view bytes) : rest_(bytes) {}

  template <typename T>
  T Get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T x{};
    if (!ok_ || rest_.size() < sizeof(T)) {
      ok_ = false;
      return x;
    }
    std::memcpy(&x, rest_.data(), sizeof(T));
    rest_.remove_prefix(sizeof(T));
    return x;
  }
  // Into a std::vector<T>, or any vector of T (`Vector`, e.g. with another
  // allocator).
  template <typename T, typename Vector = std::vector<T>>
  Vector GetArray() {
    static_assert(std::is_trivially_copyable_v<T>);
    const uint64_t n = Get<uint64_t>();
    Vector xs;
    if (!ok_ || n > rest_.size() / sizeof(T)) {
      ok_ = false;
      return xs;
    }
    if (n == 0) return xs;  // (memcpy wants a non-null pointer even for 0)
    xs.resize(n);
    std::memcpy(xs.data(), rest_.data(), n * sizeof(T));
    rest_.remove_prefix(n * sizeof(T));
    return xs;
  }
  bool ok() const { return ok_; }
  bool done() const { return ok_ && rest_.empty(); }
  size_t remaining() const { return rest_.size(); }  // bytes not yet read

 private:
  std::string_view rest_;
  bool ok_ = true;
};

}  // namespace strag

#endif  // STRAG_SRC_BASE_BYTE_PACK_H_
