// cluster::ReadClusterProfile on the shapes kubeadm, Cluster API and
// kube-apiserver write (written here from kubeadm's v1beta3/v1beta4 types,
// cluster-api's controlplane/kubeadm types, core/v1 Pod and apimachinery's
// version.Info), and every bad input of issue 32.

#include "cluster/profile.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::cluster {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

ClusterProfile Read(const std::string& text, const ReadOptions& options = {}) {
  absl::StatusOr<ClusterProfile> p =
      ReadClusterProfile(text, "in.yaml", options);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : ClusterProfile{};
}

std::string Error(const std::string& text, const ReadOptions& options = {}) {
  absl::StatusOr<ClusterProfile> p =
      ReadClusterProfile(text, "in.yaml", options);
  EXPECT_FALSE(p.ok());
  return p.ok() ? "" : std::string(p.status().message());
}

// The shape kubeadm writes to /etc/kubernetes/manifests/kube-apiserver.yaml
// (kubeadm app/phases/controlplane/manifests.go: one "--flag=value" item per
// flag in command).
constexpr char kStaticPod[] = R"(apiVersion: v1
kind: Pod
metadata:
  annotations:
    kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint: 10.0.0.10:6443
  labels:
    component: kube-apiserver
    tier: control-plane
  name: kube-apiserver
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-apiserver
    - --advertise-address=10.0.0.10
    - --allow-privileged=true
    - --authorization-mode=Node,RBAC
    - --feature-gates=WatchList=false,AllBeta=false
    - --runtime-config=resource.k8s.io/v1beta2=true
    - --emulated-version=1.34
    image: registry.k8s.io/kube-apiserver:v1.35.2
    imagePullPolicy: IfNotPresent
    name: kube-apiserver
  hostNetwork: true
  priorityClassName: system-node-critical
status: {}
)";

TEST(StaticPod, FlagsFromCommandAndBinaryFromTag) {
  ClusterProfile p = Read(kStaticPod);
  EXPECT_EQ(p.input_kind, "kube-apiserver static pod manifest");
  EXPECT_EQ(p.current.binary_version.value, "1.35.2");
  EXPECT_EQ(p.current.binary_version.origin,
            "in.yaml:21 (spec.containers[0].image)");
  EXPECT_EQ(p.current.feature_gates.value, "WatchList=false,AllBeta=false");
  EXPECT_EQ(p.current.feature_gates.origin,
            "in.yaml:18 (spec.containers[0].command[4])");
  EXPECT_EQ(p.current.runtime_config.value, "resource.k8s.io/v1beta2=true");
  EXPECT_EQ(p.current.emulation_version.value, "1.34");
  EXPECT_FALSE(p.upgrade_target.has_value());
  ASSERT_THAT(p.unmodelled_flags, SizeIs(3));
  EXPECT_EQ(p.unmodelled_flags[0].flag, "--advertise-address=10.0.0.10");
  EXPECT_EQ(p.unmodelled_flags[0].origin,
            "in.yaml:15 (spec.containers[0].command[1])");
  EXPECT_EQ(p.unmodelled_flags[2].flag, "--authorization-mode=Node,RBAC");
  EXPECT_THAT(p.findings, IsEmpty());
}

TEST(StaticPod, FlagsAsSeparateArgsItems) {
  ClusterProfile p = Read(R"(apiVersion: v1
kind: Pod
metadata: {name: kube-apiserver, namespace: kube-system}
spec:
  containers:
  - name: etcd
    image: registry.k8s.io/etcd:3.6.5-0
  - name: kube-apiserver
    image: registry.k8s.io/kube-apiserver:v1.35.0
    command: ["kube-apiserver"]
    args:
    - --feature-gates
    - WatchList=false
    - --emulation-forward-compatible
    - --min-compatibility-version
    - "1.34"
    - --secure-port
    - "6443"
)");
  EXPECT_EQ(p.current.binary_version.value, "1.35.0");
  EXPECT_EQ(p.current.feature_gates.value, "WatchList=false");
  EXPECT_EQ(p.current.feature_gates.origin,
            "in.yaml:12 (spec.containers[1].args[0])");
  EXPECT_EQ(p.current.emulation_forward_compatible.value, "true");
  EXPECT_EQ(p.current.min_compatibility_version.value, "1.34");
  ASSERT_THAT(p.unmodelled_flags, SizeIs(1));
  EXPECT_EQ(p.unmodelled_flags[0].flag, "--secure-port 6443");
}

