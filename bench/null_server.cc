// null_server: compatd.v1.CompatibilityPolicy with canned answers and no
// engine work, to measure what the transport alone costs. It is built like
// compatd's server (service/server.cc): the same gRPC library, a
// grpc::ServerBuilder with default threading, the callback API answering with
// DefaultReactor(), the default health service; it does nothing else (no
// catalog, metrics or client tracking). compatd's QPS divided by this server's,
// same load generator, same CPU pinning, is the headline of BENCHMARKS.md.
//
//   null_server --listen=127.0.0.1:0 [--responses=DIR]
//
// Each unary method the load generator sends answers with one fixed response:
// DIR/<Method>.json (protobuf JSON, e.g. from `compatd eval`, so that the
// bytes on the wire are compatd's own) when present, else a built-in response
// of the same shape. Other methods answer UNIMPLEMENTED. Logs
// "gRPC listening on HOST:PORT" on stderr like compatd; stops on SIGTERM or
// SIGINT.

#include <pthread.h>
#include <signal.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/flags.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"

namespace compatd::bench {
namespace {

constexpr char kDigest[] =
    "sha256:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

template <typename Response>
void FillCommonCanned(Response* r, absl::string_view reason) {
  r->mutable_versions()->set_binary_version("1.36");
  r->mutable_versions()->set_emulation_version("1.36");
  r->mutable_versions()->set_min_compatibility_version("1.35");
  r->set_reason(std::string(reason));
  r->set_catalog_generation(1);
  r->set_catalog_digest(kDigest);
}

// Loads DIR/<name>.json into `message` when the file exists.
absl::Status MaybeLoad(const std::string& dir, absl::string_view name,
                       google::protobuf::Message* message) {
  if (dir.empty()) return absl::OkStatus();
  const std::string path = absl::StrCat(dir, "/", name, ".json");
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::OkStatus();
  std::stringstream json;
  json << in.rdbuf();
  message->Clear();
  const auto status =
      google::protobuf::util::JsonStringToMessage(json.str(), message);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a ", message->GetTypeName(),
                     " in protobuf JSON: ", status.ToString()));
  }
  return absl::OkStatus();
}

