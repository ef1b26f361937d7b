#pragma once

// compatd's command line: the server's flags, and the offline subcommands
// (eval, lint, plan, scan), each with its own flags, --help and exit codes.
// A subcommand refuses the server's flags, and the other subcommands', by
// name.

#include <optional>

#include "service/server_options.h"

namespace compatd::service {

// Runs what argv asks: a subcommand, --check-catalog, --help or --version
// (or prints a usage error), and returns its exit code; nullopt when argv
// asks to serve, with `server` set from the flags.
std::optional<int> RunCommandLine(int argc, char** argv, ServerOptions* server);

}  // namespace compatd::service
