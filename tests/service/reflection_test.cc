#include "service/reflection.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/tsan.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/descriptor_database.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/text_format.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::proto {
extern const std::string_view kDescriptorSet;
}  // namespace compatd::proto

namespace compatd::service {
namespace {

using ::compatd::testing::StatusIs;
using ::google::protobuf::FileDescriptorProto;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::IsSupersetOf;
using ::testing::Not;

// Debian 12's abseil has no IsOkAndHolds.
MATCHER_P(IsOkAndHolds, matcher, "") {
  if (!arg.ok()) {
    *result_listener << "status is " << arg.status();
    return false;
  }
  return ::testing::ExplainMatchResult(matcher, *arg, result_listener);
}

constexpr absl::string_view kApiFile = "compatd/v1/compatd.proto";
constexpr absl::string_view kHealthFile = "grpc/health/v1/health.proto";

// What compatd lists: its API, health and both reflection protocols.
std::vector<std::string> ServiceNames() {
  return {"compatd.v1.CompatibilityPolicy", "grpc.health.v1.Health",
          "grpc.reflection.v1.ServerReflection",
          "grpc.reflection.v1alpha.ServerReflection"};
}

absl::string_view EmbeddedDescriptorSet() {
  return absl::string_view(proto::kDescriptorSet.data(),
                           proto::kDescriptorSet.size());
}

// ---------------------------------------------------------------------------------------
// ReflectionIndex, without gRPC.

// Two small files: t/base.proto defines a message with a nested type and an
// extension range; t/ext.proto imports it and extends it (compatd's own protos
// have no extensions).
constexpr absl::string_view kBaseFile = R"pb(
  name: "t/base.proto"
  package: "t"
  message_type {
    name: "Base"
    field { name: "id" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    nested_type { name: "Inner" }
    extension_range { start: 100 end: 200 }
  }
)pb";
constexpr absl::string_view kExtFile = R"pb(
  name: "t/ext.proto"
  package: "t"
  dependency: "t/base.proto"
  extension {
    name: "tag"
    number: 150
    label: LABEL_OPTIONAL
    type: TYPE_STRING
    extendee: ".t.Base"
  }
  extension {
    name: "note"
    number: 101
    label: LABEL_OPTIONAL
    type: TYPE_STRING
    extendee: ".t.Base"
  }
)pb";

// A serialized FileDescriptorSet of the given text-format FileDescriptorProtos,
// in order.
std::string DescriptorSet(const std::vector<absl::string_view>& files) {
  google::protobuf::FileDescriptorSet set;
  for (absl::string_view text : files) {
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(text),
                                                              set.add_file()))
        << text;
  }
  return set.SerializeAsString();
}

std::string FileName(absl::string_view serialized) {
  FileDescriptorProto file;
  EXPECT_TRUE(file.ParseFromArray(serialized.data(),
                                  static_cast<int>(serialized.size())));
  return file.name();
}

std::vector<std::string> FileNames(
    const std::vector<absl::string_view>& files) {
  std::vector<std::string> names;
  for (absl::string_view file : files) names.push_back(FileName(file));
  return names;
}

TEST(ReflectionIndexTest, RejectsBytesThatAreNotADescriptorSet) {
  EXPECT_THAT(ReflectionIndex::Create("\xff\xff not a descriptor set", {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("google.protobuf.FileDescriptorSet")));
}

TEST(ReflectionIndexTest, RejectsAFileBeforeItsDependency) {
  EXPECT_THAT(ReflectionIndex::Create(DescriptorSet({kExtFile, kBaseFile}), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"t/ext.proto\" does not build")));
}

TEST(ReflectionIndexTest, RejectsAFileGivenTwice) {
  EXPECT_THAT(
      ReflectionIndex::Create(DescriptorSet({kBaseFile, kBaseFile}), {}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("\"t/base.proto\" twice")));
}

