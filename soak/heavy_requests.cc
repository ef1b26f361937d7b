#include "soak/heavy_requests.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/substitute.h"
#include "google/protobuf/util/json_util.h"

namespace compatd::soak {
namespace {

using google::protobuf::Message;

// The CRD the custom resources use: v1beta1 (served, deprecated) and v1
// (stored), a schema with CEL rules, as operators ship them.
constexpr absl::string_view kWidgetCrd = R"yaml(---
# Source: widgets-operator/crds/widgets.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations:
    controller-gen.kubebuilder.io/version: v0.16.1
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
    - name: v1beta1
      served: true
      storage: false
      deprecated: true
      deprecationWarning: example.com/v1beta1 Widget is deprecated; use example.com/v1
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: {type: integer}
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: "self.minReplicas <= self.maxReplicas"
                  message: minReplicas must not exceed maxReplicas
                - rule: "!has(self.tier) || self.tier in ['gold', 'silver', 'bronze']"
              properties:
                minReplicas: {type: integer, minimum: 0}
                maxReplicas: {type: integer, maximum: 100}
                tier: {type: string}
                owners:
                  type: array
                  maxItems: 16
                  items: {type: string, maxLength: 63}
                  x-kubernetes-validations:
                    - rule: "self.all(o, o.size() > 0)"
            status:
              type: object
              properties:
                ready: {type: boolean}
)yaml";

// A service's chart: $0 the service, $1 its namespace, $2 its number.
constexpr absl::string_view kChart = R"yaml(---
# Source: $0/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: $0
  namespace: $1
  labels: {app.kubernetes.io/name: $0, app.kubernetes.io/managed-by: Helm}
---
# Source: $0/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: $0-config
  namespace: $1
data:
  LOG_LEVEL: info
  LISTEN_ADDRESS: "0.0.0.0:8080"
  UPSTREAM_URL: "http://$0-upstream.$1.svc.cluster.local:9000"
  FEATURE_FLAGS: "batching=true,compression=gzip,retries=3"
---
# Source: $0/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: $0
  namespace: $1
  labels: {app.kubernetes.io/name: $0, app.kubernetes.io/version: "2.$2.0"}
spec:
  replicas: 3
  revisionHistoryLimit: 5
  selector:
    matchLabels: {app.kubernetes.io/name: $0}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 0}
  template:
    metadata:
      labels: {app.kubernetes.io/name: $0}
      annotations: {prometheus.io/scrape: "true", prometheus.io/port: "9090"}
    spec:
      serviceAccountName: $0
      securityContext: {runAsNonRoot: true, runAsUser: 10001, fsGroup: 10001}
      containers:
        - name: $0
          image: "registry.example.com/$1/$0:2.$2.0"
          imagePullPolicy: IfNotPresent
          args: ["--config=/etc/$0/config.yaml", "--metrics-port=9090"]
          ports:
            - {name: http, containerPort: 8080, protocol: TCP}
            - {name: metrics, containerPort: 9090, protocol: TCP}
          envFrom:
            - configMapRef: {name: $0-config}
          env:
            - name: POD_NAME
              valueFrom: {fieldRef: {fieldPath: metadata.name}}
          resources:
            requests: {cpu: 100m, memory: 128Mi}
            limits: {cpu: "1", memory: 512Mi}
          readinessProbe:
            httpGet: {path: /readyz, port: http}
            periodSeconds: 10
          livenessProbe:
            httpGet: {path: /healthz, port: http}
            initialDelaySeconds: 15
          volumeMounts:
            - {name: config, mountPath: /etc/$0, readOnly: true}
      volumes:
        - name: config
          configMap: {name: $0-config}
---
# Source: $0/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: $0
  namespace: $1
spec:
  type: ClusterIP
  selector: {app.kubernetes.io/name: $0}
  ports:
    - {name: http, port: 80, targetPort: http}
---
# Source: $0/templates/pdb.yaml
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: $0
  namespace: $1
spec:
  minAvailable: 2
  selector:
    matchLabels: {app.kubernetes.io/name: $0}
---
# Source: $0/templates/widget.yaml
apiVersion: example.com/v1
kind: Widget
metadata:
  name: $0
  namespace: $1
spec: {minReplicas: 1, maxReplicas: 5, tier: silver, owners: [team-$1]}
)yaml";

// Every third service: an HPA, an Ingress and a CronJob of current APIs.
constexpr absl::string_view kCurrentExtras = R"yaml(---
# Source: $0/templates/hpa.yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: $0
  namespace: $1
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: $0}
  minReplicas: 3
  maxReplicas: 12
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
---
# Source: $0/templates/ingress.yaml
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: $0
  namespace: $1
  annotations: {cert-manager.io/cluster-issuer: letsencrypt}
