#pragma once

// The front door (gateway::Gateway) over the embedded Kubernetes 1.36
// catalog, published through the pipeline every process uses, with no
// transport: a test builds an http::Request, calls Handle, and reads the
// answer, parsed as JSON into a google.protobuf.Value.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "api/handlers.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "gateway/gateway.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "http/server.h"
#include "runtime/catalog_pipeline.h"

namespace compatd::gateway {

// The JSON of `text` as a Value; a null Value (and a test failure) if it is
// not JSON.
inline google::protobuf::Value ParseJson(absl::string_view text) {
  google::protobuf::Value value;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(text.data(), text.size()), &value);
  EXPECT_TRUE(status.ok()) << status.ToString() << " in: " << text;
  return value;
}

// Walks `path` ("response.warnings") through objects; a null Value when a
// step is missing.
inline google::protobuf::Value At(const google::protobuf::Value& root,
                                  absl::string_view path) {
  google::protobuf::Value current = root;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    const std::string key(path.substr(start, dot == absl::string_view::npos
                                                 ? absl::string_view::npos
                                                 : dot - start));
    if (!current.has_struct_value()) return google::protobuf::Value();
    const auto& fields = current.struct_value().fields();
    auto it = fields.find(key);
    if (it == fields.end()) return google::protobuf::Value();
    google::protobuf::Value next = it->second;
    current = std::move(next);
    if (dot == absl::string_view::npos) break;
    start = dot + 1;
  }
  return current;
}

inline bool Has(const google::protobuf::Value& root, absl::string_view path) {
  return At(root, path).kind_case() != google::protobuf::Value::KIND_NOT_SET;
}

class GatewayTest : public ::testing::Test {
 protected:
  GatewayTest() {
    runtime::CatalogPipeline::Options options;
    options.derive = api::DeriveAnswers;
    pipeline_ = std::make_unique<runtime::CatalogPipeline>(std::move(options));
    empty_pipeline_ = std::make_unique<runtime::CatalogPipeline>(
        runtime::CatalogPipeline::Options());
    gateway_ = std::make_unique<Gateway>(&handlers_, &pipeline_->store(),
                                         nullptr, nullptr);
    unloaded_ = std::make_unique<Gateway>(&handlers_, &empty_pipeline_->store(),
                                          nullptr, nullptr);
  }

  void SetUp() override {
    absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
        catalog::ParseCatalog(catalog::EmbeddedCatalogYaml(),
                              catalog::EmbeddedCatalogSource());
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    pipeline_->Publish(*std::move(catalog), /*initial=*/true);
  }

  static http::Request MakeRequest(
      absl::string_view method, absl::string_view target,
      absl::string_view body = "",
      std::vector<std::pair<std::string, std::string>> headers = {}) {
    http::Request request;
    request.method = std::string(method);
    request.target = std::string(target);
    const size_t question = request.target.find('?');
    request.path = request.target.substr(0, question);
    if (question != std::string::npos) {
      request.query = request.target.substr(question + 1);
    }
    request.body = std::string(body);
    request.headers = std::move(headers);
    request.peer = "127.0.0.1:1";
    return request;
  }

  http::Response Call(absl::string_view method, absl::string_view target,
                      absl::string_view body = "") const {
    http::Response response;
    gateway_->Handle(MakeRequest(method, target, body), &response);
    return response;
  }

  // The same, on a gateway whose pipeline has published nothing yet.
  http::Response CallUnloaded(absl::string_view method,
                              absl::string_view target,
                              absl::string_view body = "") const {
    http::Response response;
    unloaded_->Handle(MakeRequest(method, target, body), &response);
    return response;
  }

  api::PolicyHandlers handlers_;
  std::unique_ptr<runtime::CatalogPipeline> pipeline_;
  std::unique_ptr<runtime::CatalogPipeline> empty_pipeline_;
  std::unique_ptr<Gateway> gateway_;
  std::unique_ptr<Gateway> unloaded_;
};

}  // namespace compatd::gateway