TEST(ReflectionIndexTest, RejectsAServiceNameTheSetDoesNotDefine) {
  EXPECT_THAT(ReflectionIndex::Create(EmbeddedDescriptorSet(),
                                      {"compatd.v1.CompatibilityPolicy",
                                       "compatd.v1.NoSuchService"}),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("\"compatd.v1.NoSuchService\"")));
}

TEST(ReflectionIndexTest, EmbeddedSetDefinesEveryListedService) {
  ASSERT_OK_AND_ASSIGN(
      auto index,
      ReflectionIndex::Create(EmbeddedDescriptorSet(), ServiceNames()));
  EXPECT_THAT(index->service_names(), ElementsAreArray(ServiceNames()));
}

struct SymbolCase {
  std::string symbol;
  absl::string_view file;
};

// Symbol kinds as grpc-go's reflection server indexes them (grpc/grpc-go,
// reflection/serverreflection.go:
// processFile/processMessage/processEnum/processField).
TEST(ReflectionIndexTest, FindsTheFileOfEverySymbolKind) {
  ASSERT_OK_AND_ASSIGN(auto index,
                       ReflectionIndex::Create(EmbeddedDescriptorSet(), {}));
  const std::vector<SymbolCase> cases = {
      {"compatd.v1.CompatibilityPolicy", kApiFile},             // service
      {"compatd.v1.CompatibilityPolicy.GetFeature", kApiFile},  // method
      {"compatd.v1.GetFeatureRequest", kApiFile},               // message
      {"compatd.v1.GetFeatureRequest.name", kApiFile},          // field
      {"compatd.v1.EvaluateItem.request", kApiFile},            // oneof
      {"compatd.v1.SkewVerdict", kApiFile},                     // enum
      {"compatd.v1.SKEW_VERDICT_ALLOWED", kApiFile},  // value, protobuf scope
      {"compatd.v1.SkewVerdict.SKEW_VERDICT_ALLOWED",
       kApiFile},  // value under enum
      {"compatd.catalog.v1.Catalog", "compatd/v1/catalog.proto"},
      {"grpc.health.v1.Health", kHealthFile},
      {"grpc.health.v1.Health.Check", kHealthFile},
      {"grpc.health.v1.HealthCheckResponse.ServingStatus",
       kHealthFile},  // nested
      {"grpc.health.v1.HealthCheckResponse.SERVING", kHealthFile},
      {"grpc.reflection.v1.ServerReflection",
       "grpc/reflection/v1/reflection.proto"},
      {"grpc.reflection.v1alpha.ServerReflectionRequest",
       "grpc/reflection/v1alpha/reflection.proto"},
      {"google.protobuf.Timestamp", "google/protobuf/timestamp.proto"},
      {"google.rpc.Status", "google/rpc/status.proto"},
  };
  for (const SymbolCase& c : cases) {
    EXPECT_THAT(index->FileContainingSymbol(c.symbol), IsOkAndHolds(c.file))
        << c.symbol;
  }
}

TEST(ReflectionIndexTest, FindsNestedMessagesAndExtensionsAsSymbols) {
  ASSERT_OK_AND_ASSIGN(
      auto index,
      ReflectionIndex::Create(DescriptorSet({kBaseFile, kExtFile}), {}));
  EXPECT_THAT(index->FileContainingSymbol("t.Base.Inner"),
              IsOkAndHolds("t/base.proto"));
  EXPECT_THAT(index->FileContainingSymbol("t.tag"),
              IsOkAndHolds("t/ext.proto"));
}

TEST(ReflectionIndexTest, UnknownSymbolsAreNotFound) {
  ASSERT_OK_AND_ASSIGN(auto index,
                       ReflectionIndex::Create(EmbeddedDescriptorSet(), {}));
  for (const std::string symbol :
       {"compatd.v1.NoSuchMessage", "compatd.v1", "CompatibilityPolicy",
        ".compatd.v1.CompatibilityPolicy", ""}) {
    EXPECT_THAT(index->FileContainingSymbol(symbol),
                StatusIs(absl::StatusCode::kNotFound,
                         HasSubstr(absl::StrCat("\"", symbol, "\""))))
        << symbol;
  }
}

