#pragma once

// A protobuf arena whose first block is inside the object, so that one on
// the stack holds a request's and an answer's strings and submessages with no
// malloc and no free (past the block, the arena allocates more as usual):
//
//   StackArena arena;
//   auto* answer = StackArena::Create<v1::GetFeatureResponse>(arena);

#include <cstddef>

#include "google/protobuf/arena.h"

namespace compatd::gateway {

class StackArena {
 public:
  StackArena() : arena_(Options(block_)) {}
  StackArena(const StackArena&) = delete;
  StackArena& operator=(const StackArena&) = delete;

  template <typename Message>
  static Message* Create(StackArena& arena) {
    return google::protobuf::Arena::CreateMessage<Message>(&arena.arena_);
  }

 private:
  static constexpr size_t kBlockBytes = 4096;

  static google::protobuf::ArenaOptions Options(char* block) {
    google::protobuf::ArenaOptions options;
    options.initial_block = block;
    options.initial_block_size = kBlockBytes;
    return options;
  }

  alignas(std::max_align_t) char block_[kBlockBytes];
  google::protobuf::Arena arena_;  // after block_, which it uses
};

}  // namespace compatd::gateway