TEST(StaticPod, StartupRefusalsAreFindings) {
  std::string text = kStaticPod;
  text.replace(text.find("WatchList=false,AllBeta=false"), 29,
               "WatchList=maybe");
  text.replace(text.find("--emulated-version=1.34"), 23,
               "--emulated-version=1.30");
  ClusterProfile p = Read(text);
  ASSERT_THAT(p.findings, SizeIs(2));
  // component-base featuregate Set: "invalid value of %s=%s, err: %v".
  EXPECT_THAT(
      p.findings[0],
      HasSubstr("invalid value of WatchList=maybe, err: strconv.ParseBool: "
                "parsing \"maybe\": invalid syntax"));
  // component-base compatibility Validate: "emulation version %s is not between
  // [%s, %s]".
  EXPECT_THAT(
      p.findings[1],
      HasSubstr("emulation version 1.30 is not between [1.32, 1.35.0]"));
  EXPECT_THAT(p.findings[1],
              HasSubstr("in.yaml:20 (spec.containers[0].command[6])"));
  EXPECT_THAT(p.findings[1], Not(HasSubstr("minCompatibility")));
}

TEST(StaticPod, NoKubeApiserverContainer) {
  EXPECT_EQ(
      Error(R"(apiVersion: v1
kind: Pod
spec:
  containers:
  - name: etcd
    image: registry.k8s.io/etcd:3.6.5-0
)"),
      "in.yaml:5: field spec.containers: no container is named kube-apiserver; "
      "accepted: a static pod manifest of kube-apiserver "
      "(/etc/kubernetes/manifests/kube-apiserver.yaml)");
}

TEST(StaticPod, ImageTagThatIsNotAVersion) {
  std::string latest = kStaticPod;
  latest.replace(latest.find(":v1.35.2"), 8, ":latest");
  EXPECT_THAT(
      Error(latest),
      HasSubstr(
          "in.yaml:21: field spec.containers[0].image: image tag \"latest\" of "
          "\"registry.k8s.io/kube-apiserver:latest\" is not a kube-apiserver "
          "version; accepted: "));
  std::string digest = kStaticPod;
  const std::string sha =
      "@sha256:"
      "0000000000000000000000000000000000000000000000000000000000000000";
  digest.replace(digest.find(":v1.35.2"), 8, sha);
  EXPECT_THAT(Error(digest), HasSubstr("has no tag (a digest only)"));
  EXPECT_THAT(Error(digest), HasSubstr("--cluster-version"));
  // The binary by flag.
  ClusterProfile p =
      Read(digest, {.binary_version = "1.35.2", .upgrade_target = ""});
  EXPECT_EQ(p.current.binary_version.value, "1.35.2");
  EXPECT_EQ(p.current.binary_version.origin, "--cluster-version");
}

// kubeadm.k8s.io/v1beta3 ClusterConfiguration:
// APIServer.ControlPlaneComponent.ExtraArgs is map[string]string, among the
// other documents of a kubeadm config file.
TEST(Kubeadm, V1beta3ExtraArgsMap) {
  ClusterProfile p = Read(R"(apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: 10.0.0.10
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.35.1
controlPlaneEndpoint: cp.example:6443
apiServer:
  extraArgs:
    feature-gates: WatchList=false
    audit-log-path: /var/log/kubernetes/audit.log
  timeoutForControlPlane: 4m0s
)");
  EXPECT_EQ(p.input_kind, "kubeadm ClusterConfiguration");
  EXPECT_EQ(p.current.binary_version.value, "1.35.1");
  EXPECT_EQ(p.current.binary_version.origin, "in.yaml:8 (kubernetesVersion)");
  EXPECT_EQ(p.current.feature_gates.value, "WatchList=false");
  EXPECT_EQ(p.current.feature_gates.origin,
            "in.yaml:12 (apiServer.extraArgs.feature-gates)");
  ASSERT_THAT(p.unmodelled_flags, SizeIs(1));
  EXPECT_EQ(p.unmodelled_flags[0].flag,
            "--audit-log-path=/var/log/kubernetes/audit.log");
}

// kubeadm.k8s.io/v1beta4: ExtraArgs []Arg{Name, Value}.
constexpr char kV1beta4[] = R"(apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.35.2
apiServer:
  extraArgs:
  - name: feature-gates
    value: WatchList=false
  - name: runtime-config
    value: resource.k8s.io/v1beta2=true
  - name: emulated-version
    value: "1.34"
)";

