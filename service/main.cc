// compatd: Kubernetes compatibility-version answers over gRPC and HTTPS/JSON.
//
// clang-format off
//   compatd [flags]                   serve (gRPC, health, reflection, /metrics,
//                                     the HTTPS/JSON front door)
//   compatd --check-catalog=FILE      validate a catalog and exit
//   compatd eval|lint|plan|scan ...   one command offline (compatd COMMAND
//                                     --help: its flags, examples, exit codes)
// clang-format on
// The command line is service/commands.h's; the server's flags
// service/server_flags.h's.

#include <optional>

#include "service/commands.h"
#include "service/server.h"

int main(int argc, char** argv) {
  compatd::service::ServerOptions server;
  const std::optional<int> code =
      compatd::service::RunCommandLine(argc, argv, &server);
  if (code.has_value()) return *code;
  return compatd::service::RunServer(server);
}
