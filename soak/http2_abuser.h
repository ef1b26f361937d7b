#pragma once

// The gRPC port's abuses: declared-huge messages, rapid reset, slow readers.

#include "soak/common.h"

namespace compatd::soak {

constexpr char kGetFeaturePath[] = "/compatd.v1.CompatibilityPolicy/GetFeature";
constexpr char kEvaluatePath[] = "/compatd.v1.CompatibilityPolicy/Evaluate";

// The gRPC port's abuses, in turn: a message whose prefix declares 1 GiB
// (cut at --grpc-memory-bytes), rapid reset bursts, and slow readers.
class Http2Abuser {
 public:
  explicit Http2Abuser(Env* env) : env_(*env), rng_(env->seed * 9973 + 5) {}

  void Run() {
    const Options& o = env_.options;
    auto next_prefix = Clock::now();
    auto next_reset = Clock::now() + std::chrono::seconds(2);
    auto next_readers = Clock::now() + std::chrono::seconds(4);
    while (!env_.stop.load()) {
      const auto now = Clock::now();
      if (o.huge_prefix && now >= next_prefix) {
        HugePrefix();
        next_prefix = Clock::now() + std::chrono::seconds(10);
      } else if (o.rapid_reset && now >= next_reset) {
        RapidReset();
        next_reset = Clock::now() + std::chrono::seconds(5);
      } else if (o.slow_reader && now >= next_readers) {
        SlowReaders();
        next_readers = Clock::now() + std::chrono::seconds(3);
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  }

  const Outcomes& outcomes() const { return outcomes_; }
  int64_t max_prefix_mib() const { return max_prefix_mib_; }

 private:
  // HEADERS, a 5-byte prefix declaring 1 GiB, then 1 MiB DATA frames until
  // compatd refuses (RST_STREAM, GOAWAY or close) or, a failure, takes
  // more than --grpc-memory-bytes (64 MiB) + 32 MiB.
  void HugePrefix() {
    env_.quota_attack_until.store(INT64_MAX, std::memory_order_relaxed);
    struct EndOfAttack {
      Env& env;
      ~EndOfAttack() {
        env.quota_attack_until.store(
            (Clock::now() + kQuotaCollateralGrace).time_since_epoch().count(),
            std::memory_order_relaxed);
      }
    } end_of_attack{env_};
    testing::RawHttp2 attacker;
    if (!attacker.Connect(env_.grpc_port).ok() ||
        !attacker.SendHeaders(1, kGetFeaturePath).ok()) {
      ++outcomes_["huge prefix: cannot connect"];
      return;
    }
    absl::Status cut = attacker.SendData(
        1, std::string(1, '\0') + testing::RawHttp2::Uint32(1u << 30));
    const std::string chunk(1 << 20, 'A');
    int64_t sent = 0;
    while (cut.ok() && sent < kHugePrefixGiveUpMiB && !env_.stop.load()) {
      cut = attacker.SendData(1, chunk, false, std::chrono::milliseconds(5000));
      if (cut.ok()) ++sent;
    }
    if (env_.stop.load() && cut.ok()) return;
    max_prefix_mib_ = std::max(max_prefix_mib_, sent);
    std::string how = "no flow-control window";
    if (absl::IsUnavailable(cut)) {
      absl::StatusOr<std::optional<testing::RawHttp2::Frame>> frame =
          attacker.Next(std::chrono::milliseconds(0));
      if (frame.ok() && frame->has_value() &&
          (*frame)->type == testing::RawHttp2::kRstStream &&
          (*frame)->payload.size() == 4) {
        how = absl::StrCat("RST_STREAM ",
                           testing::RawHttp2::ReadUint32((*frame)->payload, 0));
      } else if (frame.ok() && frame->has_value() &&
                 (*frame)->type == testing::RawHttp2::kGoAway) {
        how = "GOAWAY";
      } else {
        how = "connection closed";
      }
    }
    ++outcomes_[absl::StrCat("huge prefix: refused (", how, ")")];
    if (cut.ok()) {
      env_.failures.Add(
          "huge message not refused",
          absl::StrCat("a message declaring 1 GiB took ", sent,
                       " MiB without a refusal (--grpc-memory-bytes is ",
                       kGrpcMemoryMiB, " MiB)"));
    }
  }

  // HEADERS then RST_STREAM, kRapidResetStreams times on one connection
  // (CVE-2023-44487), then a second of reading what comes back.
  void RapidReset() {
    testing::RawHttp2 attacker;
    if (!attacker.Connect(env_.grpc_port).ok()) {
      ++outcomes_["rapid reset: cannot connect"];
      return;
    }
    std::string frames;
    uint32_t stream = 1;
    bool sent = true;
    for (int i = 0; i < kRapidResetStreams && sent; ++i, stream += 2) {
      frames += attacker.HeadersFrame(stream, kGetFeaturePath);
      testing::RawHttp2::AppendFrame(&frames, testing::RawHttp2::kRstStream, 0,
                                     stream, testing::RawHttp2::Uint32(8));
      if (frames.size() > 64 * 1024) {
        sent = attacker.Send(frames).ok();
        frames.clear();
      }
    }
    if (sent) sent = attacker.Send(frames).ok();
    bool goaway = false;
    const auto end = Clock::now() + std::chrono::seconds(1);
    while (Clock::now() < end) {
      absl::StatusOr<std::optional<testing::RawHttp2::Frame>> frame =
          attacker.Next(std::chrono::milliseconds(50));
      if (!frame.ok()) break;
      if (frame->has_value() && (*frame)->type == testing::RawHttp2::kGoAway) {
        goaway = true;
      }
    }
    ++outcomes_[absl::StrCat("rapid reset: burst of ", kRapidResetStreams,
                             " streams, ",
                             !sent    ? "connection closed during the burst"
                             : goaway ? "GOAWAY"
                                      : "connection kept")];
  }

  // kSlowReaders connections announcing INITIAL_WINDOW_SIZE 0, each asking
  // kSlowReaderStreams Evaluate answers of ten ListFeatures (~0.7 MB each)
  // that they never read; held for 2 s, then closed.
  void SlowReaders() {
    v1::EvaluateRequest evaluate;
    for (int i = 0; i < 10; ++i) evaluate.add_items()->mutable_list_features();
    const std::string message =
        testing::RawHttp2::GrpcMessage(evaluate.SerializeAsString());
    std::vector<std::unique_ptr<testing::RawHttp2>> readers;
    for (int c = 0; c < kSlowReaders; ++c) {
      auto reader = std::make_unique<testing::RawHttp2>();
      if (!reader
               ->Connect(env_.grpc_port, true,
                         {{testing::RawHttp2::kSettingsInitialWindowSize, 0}})
               .ok()) {
        ++outcomes_["slow readers: cannot connect"];
        continue;
      }
      std::string frames;
      for (uint32_t stream = 1; stream < 2 * kSlowReaderStreams; stream += 2) {
        frames += reader->HeadersFrame(stream, kEvaluatePath);
        testing::RawHttp2::AppendFrame(&frames, testing::RawHttp2::kData,
                                       testing::RawHttp2::kEndStream, stream,
                                       message);
      }
      (void)reader->Send(frames);
      readers.push_back(std::move(reader));
    }
    const auto end = Clock::now() + std::chrono::seconds(2);
    while (Clock::now() < end && !env_.stop.load()) {
      for (auto& reader : readers)
        (void)reader->Next(std::chrono::milliseconds(10));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    outcomes_["slow readers: unread Evaluate answers asked"] +=
        readers.size() * kSlowReaderStreams;
  }

  Env& env_;
  Rng rng_;
  Outcomes outcomes_;
  int64_t max_prefix_mib_ = 0;
};

}  // namespace compatd::soak
