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

#include "base/huge_page_allocator.h"

namespace strag {

template <typename T>
class UninitBuffer {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  // Makes size() == n; keeps the storage when it is large enough. Contents
  // are unspecified afterwards.
  void Resize(size_t n) {
    if (n > capacity_) {
      data_.reset();
      data_ = Storage(static_cast<T*>(AllocateBig(n * sizeof(T))), Free{n});
      capacity_ = n;
    }
    size_ = n;
  }

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_.get()[i]; }
  const T& operator[](size_t i) const { return data_.get()[i]; }
  std::span<const T> span() const { return {data_.get(), size_}; }

 private:
  struct Free {
    size_t n = 0;
    void operator()(T* p) const { FreeBig(p, n * sizeof(T)); }
  };
  using Storage = std::unique_ptr<T, Free>;
  Storage data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace strag

#endif  // STRAG_SRC_BASE_UNINIT_BUFFER_H_
