#pragma once

// What happened to the catalog: the last rejected reload (for GetCatalog) and
// the subscribers that want every published catalog (WatchCatalog streams).
// Thread-safe.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "runtime/serving_snapshot.h"

namespace compatd::runtime {

class CatalogEvents final {
 public:
  // Receives published snapshots until Close(). Implementations must not block
  // and must tolerate calls from any thread.
  class Subscriber {
   public:
    virtual ~Subscriber() = default;
    virtual void OnPublished(
        std::shared_ptr<const ServingSnapshot> snapshot) = 0;
    // The server is shutting down: finish the stream.
    virtual void OnClose() = 0;
  };

  struct Error {
    std::string
        message;  // "catalog.yaml:12: unknown key ..." lines; empty: none
    absl::Time at = absl::InfinitePast();
  };

  CatalogEvents() = default;
  CatalogEvents(const CatalogEvents&) = delete;
  CatalogEvents& operator=(const CatalogEvents&) = delete;

  // A snapshot was published from `source` (a catalog's name; one process
  // may serve several files, one per release line): clears that source's
  // last error and notifies every subscriber.
  void Published(std::shared_ptr<const ServingSnapshot> snapshot,
                 absl::string_view source = "");
  // The file on disk is the catalog now serving again: clears its last error.
  void Unchanged(absl::string_view source = "");
  // A reload of `source` was rejected; its previous catalog keeps serving.
  void Rejected(std::string message, absl::Time at,
                absl::string_view source = "");

  // The latest rejection of any source (empty when every source's last
  // reload succeeded).
  Error LastError() const;
  // The last rejection of one source.
  Error LastError(absl::string_view source) const;

  // False once closed (the subscriber is then not added).
  bool Subscribe(std::shared_ptr<Subscriber> subscriber);
  void Unsubscribe(const Subscriber* subscriber);
  // Closes every subscriber; later Subscribe() calls fail.
  void Close();

 private:
  mutable std::mutex mu_;
  // By source name; an entry is erased when its source loads again.
  absl::flat_hash_map<std::string, Error> last_errors_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::shared_ptr<Subscriber>> subscribers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace compatd::runtime