spec:
  ingressClassName: nginx
  tls: [{hosts: [$0.example.com], secretName: $0-tls}]
  rules:
    - host: $0.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend: {service: {name: $0, port: {name: http}}}
---
# Source: $0/templates/cronjob.yaml
apiVersion: batch/v1
kind: CronJob
metadata:
  name: $0-cleanup
  namespace: $1
spec:
  schedule: "17 3 * * *"
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: cleanup
              image: "registry.example.com/tools/cleanup:1.4"
              args: [--older-than=168h, --namespace=$1]
)yaml";

// Every seventh service: an old chart's APIs, all removed by 1.36 (4
// objects), and a custom resource of a version its CRD does not list.
constexpr absl::string_view kRemovedExtras = R"yaml(---
# Source: $0/templates/ingress-legacy.yaml
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: $0-legacy
  namespace: $1
spec:
  rules:
    - host: legacy-$0.example.com
      http:
        paths:
          - path: /
            backend: {serviceName: $0, servicePort: 80}
---
# Source: $0/templates/psp.yaml
apiVersion: policy/v1beta1
kind: PodSecurityPolicy
metadata:
  name: $0-restricted
spec:
  privileged: false
  allowPrivilegeEscalation: false
  requiredDropCapabilities: [ALL]
  runAsUser: {rule: MustRunAsNonRoot}
  seLinux: {rule: RunAsAny}
  fsGroup: {rule: MustRunAs, ranges: [{min: 1, max: 65535}]}
  volumes: [configMap, secret, emptyDir, projected]
---
# Source: $0/templates/cronjob-legacy.yaml
apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: $0-report
  namespace: $1
spec:
  schedule: "0 6 * * 1"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: report, image: "registry.example.com/tools/report:0.9"}]
---
# Source: $0/templates/hpa-legacy.yaml
apiVersion: autoscaling/v2beta2
kind: HorizontalPodAutoscaler
metadata:
  name: $0-legacy
  namespace: $1
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: $0}
  minReplicas: 1
  maxReplicas: 4
  metrics:
    - type: Resource
      resource: {name: memory, target: {type: Utilization, averageUtilization: 80}}
---
# Source: $0/templates/widget-alpha.yaml
apiVersion: example.com/v1alpha1
kind: Widget
metadata:
  name: $0-alpha
  namespace: $1
spec: {size: 3}
)yaml";

constexpr uint32_t kChartObjects = 6;
constexpr uint32_t kCurrentExtraObjects = 3;
constexpr uint32_t kRemovedExtraObjects = 4;

bool HasRemoved(const v1::ScanObjectsResponse& response,
                absl::string_view api_version, absl::string_view kind) {
  for (const v1::ScanFinding& finding : response.findings()) {
    if (finding.status() == v1::SCAN_STATUS_REMOVED &&
        finding.api_version() == api_version && finding.kind() == kind) {
      return true;
    }
  }
  return false;
}

// A scan's answer: cut short by its budget (partial, with the reason), or
// every object read, the removed and unknown ones blocking, and the removed
// Ingress and PodSecurityPolicy among the findings kept.
std::string CheckScan(const v1::ScanObjectsResponse& r,
                      const ManifestBundle& bundle) {
  if (r.target() != "1.36") return "target is not 1.36";
  if (r.partial() && !r.partial_reason().empty()) return "";
  if (r.objects() != bundle.objects) {
    return absl::StrCat(r.objects(), " objects read of ", bundle.objects);
  }
  if (r.blocking() != bundle.removed + bundle.unknown) {
    return absl::StrCat(r.blocking(), " blocking findings, expected ",
                        bundle.removed, " removed + ", bundle.unknown,
                        " unknown");
  }
  if (r.partial() && r.omitted_findings() == 0 && r.omitted_problems() == 0) {
    return "partial without a reason or an omitted finding";
  }
  if (!HasRemoved(r, "extensions/v1beta1", "Ingress") ||
      !HasRemoved(r, "policy/v1beta1", "PodSecurityPolicy")) {
    return "no removed extensions/v1beta1 Ingress or policy/v1beta1 "
           "PodSecurityPolicy among the findings";
  }
  return "";
}

std::string ToJson(const Message& message) {
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json);
  return json;
}