class NullService final : public v1::CompatibilityPolicy::CallbackService {
 public:
  absl::Status Init(const std::string& dir) {
    FillCommonCanned(&get_feature_,
                     "BETA since 1.33, default on (kube-apiserver "
                     "emulating 1.36)");
    get_feature_.set_name("WatchList");
    get_feature_.set_enabled(true);
    get_feature_.set_stage(v1::STAGE_BETA);
    get_feature_.set_default_enabled(true);
    get_feature_.set_component("kube-apiserver");
    get_feature_.set_since("1.33");

    FillCommonCanned(&check_skew_,
                     "kubelet 1.34 is within the allowed range 1.33 to 1.36 "
                     "(min-compatibility 1.35 - 2 to emulation 1.36)");
    check_skew_.set_allowed(true);
    check_skew_.set_verdict(v1::SKEW_VERDICT_ALLOWED);
    check_skew_.set_min_version("1.33");
    check_skew_.set_max_version("1.36");

    FillCommonCanned(&get_storage_version_,
                     "apps/v1 is the first version of apps (in priority "
                     "order) introduced by min-compatibility 1.35");
    get_storage_version_.set_group("apps");
    get_storage_version_.set_resource("deployments");
    get_storage_version_.set_kind("Deployment");
    get_storage_version_.set_version("v1");
    get_storage_version_.set_storage_version_hash("8aSe+NMegvE=");
    get_storage_version_.add_decodable_versions("apps/v1");

    FillCommonCanned(&resolve_versions_,
                     "binary 1.36 emulating 1.36, compatible down to 1.35");
    resolve_versions_.set_major("1");
    resolve_versions_.set_minor("36");
    resolve_versions_.set_emulation_major("1");
    resolve_versions_.set_emulation_minor("36");
    resolve_versions_.set_min_compatibility_major("1");
    resolve_versions_.set_min_compatibility_minor("35");
    resolve_versions_.set_git_version("v1.36");

    FillCommonCanned(&list_api_versions_,
                     "1 group-versions serving 1 resources at emulation "
                     "version 1.36");
    v1::APIGroupVersion* gv = list_api_versions_.add_group_versions();
    gv->set_group("apps");
    gv->set_version("v1");
    gv->add_resources("deployments");
    gv->set_reason("GA since 1.9, enabled by default");

    FillCommonCanned(&list_features_,
                     "1 feature gates at emulation version 1.36, 1 enabled");
    v1::FeatureDecision* f = list_features_.add_features();
    f->set_name("WatchList");
    f->set_enabled(true);
    f->set_stage(v1::STAGE_BETA);
    f->set_default_enabled(true);
    f->set_component("kube-apiserver");
    f->set_since("1.33");
    f->set_reason("BETA since 1.33, default on");

    FillCommonCanned(&get_catalog_, "catalog generation 1 from embedded");
    get_catalog_.set_generation(1);
    get_catalog_.set_digest(kDigest);
    get_catalog_.set_source("embedded:kubernetes-1.36");
    get_catalog_.set_binary_version("1.36");

    for (auto [name, message] :
         std::vector<std::pair<absl::string_view, google::protobuf::Message*>>{
             {"GetFeature", &get_feature_},
             {"CheckSkew", &check_skew_},
             {"GetStorageVersion", &get_storage_version_},
             {"ResolveVersions", &resolve_versions_},
             {"ListAPIVersions", &list_api_versions_},
             {"ListFeatures", &list_features_},
             {"GetCatalog", &get_catalog_}}) {
      if (absl::Status s = MaybeLoad(dir, name, message); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  grpc::ServerUnaryReactor* GetFeature(grpc::CallbackServerContext* context,
                                       const v1::GetFeatureRequest*,
                                       v1::GetFeatureResponse* r) override {
    return Answer(context, get_feature_, r);
  }
  grpc::ServerUnaryReactor* CheckSkew(grpc::CallbackServerContext* context,
                                      const v1::CheckSkewRequest*,
                                      v1::CheckSkewResponse* r) override {
    return Answer(context, check_skew_, r);
  }
  grpc::ServerUnaryReactor* GetStorageVersion(
      grpc::CallbackServerContext* context, const v1::GetStorageVersionRequest*,
      v1::GetStorageVersionResponse* r) override {
    return Answer(context, get_storage_version_, r);
  }
  grpc::ServerUnaryReactor* ResolveVersions(
      grpc::CallbackServerContext* context, const v1::ResolveVersionsRequest*,
      v1::ResolveVersionsResponse* r) override {
    return Answer(context, resolve_versions_, r);
  }
  grpc::ServerUnaryReactor* ListAPIVersions(
      grpc::CallbackServerContext* context, const v1::ListAPIVersionsRequest*,
      v1::ListAPIVersionsResponse* r) override {
    return Answer(context, list_api_versions_, r);
  }
  grpc::ServerUnaryReactor* ListFeatures(grpc::CallbackServerContext* context,
                                         const v1::ListFeaturesRequest*,
                                         v1::ListFeaturesResponse* r) override {
    return Answer(context, list_features_, r);
  }
  grpc::ServerUnaryReactor* GetCatalog(grpc::CallbackServerContext* context,
                                       const v1::GetCatalogRequest*,
                                       v1::GetCatalogResponse* r) override {
    return Answer(context, get_catalog_, r);
  }

 private:
  template <typename Response>
  static grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                          const Response& canned,
                                          Response* response) {
    *response = canned;
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  v1::GetFeatureResponse get_feature_;
  v1::CheckSkewResponse check_skew_;
  v1::GetStorageVersionResponse get_storage_version_;
  v1::ResolveVersionsResponse resolve_versions_;
  v1::ListAPIVersionsResponse list_api_versions_;
  v1::ListFeaturesResponse list_features_;
  v1::GetCatalogResponse get_catalog_;
};

int Main(int argc, char** argv) {
  std::string listen = "127.0.0.1:50052";
  std::string responses;
  bool help = false;
  base::FlagTable flags;
  flags.AddString("listen", &listen,
                  "gRPC listen address host:port (port 0 picks a free port)");
  flags.AddString("responses", &responses,
                  "directory of <Method>.json canned responses (protobuf "
                  "JSON); built-in ones otherwise");
  flags.AddBool("help", &help, "print this help and exit");
  std::vector<std::string> positional;
  if (absl::Status s = flags.Parse(argc, argv, 1, &positional); !s.ok()) {
    std::cerr << "null_server: " << s.message() << "\n";
    return 2;
  }
  if (help) {
    std::cout << "null_server: CompatibilityPolicy with canned answers (the "
                 "transport's own limit)\n\nFlags:\n"
              << flags.Usage();
    return 0;
  }
  if (!positional.empty()) {
    std::cerr << "null_server: unexpected argument \"" << positional[0]
              << "\"\n";
    return 2;
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  NullService service;
  if (absl::Status s = service.Init(responses); !s.ok()) {
    std::cerr << "null_server: " << s.message() << "\n";
    return 1;
  }
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::cerr << "null_server: cannot listen on --listen=" << listen << "\n";
    return 1;
  }
  const std::string host = listen.substr(0, listen.rfind(':'));
  std::cerr << "I gRPC listening on " << host << ":" << port << std::endl;
  int signal_number = 0;
  while (sigwait(&signals, &signal_number) != 0) {
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server->Wait();
  return 0;
}

}  // namespace
}  // namespace compatd::bench

int main(int argc, char** argv) { return compatd::bench::Main(argc, argv); }
