// The HTTP front door's null server: the same HTTP library and settings as
// compatd's --http-listen (http/server.h), answering every request with a
// canned body and no work. `make bench` states compatd's server CPU per HTTP
// call as a ratio to this one's, measured in the same run (BENCHMARKS.md).
//
//   null_http_server --listen=127.0.0.1:0 --response=FILE
//
// Prints "HTTP listening on HOST:PORT" once serving; stops on SIGTERM/SIGINT.

#include <signal.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "base/flags.h"
#include "http/server.h"

int main(int argc, char** argv) {
  std::string listen = "127.0.0.1:0";
  std::string response_file;
  compatd::base::FlagTable flags;
  flags.AddString("listen", &listen, "host:port to serve (loopback only)");
  flags.AddString("response", &response_file,
                  "file whose bytes answer every request (JSON)");
  std::vector<std::string> positional;
  if (absl::Status s = flags.Parse(argc, argv, 1, &positional); !s.ok()) {
    std::cerr << "null_http_server: " << s.message() << "\n";
    return 2;
  }
  if (listen.rfind("127.", 0) != 0) {
    std::cerr << "null_http_server: --listen must be a loopback address\n";
    return 2;
  }
  std::string canned = "{}";
  if (!response_file.empty()) {
    std::ifstream in(response_file, std::ios::binary);
    if (!in) {
      std::cerr << "null_http_server: cannot read " << response_file << "\n";
      return 2;
    }
    std::stringstream text;
    text << in.rdbuf();
    canned = text.str();
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  compatd::http::Server::Options options;
  options.address = listen;
  options.flag = "--listen";
  absl::StatusOr<std::unique_ptr<compatd::http::Server>> server =
      compatd::http::Server::Start(
          options, [&canned](const compatd::http::Request&,
                             compatd::http::Response* response) {
            response->body = canned;
          });
  if (!server.ok()) {
    std::cerr << "null_http_server: " << server.status().message() << "\n";
    return 1;
  }
  std::cerr << "HTTP listening on " << listen.substr(0, listen.rfind(':'))
            << ":" << (*server)->port() << std::endl;
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  (*server)->Stop();
  return 0;
}
