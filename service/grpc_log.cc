#include "service/grpc_log.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/log.h"
#include "grpc/support/log.h"

namespace compatd::service {
namespace {

void LogGrpcLine(gpr_log_func_args* args) {
  absl::string_view file = args->file != nullptr ? args->file : "grpc";
  if (const size_t slash = file.rfind('/'); slash != absl::string_view::npos) {
    file.remove_prefix(slash + 1);
  }
  const std::string site = absl::StrCat(file, ":", args->line);
  const base::LogLevel level = args->severity == GPR_LOG_SEVERITY_ERROR
                                   ? base::LogLevel::kError
                                   : base::LogLevel::kInfo;
  // One kind per call site: the same failure from many clients is one kind,
  // whatever its message says about each.
  base::LogLimited(
      level, absl::StrCat("grpc:", site),
      absl::StrCat("grpc: ", args->message != nullptr ? args->message : "",
                   " (", site, ")"));
}

}  // namespace

void RouteGrpcLogsThroughCompatdLog() { gpr_set_log_function(LogGrpcLine); }

}  // namespace compatd::service