TEST(Kubeadm, V1beta4ExtraArgsList) {
  ClusterProfile p = Read(kV1beta4);
  EXPECT_EQ(p.current.binary_version.value, "1.35.2");
  EXPECT_EQ(p.current.feature_gates.origin,
            "in.yaml:6 (apiServer.extraArgs[0])");
  EXPECT_EQ(p.current.runtime_config.value, "resource.k8s.io/v1beta2=true");
  EXPECT_EQ(p.current.emulation_version.value, "1.34");
}

TEST(Kubeadm, WrongExtraArgsFormForItsVersion) {
  std::string text = kV1beta4;
  text.replace(text.find("v1beta4"), 7, "v1beta3");
  EXPECT_EQ(
      Error(text),
      "in.yaml:6: field apiServer.extraArgs: is a list in "
      "kubeadm.k8s.io/v1beta3; "
      "accepted: a map of flag name to value (name: value) in this apiVersion");
}

TEST(Kubeadm, UnknownApiVersion) {
  EXPECT_EQ(
      Error("apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\n"
            "kubernetesVersion: v1.35.0\n"),
      "in.yaml:1: field apiVersion: ClusterConfiguration of apiVersion "
      "\"kubeadm.k8s.io/v1beta2\" is not one compatd reads; accepted: "
      "kubeadm.k8s.io/v1beta3 or kubeadm.k8s.io/v1beta4");
}

// `kubectl get cm -n kube-system kubeadm-config -o yaml`:
// data.ClusterConfiguration is the v1beta4 document as a literal block.
TEST(Kubeadm, InsideTheKubeadmConfigConfigMap) {
  ClusterProfile p = Read(R"(apiVersion: v1
data:
  ClusterConfiguration: |
    apiServer:
      extraArgs:
      - name: feature-gates
        value: WatchList=false
    apiVersion: kubeadm.k8s.io/v1beta4
    kind: ClusterConfiguration
    kubernetesVersion: v1.35.2
kind: ConfigMap
metadata:
  creationTimestamp: "2026-01-10T09:00:00Z"
  name: kubeadm-config
  namespace: kube-system
  resourceVersion: "209"
  uid: 4c1e2a9e-4b7e-4a57-9b0c-3e0c5b2f1d11
)");
  EXPECT_EQ(p.input_kind, "kubeadm-config ConfigMap");
  EXPECT_EQ(p.current.binary_version.value, "1.35.2");
  EXPECT_EQ(p.current.binary_version.origin,
            "in.yaml:10 (data.ClusterConfiguration.kubernetesVersion)");
  EXPECT_EQ(p.current.feature_gates.origin,
            "in.yaml:6 (data.ClusterConfiguration.apiServer.extraArgs[0])");
}

// controlplane.cluster.x-k8s.io/v1beta1 KubeadmControlPlane: extraArgs a map;
// v1beta2: a list of {name, value}.
TEST(ClusterApi, KubeadmControlPlaneBothForms) {
  ClusterProfile v1 = Read(R"(apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata:
  name: prod-control-plane
  namespace: default
spec:
  replicas: 3
  version: v1.35.2
  machineTemplate:
    infrastructureRef:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: DockerMachineTemplate
      name: prod-control-plane
  kubeadmConfigSpec:
    clusterConfiguration:
      apiServer:
        extraArgs:
          feature-gates: WatchList=false
)");
  EXPECT_EQ(v1.input_kind, "Cluster API KubeadmControlPlane");
  EXPECT_EQ(v1.current.binary_version.value, "1.35.2");
  EXPECT_EQ(v1.current.binary_version.origin, "in.yaml:8 (spec.version)");
  EXPECT_EQ(v1.current.feature_gates.origin,
            "in.yaml:18 "
            "(spec.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs."
            "feature-gates)");
  ClusterProfile v2 = Read(R"(apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata: {name: prod-control-plane}
spec:
  version: v1.35.0
  kubeadmConfigSpec:
    clusterConfiguration:
      apiServer:
        extraArgs:
        - name: runtime-config
          value: resource.k8s.io/v1beta2=true
)");
  EXPECT_EQ(v2.current.runtime_config.value, "resource.k8s.io/v1beta2=true");
}