TEST(ReflectionIndexTest, FindsTheFileOfAnExtension) {
  ASSERT_OK_AND_ASSIGN(
      auto index,
      ReflectionIndex::Create(DescriptorSet({kBaseFile, kExtFile}), {}));
  EXPECT_THAT(index->FileContainingExtension("t.Base", 150),
              IsOkAndHolds("t/ext.proto"));
  EXPECT_THAT(index->FileContainingExtension("t.Base", 120),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("number 120")));
  EXPECT_THAT(
      index->FileContainingExtension("t.Missing", 150),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("\"t.Missing\"")));
}

TEST(ReflectionIndexTest, ListsExtensionNumbersAscending) {
  ASSERT_OK_AND_ASSIGN(
      auto index,
      ReflectionIndex::Create(DescriptorSet({kBaseFile, kExtFile}), {}));
  EXPECT_THAT(index->ExtensionNumbers("t.Base"),
              IsOkAndHolds(ElementsAre(101, 150)));
  EXPECT_THAT(index->ExtensionNumbers("t.Base.Inner"), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(
      index->ExtensionNumbers("t.Missing"),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("\"t.Missing\"")));
}

TEST(ReflectionIndexTest, SendsEachDependencyOnceButTheAskedFileAlways) {
  ASSERT_OK_AND_ASSIGN(
      auto index,
      ReflectionIndex::Create(DescriptorSet({kBaseFile, kExtFile}), {}));
  absl::flat_hash_set<std::string> sent;
  ASSERT_OK_AND_ASSIGN(auto first,
                       index->FileWithDependencies("t/ext.proto", &sent));
  EXPECT_THAT(FileNames(first), ElementsAre("t/ext.proto", "t/base.proto"));
  ASSERT_OK_AND_ASSIGN(auto again,
                       index->FileWithDependencies("t/ext.proto", &sent));
  EXPECT_THAT(FileNames(again), ElementsAre("t/ext.proto"));
  ASSERT_OK_AND_ASSIGN(auto base,
                       index->FileWithDependencies("t/base.proto", &sent));
  EXPECT_THAT(FileNames(base), ElementsAre("t/base.proto"));
}

TEST(ReflectionIndexTest, SendsDependenciesOfAFileSentAlone) {
  ASSERT_OK_AND_ASSIGN(auto index,
                       ReflectionIndex::Create(EmbeddedDescriptorSet(), {}));
  // google/rpc/status.proto imports google/protobuf/any.proto. A stream that
  // has sent status.proto but not any.proto must still get any.proto with
  // compatd.proto.
  absl::flat_hash_set<std::string> sent = {"google/rpc/status.proto"};
  ASSERT_OK_AND_ASSIGN(auto api, index->FileWithDependencies(kApiFile, &sent));
  EXPECT_THAT(FileNames(api), ElementsAre(std::string(kApiFile),
                                          "google/protobuf/timestamp.proto",
                                          "google/protobuf/any.proto"));
}

TEST(ReflectionIndexTest, UnknownFileIsNotFound) {
  ASSERT_OK_AND_ASSIGN(auto index,
                       ReflectionIndex::Create(EmbeddedDescriptorSet(), {}));
  absl::flat_hash_set<std::string> sent;
  EXPECT_THAT(index->FileWithDependencies("compatd/v1/nope.proto", &sent),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("\"compatd/v1/nope.proto\"")));
  EXPECT_THAT(sent, IsEmpty());
}

// ---------------------------------------------------------------------------------------
// The services, end to end: a real server on 127.0.0.1:0 and generated
// reflection stubs of both protocol versions (grpcurl tries v1, then v1alpha).

struct V1 {
  using Service = grpc::reflection::v1::ServerReflection;
  using Request = grpc::reflection::v1::ServerReflectionRequest;
  using Response = grpc::reflection::v1::ServerReflectionResponse;
};
struct V1Alpha {
  using Service = grpc::reflection::v1alpha::ServerReflection;
  using Request = grpc::reflection::v1alpha::ServerReflectionRequest;
  using Response = grpc::reflection::v1alpha::ServerReflectionResponse;
};

