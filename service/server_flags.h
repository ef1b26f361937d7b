#pragma once

// The server's flags (docs/running.md), in sections by what they
// tune; main() and the subcommands' checks share them.

#include "base/flags.h"
#include "service/server_options.h"

namespace compatd::service {

// Adds every server flag, bound to `server`, under its section's heading.
void AddServerFlags(base::FlagTable* flags, ServerOptions* server);

}  // namespace compatd::service