// apimachinery pkg/version Info as /version prints it (1.33+ has the emulation
// fields).
TEST(VersionJson, GitVersionAndEmulation) {
  ClusterProfile p = Read(R"({
  "major": "1",
  "minor": "35",
  "emulationMajor": "1",
  "emulationMinor": "34",
  "minCompatibilityMajor": "1",
  "minCompatibilityMinor": "33",
  "gitVersion": "v1.35.2",
  "gitCommit": "0123456789abcdef0123456789abcdef01234567",
  "gitTreeState": "clean",
  "buildDate": "2026-02-10T12:00:00Z",
  "goVersion": "go1.25.6",
  "compiler": "gc",
  "platform": "linux/amd64"
})");
  EXPECT_EQ(p.input_kind, "/version JSON");
  EXPECT_EQ(p.current.binary_version.value, "1.35.2");
  EXPECT_EQ(p.current.emulation_version.value, "1.34");
  EXPECT_EQ(p.current.min_compatibility_version.value, "1.33");
  EXPECT_EQ(p.current.emulation_version.origin,
            "in.yaml:4 (emulationMajor/emulationMinor)");
}

TEST(OwnProfile, AllKeysAndTarget) {
  ClusterProfile p = Read(R"(binaryVersion: "1.35.2"
featureGates: "WatchList=false"
upgradeTarget:
  binaryVersion: "1.36"
  featureGates: "WatchList=true"
)");
  EXPECT_EQ(p.input_kind, "compatd cluster profile");
  EXPECT_EQ(p.current.binary_version.value, "1.35.2");
  ASSERT_TRUE(p.upgrade_target.has_value());
  EXPECT_EQ(p.upgrade_target->binary_version.value, "1.36");
  EXPECT_EQ(p.upgrade_target->binary_version.origin,
            "in.yaml:4 (upgradeTarget.binaryVersion)");
  EXPECT_EQ(p.upgrade_target->feature_gates.value, "WatchList=true");
  ClusterProfile short_form =
      Read("binaryVersion: 1.35.2\nupgradeTarget: v1.36\n");
  EXPECT_EQ(short_form.upgrade_target->binary_version.value, "1.36");
}

TEST(OwnProfile, BadInput) {
  EXPECT_EQ(
      Error("binaryVersion: 1.35\nfeatureGate: A=true\n"),
      "in.yaml:2: field featureGate: unknown key; accepted: binaryVersion, "
      "emulationVersion, minCompatibilityVersion, featureGates, runtimeConfig, "
      "emulationForwardCompatible, runtimeConfigEmulationForwardCompatible, "
      "upgradeTarget");
  EXPECT_EQ(Error("binaryVersion: 1.36\nupgradeTarget: 1.35\n"),
            "in.yaml:2 (upgradeTarget): upgrade target 1.35 is older than the "
            "cluster's "
            "kube-apiserver 1.36 (in.yaml:1 (binaryVersion)); accepted: the "
            "cluster's release "
            "line or a later one");
  EXPECT_THAT(
      Error("binaryVersion: 1.35\nemulationVersion: \"1.29\"\n"),
      HasSubstr("emulation version 1.29 is not between [1.32, 1.35.0]"));
  EXPECT_EQ(Error("binaryVersion: banana\n"),
            "in.yaml:1 (binaryVersion): binary version \"banana\" is not a "
            "Kubernetes "
            "version; accepted: a kube-apiserver version such as 1.35, 1.35.2 "
            "or v1.35.2");
  EXPECT_EQ(Error("featureGates:\n  A: true\nbinaryVersion: 1.35\n"),
            "in.yaml:2: field featureGates: is a map; accepted: a string in "
            "--feature-gates "
            "syntax, e.g. \"A=true,B=false\"");
  EXPECT_THAT(Error("binaryVersion: [1.35\n"), HasSubstr("in.yaml:"));
  EXPECT_THAT(Error("featureGates: A=true\n"),
              HasSubstr("binaryVersion: is missing"));
}

TEST(Detect, UnknownKind) {
  EXPECT_THAT(
      Error("apiVersion: apps/v1\nkind: Deployment\n"),
      HasSubstr(
          "in.yaml:2: field kind: \"apps/v1\" \"Deployment\" is not an input "
          "compatd reads; accepted: compatd's cluster profile"));
}

TEST(Flags, VersionAndTarget) {
  absl::StatusOr<ClusterProfile> p =
      ProfileFromFlags({.binary_version = "1.35.2", .upgrade_target = "1.36"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->current.binary_version.origin, "--cluster-version");
  EXPECT_EQ(p->upgrade_target->binary_version.origin, "--upgrade-target");
  EXPECT_THAT(FormatClusterProfile(*p),
              HasSubstr("binaryVersion: \"1.35.2\"  <- --cluster-version"));
}

}  // namespace
}  // namespace compatd::cluster