template <typename Protocol>
class ReflectionServiceTest : public ::testing::Test {
 protected:
  using Request = typename Protocol::Request;
  using Response = typename Protocol::Response;
  using Stream = grpc::ClientReaderWriter<Request, Response>;

  void SetUp() override {
    grpc::EnableDefaultHealthCheckService(true);
    ASSERT_OK_AND_ASSIGN(services_, CreateReflectionServices(ServiceNames()));
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    for (const auto& service : services_)
      builder.RegisterService(service.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port, 0);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                   grpc::InsecureChannelCredentials());
    stub_ = Protocol::Service::NewStub(channel_);
    stream_ = OpenStream(&context_);
  }

  void TearDown() override {
    if (stream_ != nullptr) {
      stream_->WritesDone();
      grpc::Status status = stream_->Finish();
      EXPECT_TRUE(status.ok()) << status.error_message();
    }
    if (server_ != nullptr) {
      server_->Shutdown(std::chrono::system_clock::now() +
                        std::chrono::seconds(5));
    }
  }

  std::unique_ptr<Stream> OpenStream(grpc::ClientContext* context) {
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::seconds(60));
    return stub_->ServerReflectionInfo(context);
  }

  static Response Ask(Stream& stream, const Request& request) {
    Response response;
    EXPECT_TRUE(stream.Write(request));
    EXPECT_TRUE(stream.Read(&response));
    return response;
  }
  Response Ask(const Request& request) { return Ask(*stream_, request); }

  Response AskSymbol(absl::string_view symbol) {
    Request request;
    request.set_file_containing_symbol(std::string(symbol));
    return Ask(request);
  }

  static std::vector<FileDescriptorProto> Files(const Response& response) {
    std::vector<FileDescriptorProto> files;
    for (const std::string& serialized :
         response.file_descriptor_response().file_descriptor_proto()) {
      EXPECT_TRUE(files.emplace_back().ParseFromString(serialized));
    }
    return files;
  }
  static std::vector<std::string> FileNames(const Response& response) {
    std::vector<std::string> names;
    for (const FileDescriptorProto& file : Files(response)) {
      names.push_back(file.name());
    }
    return names;
  }

  // What a client such as grpcurl builds from the files it received.
  void AddToDatabase(const Response& response) {
    for (const FileDescriptorProto& file : Files(response)) {
      ASSERT_TRUE(database_.Add(file)) << file.name();
    }
  }

  std::vector<std::unique_ptr<grpc::Service>> services_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<typename Protocol::Service::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<Stream> stream_;
  google::protobuf::SimpleDescriptorDatabase database_;
};

using Protocols = ::testing::Types<V1, V1Alpha>;
TYPED_TEST_SUITE(ReflectionServiceTest, Protocols);

TYPED_TEST(ReflectionServiceTest, ListServicesReturnsExactlyTheGivenNames) {
  typename TestFixture::Request request;
  request.set_list_services("*");
  auto response = this->Ask(request);
  ASSERT_TRUE(response.has_list_services_response()) << response.DebugString();
  std::vector<std::string> names;
  for (const auto& service : response.list_services_response().service()) {
    names.push_back(service.name());
  }
  EXPECT_THAT(names, ElementsAreArray(ServiceNames()));
}

TYPED_TEST(ReflectionServiceTest, ServiceSymbolBringsTheApiWithItsComments) {
  auto response = this->AskSymbol("compatd.v1.CompatibilityPolicy");
  ASSERT_TRUE(response.has_file_descriptor_response())
      << response.DebugString();
  ASSERT_THAT(this->FileNames(response), Not(IsEmpty()));
  EXPECT_EQ(this->FileNames(response).front(), kApiFile);

  this->AddToDatabase(response);
  google::protobuf::DescriptorPool pool(&this->database_);
  const google::protobuf::MethodDescriptor* method =
      pool.FindMethodByName("compatd.v1.CompatibilityPolicy.GetFeature");
  ASSERT_NE(method, nullptr);
  google::protobuf::SourceLocation location;
  ASSERT_TRUE(method->GetSourceLocation(&location));
  EXPECT_THAT(location.leading_comments,
              HasSubstr("Is a feature gate enabled"));
}