template <typename Request, typename Response>
HeavyCase Heavy(Rpc rpc, int weight, std::string label,
                std::unique_ptr<Request> message,
                std::function<std::string(const Response&)> check,
                const CatalogFacts& facts) {
  HeavyCase c;
  c.weight = weight;
  c.json = ToJson(*message);
  c.request.rpc = rpc;
  c.request.message = std::move(message);
  c.request.label = std::move(label);
  c.request.check = CheckedAnswer<Response>(std::move(check), facts);
  return c;
}

// The scan of the largest bundle that fits both limits.
HeavyCase ScanCase(const CatalogFacts& facts, size_t max_recv_message_bytes,
                   size_t max_json_bytes) {
  size_t bytes = std::min(max_recv_message_bytes, max_json_bytes);
  while (true) {
    auto request = std::make_unique<v1::ScanObjectsRequest>();
    request->set_target("1.36");
    ManifestBundle bundle = MakeManifestBundle(bytes);
    request->set_objects(std::move(bundle.text));
    bundle.text.clear();
    // Escaping makes the JSON longer than the text: shrink until it fits.
    const std::string json = ToJson(*request);
    if (json.size() <= max_json_bytes &&
        request->ByteSizeLong() <= max_recv_message_bytes) {
      std::string label =
          absl::StrCat(bundle.objects, " objects of rendered charts (",
                       request->objects().size() >> 10, " KiB) at 1.36");
      return Heavy<v1::ScanObjectsRequest, v1::ScanObjectsResponse>(
          Rpc::kScanObjects, 6, std::move(label), std::move(request),
          [bundle](const v1::ScanObjectsResponse& r) {
            return CheckScan(r, bundle);
          },
          facts);
    }
    bytes -= bytes / 20;
  }
}

// A plan over three minors of emulation on the 1.36 binary, with clients.
HeavyCase PlanCase(const CatalogFacts& facts) {
  auto request = std::make_unique<v1::PlanUpgradeRequest>();
  request->mutable_from()->set_emulation_version("1.33");
  request->mutable_from()->set_feature_gates("WatchList=true");
  request->mutable_to()->set_emulation_version("1.36");
  for (const auto& [component, version] :
       {std::pair{"kubelet", "1.31"}, std::pair{"kube-proxy", "1.33"},
        std::pair{"kubectl", "1.35"}}) {
    v1::PlanClient* client = request->add_clients();
    client->set_component(component);
    client->set_version(version);
  }
  return Heavy<v1::PlanUpgradeRequest, v1::PlanUpgradeResponse>(
      Rpc::kPlanUpgrade, 2, "emulation 1.33 -> 1.36 with 3 clients",
      std::move(request),
      [](const v1::PlanUpgradeResponse& r) -> std::string {
        if (r.from().emulation_version() != "1.33" ||
            r.to().emulation_version() != "1.36") {
          return "not from emulation 1.33 to 1.36";
        }
        if (r.steps_size() == 0) return "no steps";
        if (r.feature_gates_size() == 0) return "no feature gate changes";
        return "";
      },
      facts);
}

HeavyCase LintCase(const CatalogFacts& facts) {
  return Heavy<v1::LintCatalogRequest, v1::LintCatalogResponse>(
      Rpc::kLintCatalog, 1, "lint the serving catalog",
      std::make_unique<v1::LintCatalogRequest>(),
      [](const v1::LintCatalogResponse& r) -> std::string {
        if (r.findings_size() !=
            static_cast<int>(r.errors() + r.warnings() + r.exceptions())) {
          return "findings do not add up to errors + warnings + exceptions";
        }
        return "";
      },
      facts);
}

// A small manifest for the batches' scan items: one removed Ingress.
constexpr absl::string_view kLegacyIngress =
    "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\n"
    "spec:\n  backend: {serviceName: web, servicePort: 80}\n";

// `gates` gate questions (WatchList and the switched gate in turn), `skews`
// kubelet skew checks, `storages` storage versions and `scans` scans of
// kLegacyIngress, in that order.
struct BatchShape {
  int gates;
  int skews;
  int storages;
  int scans;
  int items() const { return gates + skews + storages + scans; }
};

