#include "api/lanes.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"

namespace compatd::api {

absl::string_view LaneName(Lane lane) {
  switch (lane) {
    case Lane::kLight:
      return "light";
    case Lane::kHeavy:
      return "heavy";
  }
  return "light";
}

Lane LaneOf(absl::string_view rpc_or_route) {
  for (const LaneRule& rule : kLaneRules) {
    if (rule.name == rpc_or_route) return rule.lane;
  }
  return Lane::kLight;
}

Lane LaneOf(Rpc rpc) { return LaneOf(RpcName(rpc)); }

Lane LaneOf(const v1::EvaluateRequest& request) {
  if (request.items_size() > kLightEvaluateItems) return LaneOf("Evaluate");
  for (const v1::EvaluateItem& item : request.items()) {
    if (item.request_case() == v1::EvaluateItem::REQUEST_NOT_SET) continue;
    if (item.has_check_cel_expression() &&
        item.check_cel_expression().expression().size() > kLightCelBytes) {
      return Lane::kHeavy;
    }
    // The item's member is the RPC's request message: "ScanObjectsRequest".
    const google::protobuf::FieldDescriptor* field =
        v1::EvaluateItem::descriptor()->FindFieldByNumber(
            static_cast<int>(item.request_case()));
    if (field == nullptr || field->message_type() == nullptr) continue;
    absl::string_view name = field->message_type()->name();
    absl::ConsumeSuffix(&name, "Request");
    if (const Lane lane = LaneOf(name); lane != Lane::kLight) return lane;
  }
  return Lane::kLight;
}

std::string LaneFullMessage(const base::WorkPool& pool) {
  const std::string& name = pool.options().name;
  return absl::StrCat("the ", name, " lane is full (", pool.running(),
                      " running, ", pool.queued(), " waiting; --", name,
                      "-workers=", pool.options().threads, ", --", name,
                      "-queue=", pool.options().max_queued,
                      "): retry in a few seconds");
}

}  // namespace compatd::api
