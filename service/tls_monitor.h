#pragma once

// Looks at the certificate files of every TLS listener every refresh
// interval, on one thread: re-reads them (http::TlsFileContext::ReloadNow(),
// which logs a rotation or a failed one) and tells the listener's consumer
// (the gRPC port's memory files, service/grpc_credentials.h). /metrics also
// re-reads on a handshake once the interval has passed; the gRPC port has
// nothing else that looks. It also wakes up when a certificate in force
// expires, to say so (http::TlsFileContext::NoteExpiry()): from that moment
// TLS clients fail their handshakes, and the log says why.
//
//   TlsMonitor monitor({{"grpc", &grpc_context, [&] { files.Update(); }}},
//                      absl::Minutes(1));
//   monitor.Start();  ...  monitor.Stop();  // or destroy it

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "http/tls.h"

namespace compatd::service {

class TlsMonitor final {
 public:
  struct Listener {
    std::string name;                // "grpc", "metrics"
    http::TlsFileContext* context;   // must outlive the monitor
    std::function<void()> on_check;  // after each look; may be empty
  };

  TlsMonitor(std::vector<Listener> listeners, absl::Duration refresh);
  ~TlsMonitor();  // Stop()s
  TlsMonitor(const TlsMonitor&) = delete;
  TlsMonitor& operator=(const TlsMonitor&) = delete;

  void Start();
  // Stops and joins the thread promptly (a look in progress finishes).
  void Stop();

 private:
  void Run();
  void Check();
  // NoteExpiry() of every listener; when the next certificate expires.
  absl::Time NoteExpiry();

  const std::vector<Listener> listeners_;
  const absl::Duration refresh_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace compatd::service