TYPED_TEST(ReflectionServiceTest, FileResponseCarriesTransitiveDependencies) {
  auto response = this->AskSymbol("compatd.v1.CompatibilityPolicy");
  EXPECT_THAT(
      this->FileNames(response),
      IsSupersetOf({"google/protobuf/timestamp.proto",
                    "google/rpc/status.proto", "google/protobuf/any.proto"}));
}

TYPED_TEST(ReflectionServiceTest, EachStreamSendsADependencyOnce) {
  this->AskSymbol("compatd.v1.CompatibilityPolicy");
  EXPECT_THAT(this->FileNames(this->AskSymbol("google.rpc.Status")),
              ElementsAre("google/rpc/status.proto"));

  grpc::ClientContext context;
  auto fresh = this->OpenStream(&context);
  typename TestFixture::Request request;
  request.set_file_containing_symbol("google.rpc.Status");
  EXPECT_THAT(
      this->FileNames(this->Ask(*fresh, request)),
      ElementsAre("google/rpc/status.proto", "google/protobuf/any.proto"));
  fresh->WritesDone();
  EXPECT_TRUE(fresh->Finish().ok());
}

TYPED_TEST(ReflectionServiceTest, EnumAndFieldSymbolsResolveToTheirFile) {
  for (absl::string_view symbol :
       {"compatd.v1.SkewVerdict", "compatd.v1.GetFeatureRequest.name"}) {
    auto response = this->AskSymbol(symbol);
    ASSERT_THAT(this->FileNames(response), Not(IsEmpty())) << symbol;
    EXPECT_EQ(this->FileNames(response).front(), kApiFile) << symbol;
  }
}

TYPED_TEST(ReflectionServiceTest, FileByFilenameReturnsThatFile) {
  typename TestFixture::Request request;
  request.set_file_by_filename(std::string(kHealthFile));
  EXPECT_THAT(this->FileNames(this->Ask(request)), ElementsAre(kHealthFile));
}

TYPED_TEST(ReflectionServiceTest, ReflectionProtocolsAreDescribable) {
  EXPECT_THAT(
      this->FileNames(this->AskSymbol("grpc.reflection.v1.ServerReflection")),
      ElementsAre("grpc/reflection/v1/reflection.proto"));
  EXPECT_THAT(this->FileNames(
                  this->AskSymbol("grpc.reflection.v1alpha.ServerReflection")),
              ElementsAre("grpc/reflection/v1alpha/reflection.proto"));
}

TYPED_TEST(ReflectionServiceTest,
           UnknownSymbolIsNotFoundAndTheStreamStaysUsable) {
  auto response = this->AskSymbol("compatd.v1.NoSuchThing");
  ASSERT_TRUE(response.has_error_response()) << response.DebugString();
  EXPECT_EQ(response.error_response().error_code(),
            static_cast<int>(grpc::StatusCode::NOT_FOUND));
  EXPECT_THAT(response.error_response().error_message(),
              HasSubstr("\"compatd.v1.NoSuchThing\""));

  EXPECT_THAT(this->FileNames(this->AskSymbol("grpc.health.v1.Health")),
              ElementsAre(kHealthFile));
}

TYPED_TEST(ReflectionServiceTest, UnknownFileIsNotFound) {
  typename TestFixture::Request request;
  request.set_file_by_filename("compatd/v1/nope.proto");
  auto response = this->Ask(request);
  ASSERT_TRUE(response.has_error_response()) << response.DebugString();
  EXPECT_EQ(response.error_response().error_code(),
            static_cast<int>(grpc::StatusCode::NOT_FOUND));
}

