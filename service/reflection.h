#pragma once

// gRPC server reflection (grpc.reflection.v1 and grpc.reflection.v1alpha:
// grpcurl tries v1, then falls back to v1alpha) over compatd's embedded
// descriptor set. That set keeps the .proto comments (source_code_info) and
// holds grpc/health/v1/health.proto, so `grpcurl describe` shows every RPC and
// message with its comments and can call Health/Check. gRPC's own
// ProtoServerReflection serves the generated descriptor pool instead, which has
// neither.
//
//   ASSIGN_OR_RETURN(auto services, CreateReflectionServices({
//       "compatd.v1.CompatibilityPolicy", "grpc.health.v1.Health",
//       "grpc.reflection.v1.ServerReflection",
//       "grpc.reflection.v1alpha.ServerReflection"}));
//   for (auto& s : services) builder.RegisterService(s.get());  // keep
//   `services` alive

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"

namespace compatd::service {

// The files, symbols and extensions that reflection answers from. Immutable
// once created; thread-safe.
class ReflectionIndex final {
 public:
  // Builds the index from a serialized google.protobuf.FileDescriptorSet whose
  // files come after their dependencies (as `protoc --include_imports` writes
  // them). `service_names` is what list_services answers, in this order; each
  // must be a service the set defines. INVALID_ARGUMENT for bytes that are not
  // a FileDescriptorSet or for a file that does not build (duplicate, missing
  // dependency, unknown type); NOT_FOUND for a service name the set does not
  // define.
  static absl::StatusOr<std::shared_ptr<const ReflectionIndex>> Create(
      absl::string_view descriptor_set, std::vector<std::string> service_names);

  ReflectionIndex(const ReflectionIndex&) = delete;
  ReflectionIndex& operator=(const ReflectionIndex&) = delete;

  const std::vector<std::string>& service_names() const {
    return service_names_;
  }

  // The name of the file that defines `symbol`, a fully-qualified service,
  // method, message (nested ones too), enum, enum value, field, oneof or
  // extension: "compatd.v1.CompatibilityPolicy.GetFeature",
  // "compatd.v1.GetFeatureRequest.name". An enum value is found both where
  // protobuf scopes it ("compatd.v1.SKEW_VERDICT_ALLOWED") and under its enum
  // ("compatd.v1.SkewVerdict.SKEW_VERDICT_ALLOWED", as grpc-go's reflection
  // server has indexed them). NOT_FOUND for anything else, packages included.
  absl::StatusOr<std::string> FileContainingSymbol(
      absl::string_view symbol) const;

  // The name of the file that defines extension `number` of message
  // `message_type`
  // ("google.protobuf.MessageOptions"). NOT_FOUND for an unknown message or
  // extension.
  absl::StatusOr<std::string> FileContainingExtension(
      absl::string_view message_type, int number) const;

  // The field numbers of every extension of message `message_type`, ascending;
  // empty if it has none. NOT_FOUND for an unknown message.
  absl::StatusOr<std::vector<int>> ExtensionNumbers(
      absl::string_view message_type) const;

  // The serialized FileDescriptorProtos (comments included) of `file` and of
  // those of its transitive dependencies whose names are not in `*sent`, `file`
  // first, then breadth-first; adds the names of the files returned to `*sent`.
  // `file` itself is always returned, so a client may ask for it again. The
  // views live as long as the index. NOT_FOUND for an unknown file.
  absl::StatusOr<std::vector<absl::string_view>> FileWithDependencies(
      absl::string_view file, absl::flat_hash_set<std::string>* sent) const;

 private:
  struct File {
    const google::protobuf::FileDescriptor* descriptor;
    std::string serialized;  // the FileDescriptorProto as it came in the set
  };

  ReflectionIndex() = default;
  void AddSymbols(const google::protobuf::FileDescriptor& file);
  void AddMessageSymbols(const google::protobuf::Descriptor& message);
  void AddEnumSymbols(const google::protobuf::EnumDescriptor& enum_type);
  void AddSymbol(const std::string& name,
                 const google::protobuf::FileDescriptor& file);

  google::protobuf::DescriptorPool pool_;
  std::vector<std::string> service_names_;
  absl::flat_hash_map<std::string, File> files_;  // by file name
  absl::flat_hash_map<std::string, std::string>
      symbols_;  // symbol -> file name
};

// The two reflection services, grpc.reflection.v1.ServerReflection and
// grpc.reflection.v1alpha.ServerReflection (same protocol, same answers), for
// ServerBuilder::RegisterService; they must outlive the server. Callback API:
// handlers never block. Each stream remembers which files it has sent and sends
// a dependency only once (as grpc-go does). A lookup that fails is an
// error_response (NOT_FOUND; INVALID_ARGUMENT for a request with no
// message_request) and the stream stays open.
std::vector<std::unique_ptr<grpc::Service>> CreateReflectionServices(
    std::shared_ptr<const ReflectionIndex> index);

// The same over compatd's embedded descriptor set
// (compatd::proto::kDescriptorSet: the API, catalog.proto, grpc.health.v1, both
// reflection protocols and their imports). `service_names` as for
// ReflectionIndex::Create, which gives the errors.
absl::StatusOr<std::vector<std::unique_ptr<grpc::Service>>>
CreateReflectionServices(std::vector<std::string> service_names);

}  // namespace compatd::service
