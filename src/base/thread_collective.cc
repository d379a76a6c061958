// SPDX-License-Identifier: Apache-2.0
#include "base/thread_collective.h"

#include <thread>

namespace strag {

class ThreadCollective::Member : public Collective {
 public:
  Member(ThreadCollective* group, size_t rank) : group_(group), rank_(rank) {}
  size_t rank() const override { return rank_; }
  size_t size() const override { return group_->size_; }
  Result<std::vector<std::string>> AllGather(std::string bytes) override {
    return group_->Gather(rank_, std::move(bytes));
  }

 private:
  ThreadCollective* group_;
  size_t rank_;
};

// A barrier in two halves: everyone deposits, the last one publishes the
// round's result; the next round starts once everyone has taken a copy.
std::vector<std::string> ThreadCollective::Gather(size_t rank,
                                                  std::string bytes) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return left_ == 0; });  // the previous round is over
  const uint64_t round = round_;
  slots_[rank] = std::move(bytes);
  if (++arrived_ == size_) {
    result_ = std::move(slots_);
    slots_.assign(size_, {});
    arrived_ = 0;
    left_ = size_;
    ++round_;
    cv_.notify_all();
  } else {
    cv_.wait(lock, [&] { return round_ != round; });
  }
  std::vector<std::string> out = result_;
  if (--left_ == 0) cv_.notify_all();
  return out;
}

void ThreadCollective::Run(size_t size,
                           const std::function<void(Collective&)>& fn) {
  ThreadCollective group(size);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < size; ++r) {
    threads.emplace_back([&group, &fn, r] {
      Member m(&group, r);
      fn(m);
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace strag
