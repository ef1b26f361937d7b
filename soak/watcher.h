#pragma once

// WatchCatalog streams.

#include "soak/common.h"

namespace compatd::soak {

// ---------------------------------------------------------------------------
// WatchCatalog streams: open, read a few messages, cancel (or let the
// deadline end them).

class Watcher {
 public:
  Watcher(Env* env, int index)
      : env_(*env), rng_(env->seed * 7919 + static_cast<uint64_t>(index)) {}

  void Run() {
    auto channel = NewChannel(env_, RandomUserAgent(rng_), ++g_channel_serial);
    auto stub = v1::CompatibilityPolicy::NewStub(channel);
    while (!env_.stop.load()) {
      grpc::ClientContext context;
      context.set_deadline(
          Deadline(absl::Milliseconds(500 + Below(rng_, 3500))));
      AddRandomIdentity(rng_, &context);
      const size_t limit = 1 + Below(rng_, 15);
      std::unique_ptr<grpc::ClientReader<v1::GetCatalogResponse>> reader =
          stub->WatchCatalog(&context, v1::WatchCatalogRequest());
      ++streams_;
      v1::GetCatalogResponse message;
      uint64_t previous = 0;
      size_t read = 0;
      bool cancelled = false;
      while (reader->Read(&message)) {
        ++read;
        ++messages_;
        const std::string& digest = message.digest();
        if (digest != env_.facts.digest_a && digest != env_.facts.digest_b) {
          env_.failures.Add(
              "wrong answer",
              absl::StrCat("WatchCatalog announced catalog ", digest,
                           ", which is neither good variant"));
        }
        if (message.generation() <= previous) {
          env_.failures.Add(
              "wrong answer",
              absl::StrCat("WatchCatalog generation ", message.generation(),
                           " after ", previous, " on the same stream"));
        }
        previous = message.generation();
        if (!cancelled && (read >= limit || env_.stop.load())) {
          context.TryCancel();
          cancelled = true;
        }
      }
      const grpc::Status status = reader->Finish();
      Count(tally_, Class::kWatch, "WatchCatalog", status.error_code());
      if (status.error_code() != grpc::StatusCode::CANCELLED &&
          status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED &&
          !env_.QuotaCollateral(status, "WatchCatalog stream")) {
        env_.failures.Add(
            "unexpected status code",
            absl::StrCat("WatchCatalog stream after ", read,
                         " messages: ", CodeName(status.error_code()), " \"",
                         Shorten(status.error_message()),
                         "\"; expected CANCELLED or DEADLINE_EXCEEDED"));
      }
    }
  }

  const Tally& tally() const { return tally_; }
  uint64_t streams() const { return streams_; }
  uint64_t messages() const { return messages_; }

 private:
  Env& env_;
  Rng rng_;
  Tally tally_;
  uint64_t streams_ = 0;
  uint64_t messages_ = 0;
};

}  // namespace compatd::soak