std::string CheckBatchItem(const v1::EvaluateResult& result, int i,
                           const BatchShape& shape, const std::string& digest,
                           const CatalogFacts& facts) {
  if (result.has_error()) {
    return absl::StrCat("item ", i, " failed: ", result.error().message());
  }
  if (i < shape.gates) {
    const bool enabled = result.get_feature().enabled();
    if (i % 2 == 0) return enabled ? "" : "WatchList is off";
    const bool want = digest == facts.digest_b;
    return enabled == want ? ""
                           : absl::StrCat(CatalogFacts::kSwitchedGate,
                                          " enabled=", enabled, " in ", digest);
  }
  i -= shape.gates;
  if (i < shape.skews) {
    return result.check_skew().verdict() == v1::SKEW_VERDICT_ALLOWED
               ? ""
               : "kubelet 1.33 is not allowed";
  }
  i -= shape.skews;
  if (i < shape.storages) {
    return result.get_storage_version().version() == "v1"
               ? ""
               : "apps/deployments is not stored as v1";
  }
  return HasRemoved(result.scan_objects(), "extensions/v1beta1", "Ingress")
             ? ""
             : "the scan item has no removed extensions/v1beta1 Ingress";
}

HeavyCase BatchCase(const CatalogFacts& facts, const BatchShape& shape,
                    int weight, std::string label) {
  auto request = std::make_unique<v1::EvaluateRequest>();
  const std::string gate(CatalogFacts::kSwitchedGate);
  for (int i = 0; i < shape.gates; ++i) {
    request->add_items()->mutable_get_feature()->set_name(
        i % 2 == 0 ? "WatchList" : gate);
  }
  for (int i = 0; i < shape.skews; ++i) {
    v1::CheckSkewRequest* skew = request->add_items()->mutable_check_skew();
    skew->set_component("kubelet");
    skew->set_client_version("1.33");
  }
  for (int i = 0; i < shape.storages; ++i) {
    v1::GetStorageVersionRequest* storage =
        request->add_items()->mutable_get_storage_version();
    storage->set_group("apps");
    storage->set_resource("deployments");
  }
  for (int i = 0; i < shape.scans; ++i) {
    v1::ScanObjectsRequest* scan = request->add_items()->mutable_scan_objects();
    scan->set_target("1.36");
    scan->set_objects(std::string(kLegacyIngress));
  }
  return Heavy<v1::EvaluateRequest, v1::EvaluateResponse>(
      Rpc::kEvaluate, weight, std::move(label), std::move(request),
      [shape, facts](const v1::EvaluateResponse& r) -> std::string {
        if (r.results_size() != shape.items()) {
          return absl::StrCat(r.results_size(), " results for ", shape.items(),
                              " items");
        }
        for (int i = 0; i < r.results_size(); ++i) {
          std::string problem =
              CheckBatchItem(r.results(i), i, shape, r.catalog_digest(), facts);
          if (!problem.empty()) return problem;
        }
        return "";
      },
      facts);
}

}  // namespace

ManifestBundle MakeManifestBundle(size_t max_bytes) {
  ManifestBundle bundle;
  bundle.text = std::string(kWidgetCrd);
  bundle.objects = 1;
  std::string chart;
  for (int i = 0;; ++i) {
    const std::string name = absl::StrCat("svc-", i);
    const std::string ns = absl::StrCat("team-", i % 17);
    const std::string number = absl::StrCat(i % 40);
    chart = absl::Substitute(kChart, name, ns, number);
    uint32_t objects = kChartObjects;
    uint32_t removed = 0;
    uint32_t unknown = 0;
    if (i % 3 == 0) {
      absl::StrAppend(&chart, absl::Substitute(kCurrentExtras, name, ns));
      objects += kCurrentExtraObjects;
    }
    if (i % 7 == 3) {
      absl::StrAppend(&chart, absl::Substitute(kRemovedExtras, name, ns));
      objects += kRemovedExtraObjects + 1;
      removed += kRemovedExtraObjects;
      unknown += 1;
    }
    if (bundle.text.size() + chart.size() > max_bytes) return bundle;
    bundle.text += chart;
    bundle.objects += objects;
    bundle.removed += removed;
    bundle.unknown += unknown;
  }
}

std::vector<HeavyCase> MakeHeavyCases(const CatalogFacts& facts,
                                      size_t max_recv_message_bytes,
                                      size_t max_json_bytes) {
  std::vector<HeavyCase> cases;
  cases.push_back(ScanCase(facts, max_recv_message_bytes, max_json_bytes));
  cases.push_back(PlanCase(facts));
  cases.push_back(LintCase(facts));
  // Heavy by its count (more than 64 items) ...
  cases.push_back(BatchCase(
      facts, {.gates = 300, .skews = 100, .storages = 100, .scans = 20}, 2,
      "520 items: gates, skews, storage, scans"));
  // ... and by one heavy item among a few.
  cases.push_back(BatchCase(facts,
                            {.gates = 8, .skews = 2, .storages = 2, .scans = 1},
                            1, "13 items, one of them a scan"));
  return cases;
}

}  // namespace compatd::soak
