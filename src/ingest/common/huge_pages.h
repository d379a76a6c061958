// SPDX-License-Identifier: Apache-2.0
// Transparent huge pages for large buffers that are about to be filled.

#ifndef STRAG_SRC_INGEST_COMMON_HUGE_PAGES_H_
#define STRAG_SRC_INGEST_COMMON_HUGE_PAGES_H_

#include <cstddef>
#include <new>
#include <stdexcept>

namespace strag::ingest {

// Asks the kernel to back the 2 MiB-aligned interior of [data, data + bytes)
// with transparent huge pages when it is first touched. Advice only: the
// contents and the caller's ownership do not change, errors are ignored, and
// it does nothing off Linux or for buffers under 2 MiB.
//
// Why: a reader that fills a freshly reserved 100 MB table takes one page
// fault per 4 KiB otherwise; on virtual machines with costly faults that was
// a third of the time of reading a large trace (see src/ingest/README.md).
// Only what is touched is backed, so reserved capacity beyond the rows
// written costs at most one huge page per buffer. Cost: where the kernel
// compacts memory to find huge pages (THP defrag), a fault may wait for it.
void AdviseHugePages(const void* data, size_t bytes);

// Reserves `rows` in `column` and advises huge pages for it, unless an
// earlier reservation of the set failed (`*reserved` false). A guess from
// the text (a gzip trailer's size, the first lines) may ask for more than
// the address space allows: then `*reserved` turns false and the columns
// just grow as rows come.
template <typename Column>
void ReserveColumn(size_t rows, bool* reserved, Column* column) {
  if (!*reserved) return;
  try {
    column->reserve(rows);
  } catch (const std::bad_alloc&) {
    *reserved = false;
    return;
  } catch (const std::length_error&) {
    *reserved = false;
    return;
  }
  // (Not for a column without one array of its own, trace::ExtraColumn.)
  if constexpr (requires { column->data(); }) {
    AdviseHugePages(column->data(), column->capacity() * sizeof((*column)[0]));
  }
}

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_COMMON_HUGE_PAGES_H_
