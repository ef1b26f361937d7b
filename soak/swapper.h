#pragma once

// Catalog swaps, each checked through GetCatalog.

#include "soak/common.h"

namespace compatd::soak {

// ---------------------------------------------------------------------------
// Catalog swaps, each checked through GetCatalog.

inline absl::Time FromTimestamp(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

class Swapper {
 public:
  Swapper(Env* env, uint64_t initial_generation)
      : env_(*env),
        rng_(env->seed * 15485863 + 2),
        variant_a_(VariantA(env->base_catalog)),
        variant_b_(VariantB(env->base_catalog)),
        generation_(initial_generation) {}

  void Run() {
    stub_ = v1::CompatibilityPolicy::NewStub(
        NewChannel(env_, "compatd-soak-swapper/1.0", ++g_channel_serial));
    const auto interval = absl::ToChronoNanoseconds(env_.options.swap_interval);
    auto next = Clock::now() + interval;
    while (!env_.stop.load()) {
      std::this_thread::sleep_until(next);
      next = std::max(next + interval, Clock::now());
      if (env_.stop.load()) break;
      if (Below(rng_, 5) == 0) {
        std::string kind;
        const std::string bytes =
            BadVariant(rng_, env_.base_catalog, ++bad_serial_, &kind);
        ++bad_kinds_[kind];
        const absl::Time before = absl::Now();
        if (WriteThenRename(bytes)) VerifyRejected(before, kind);
      } else {
        const bool b = next_is_b_;
        const auto start = Clock::now();
        if (WriteThenRename(b ? variant_b_ : variant_a_)) {
          VerifyLoaded(b ? env_.facts.digest_b : env_.facts.digest_a, start);
        }
      }
    }
  }

  const Tally& tally() const { return tally_; }
  uint64_t good() const { return good_.load(); }
  uint64_t bad() const { return bad_.load(); }
  uint64_t generation() const { return generation_seen_.load(); }
  const std::vector<double>& load_ms() const { return load_ms_; }
  const std::vector<double>& reject_ms() const { return reject_ms_; }
  const std::map<std::string, uint64_t>& bad_kinds() const {
    return bad_kinds_;
  }
  const std::string& serving_digest() const { return previous_digest_; }

 private:
  bool WriteThenRename(const std::string& bytes) {
    const std::string tmp = env_.catalog_dir + "/.catalog.yaml.soak-tmp";
    bool ok = false;
    if (FILE* f = std::fopen(tmp.c_str(), "wb")) {
      ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
      ok = std::fclose(f) == 0 && ok;
    }
    ok = ok && std::rename(tmp.c_str(), env_.catalog_path.c_str()) == 0;
    if (!ok) {
      env_.failures.Add("catalog swap",
                        absl::StrCat("cannot write and rename ", tmp, ": ",
                                     std::strerror(errno)));
    }
    return ok;
  }

  std::optional<v1::GetCatalogResponse> GetCatalog() {
    grpc::ClientContext context;
    context.set_deadline(Deadline(env_.options.call_timeout));
    v1::GetCatalogResponse response;
    const grpc::Status status =
        stub_->GetCatalog(&context, v1::GetCatalogRequest(), &response);
    Count(tally_, Class::kSwapCheck, "GetCatalog", status.error_code());
    env_.calls.fetch_add(1, std::memory_order_relaxed);
    if (!status.ok()) {
      if (env_.QuotaCollateral(status, "GetCatalog (swap check)")) {
        return std::nullopt;
      }
      env_.failures.Add(
          "unexpected status code",
          absl::StrCat(
              "GetCatalog (swap check): ", CodeName(status.error_code()), " \"",
              Shorten(status.error_message()), "\"; expected OK"));
      return std::nullopt;
    }
    return response;
  }

  void VerifyLoaded(const std::string& digest, Clock::time_point start) {
    const auto deadline =
        start + absl::ToChronoNanoseconds(env_.options.reload_timeout);
    while (true) {
      std::optional<v1::GetCatalogResponse> r = GetCatalog();
      if (r.has_value() && r->digest() == digest) {
        if (r->generation() != generation_ + 1) {
          env_.failures.Add(
              "catalog swap",
              absl::StrCat("a good catalog was published as generation ",
                           r->generation(), " after generation ", generation_,
                           " (want +1)"));
        }
        load_ms_.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start)
                .count());
        Settle(*r);
        ++good_;
        return;
      }
      if (r.has_value() && r->digest() != previous_digest_) {
        env_.failures.Add(
            "catalog swap",
            absl::StrCat("while waiting for ", digest, ", GetCatalog reports ",
                         r->digest(), ", neither it nor the previous ",
                         previous_digest_));
      }
      if (Clock::now() > deadline) {
        env_.failures.Add(
            "catalog swap",
            absl::StrCat("good catalog ", digest, " not served within ",
                         absl::FormatDuration(env_.options.reload_timeout),
                         " of its rename"));
        if (r.has_value()) Settle(*r);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  // The catalog now serving, as GetCatalog reports it.
  void Settle(const v1::GetCatalogResponse& r) {
    generation_ = r.generation();
    generation_seen_.store(generation_);
    previous_digest_ = r.digest();
    next_is_b_ = previous_digest_ != env_.facts.digest_b;
  }

  void VerifyRejected(absl::Time before, const std::string& kind) {
    const auto start = Clock::now();
    const auto deadline =
        start + absl::ToChronoNanoseconds(env_.options.reload_timeout);
    while (true) {
      std::optional<v1::GetCatalogResponse> r = GetCatalog();
      if (r.has_value() &&
          (r->digest() != previous_digest_ || r->generation() != generation_)) {
        env_.failures.Add(
            "bad catalog replaced a good one",
            absl::StrCat("after a bad catalog (", kind,
                         "), GetCatalog reports generation ", r->generation(),
                         " digest ", r->digest(),
                         "; still serving should be "
                         "generation ",
                         generation_, " digest ", previous_digest_));
        Settle(*r);
        return;
      }
      if (r.has_value() && !r->last_error().empty() &&
          FromTimestamp(r->last_error_at()) >= before - absl::Milliseconds(1)) {
        reject_ms_.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start)
                .count());
        ++bad_;
        return;
      }
      if (Clock::now() > deadline) {
        env_.failures.Add(
            "catalog swap",
            absl::StrCat("bad catalog (", kind, ") not reported by GetCatalog ",
                         "last_error within ",
                         absl::FormatDuration(env_.options.reload_timeout)));
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  Env& env_;
  Rng rng_;
  const std::string variant_a_;
  const std::string variant_b_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
  uint64_t generation_;
  std::string previous_digest_ = env_.facts.digest_a;
  bool next_is_b_ = true;
  uint64_t bad_serial_ = 0;
  std::atomic<uint64_t> good_{0};
  std::atomic<uint64_t> bad_{0};
  std::atomic<uint64_t> generation_seen_{0};
  std::vector<double> load_ms_;
  std::vector<double> reject_ms_;
  std::map<std::string, uint64_t> bad_kinds_;
  Tally tally_;
};

}  // namespace compatd::soak