TYPED_TEST(ReflectionServiceTest, ExtensionRequestsOnATypeWithoutExtensions) {
  typename TestFixture::Request numbers;
  numbers.set_all_extension_numbers_of_type("compatd.v1.GetFeatureRequest");
  auto response = this->Ask(numbers);
  ASSERT_TRUE(response.has_all_extension_numbers_response())
      << response.DebugString();
  EXPECT_EQ(response.all_extension_numbers_response().base_type_name(),
            "compatd.v1.GetFeatureRequest");
  EXPECT_THAT(response.all_extension_numbers_response().extension_number(),
              IsEmpty());

  typename TestFixture::Request extension;
  extension.mutable_file_containing_extension()->set_containing_type(
      "compatd.v1.GetFeatureRequest");
  extension.mutable_file_containing_extension()->set_extension_number(100);
  response = this->Ask(extension);
  ASSERT_TRUE(response.has_error_response()) << response.DebugString();
  EXPECT_EQ(response.error_response().error_code(),
            static_cast<int>(grpc::StatusCode::NOT_FOUND));
}

TYPED_TEST(ReflectionServiceTest, RequestWithoutAQuestionIsInvalidArgument) {
  auto response = this->Ask(typename TestFixture::Request());
  ASSERT_TRUE(response.has_error_response()) << response.DebugString();
  EXPECT_EQ(response.error_response().error_code(),
            static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
}

TYPED_TEST(ReflectionServiceTest, ResponseEchoesHostAndRequest) {
  typename TestFixture::Request request;
  request.set_host("compatd.example");
  request.set_file_containing_symbol("grpc.health.v1.Health");
  auto response = this->Ask(request);
  EXPECT_EQ(response.valid_host(), "compatd.example");
  EXPECT_EQ(response.original_request().SerializeAsString(),
            request.SerializeAsString());
}

// What `grpcurl -d '{}' HOST grpc.health.v1.Health/Check` does: learn the
// method from reflection, build the request from the reflected descriptor, call
// it generically.
TYPED_TEST(ReflectionServiceTest,
           HealthCheckBuiltFromReflectedDescriptorIsServing) {
  this->AddToDatabase(this->AskSymbol("grpc.health.v1.Health"));
  google::protobuf::DescriptorPool pool(&this->database_);
  const google::protobuf::MethodDescriptor* check =
      pool.FindMethodByName("grpc.health.v1.Health.Check");
  ASSERT_NE(check, nullptr);
  google::protobuf::DynamicMessageFactory factory(&pool);
  std::unique_ptr<google::protobuf::Message> request(
      factory.GetPrototype(check->input_type())->New());
  const std::string request_bytes = request->SerializeAsString();
  grpc::Slice request_slice(request_bytes);
  grpc::ByteBuffer request_buffer(&request_slice, 1);

  grpc::GenericStub generic(this->channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  grpc::ByteBuffer response_buffer;
  grpc::Status status;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  base::TsanRelease(
      &done);  // gRPC runs the callback on its own thread (tsan.h)
  generic.UnaryCall(
      &context,
      absl::StrCat("/", check->service()->full_name(), "/", check->name()),
      grpc::StubOptions(), &request_buffer, &response_buffer,
      [&](grpc::Status s) {
        base::TsanAcquire(&done);
        std::lock_guard<std::mutex> lock(mu);
        status = std::move(s);
        done = true;
        cv.notify_one();
      });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(
        cv.wait_for(lock, std::chrono::seconds(60), [&] { return done; }));
  }
  ASSERT_TRUE(status.ok()) << status.error_message();

  grpc::Slice response_slice;
  ASSERT_TRUE(response_buffer.DumpToSingleSlice(&response_slice).ok());
  std::unique_ptr<google::protobuf::Message> response(
      factory.GetPrototype(check->output_type())->New());
  ASSERT_TRUE(response->ParseFromArray(
      response_slice.begin(), static_cast<int>(response_slice.size())));
  const google::protobuf::FieldDescriptor* serving_status =
      check->output_type()->FindFieldByName("status");
  ASSERT_NE(serving_status, nullptr);
  EXPECT_EQ(
      response->GetReflection()->GetEnum(*response, serving_status)->name(),
      "SERVING");
}

}  // namespace
}  // namespace compatd::service
