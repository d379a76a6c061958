// SPDX-License-Identifier: Apache-2.0
// UninitBuffer<T>: a growable array whose elements are not initialised.
//
// For large scratch arrays that are fully overwritten before being read
// (replay times, scenario costs): std::vector::resize would zero-fill them on
// every growth, which costs as much as the work itself on million-op traces.

#ifndef STRAG_SRC_BASE_UNINIT_BUFFER_H_
#define STRAG_SRC_BASE_UNINIT_BUFFER_H_

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>

namespace strag {

template <typename T>
class UninitBuffer {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  // Makes size() == n; keeps the storage when it is large enough. Contents
  // are unspecified afterwards.
  void Resize(size_t n) {
    if (n > capacity_) {
      data_ = std::make_unique_for_overwrite<T[]>(n);
      capacity_ = n;
    }
    size_ = n;
  }

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  std::span<const T> span() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<T[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace strag

#endif  // STRAG_SRC_BASE_UNINIT_BUFFER_H_
