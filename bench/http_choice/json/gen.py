#!/usr/bin/env python3
"""Generate AdmissionReview test documents in kube-apiserver field order."""
import json, os, random, string

random.seed(42)
D = os.path.dirname(os.path.abspath(__file__))


def managed_fields(manager, fields):
    return [{"manager": manager, "operation": "Apply", "apiVersion": "v1", "time": "2024-05-01T10:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": fields}]


def review(obj, kind, group, version, resource, name, ns):
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": resource},
            "requestKind": {"group": group, "version": version, "kind": kind},
            "requestResource": {"group": group, "version": version, "resource": resource},
            "name": name,
            "namespace": ns,
            "operation": "CREATE",
            "userInfo": {"username": "system:serviceaccount:kube-system:deployer", "uid": "0b1c",
                         "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system",
                                    "system:authenticated"]},
            "object": obj,
            "oldObject": None,
            "dryRun": False,
            "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl"},
        },
    }


def rnd(n):
    return "".join(random.choice(string.ascii_letters + string.digits + " \n\"\\/") for _ in range(n))


# --- 1 MiB ConfigMap ---------------------------------------------------------
data = {}
i = 0
while sum(len(k) + len(v) + 8 for k, v in data.items()) < 1024 * 1024 - 3000:
    data[f"config-key-{i:05d}.properties"] = rnd(random.randint(40, 400))
    i += 1
cm = {"apiVersion": "v1", "kind": "ConfigMap",
      "metadata": {"name": "big-config", "namespace": "team-a", "uid": "8d0b4d2e-ffff-4a1e-9b1a-000000000001",
                   "labels": {"app": "big", "tier": "backend"},
                   "annotations": {"owner": "team-a"},
                   "managedFields": managed_fields("kubectl", {"f:data": {".": {}}})},
      "data": data}
doc = review(cm, "ConfigMap", "", "v1", "configmaps", "big-config", "team-a")
s = json.dumps(doc, separators=(",", ":"))
open(os.path.join(D, "cm_1mib.json"), "w").write(s)
print("cm", len(s), "keys", len(data))

# --- ~10 KiB Deployment ------------------------------------------------------
containers = []
for c in range(3):
    containers.append({
        "name": f"app-{c}", "image": f"registry.example.com/team/app-{c}:v1.2.{c}",
        "args": ["--port=8080", "--log-level=info", "--feature-gates=A=true,B=false"],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "env": [{"name": f"ENV_{e}", "value": rnd(30)} for e in range(12)],
        "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 5},
        "volumeMounts": [{"name": "cfg", "mountPath": "/etc/app"}],
        "imagePullPolicy": "IfNotPresent",
    })
dep = {"apiVersion": "apps/v1", "kind": "Deployment",
       "metadata": {"name": "web", "namespace": "team-b", "labels": {"app": "web"},
                    "annotations": {"deployment.kubernetes.io/revision": "3"},
                    "managedFields": managed_fields("kubectl", {"f:spec": {"f:replicas": {}, "f:template": {}}})},
       "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": containers, "volumes": [{"name": "cfg", "configMap": {"name": "web"}}]}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}},
       "status": {}}
doc = review(dep, "Deployment", "apps", "v1", "deployments", "web", "team-b")
s = json.dumps(doc, separators=(",", ":"))
pad = 10 * 1024 - len(s)
if pad > 0:
    dep["metadata"]["annotations"]["pad"] = "x" * pad
    doc = review(dep, "Deployment", "apps", "v1", "deployments", "web", "team-b")
    s = json.dumps(doc, separators=(",", ":"))
open(os.path.join(D, "deploy_10kib.json"), "w").write(s)
print("deploy", len(s))


# --- CRD (~150 KiB, 3 versions with openAPIV3Schema) -------------------------
def schema(depth=0):
    props = {}
    for p in range(8 if depth < 3 else 3):
        if depth < 3 and p % 3 == 0:
            props[f"field{p}"] = dict(type="object", description=rnd(60), properties=schema(depth + 1)["properties"])
        else:
            props[f"field{p}"] = dict(type=random.choice(["string", "integer", "boolean"]), description=rnd(80))
    return {"type": "object", "properties": props}


versions = []
for v, served, storage in (("v1alpha1", False, False), ("v1beta1", True, False), ("v1", True, True)):
    versions.append({"name": v, "served": served, "storage": storage,
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": schema(), "status": schema()}}},
                     "subresources": {"status": {}},
                     "additionalPrinterColumns": [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]})
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "widgets.example.com", "managedFields": managed_fields("kubectl", {"f:spec": {}})},
       "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets", "singular": "widget",
                                                   "listKind": "WidgetList"},
                "scope": "Namespaced", "versions": versions, "conversion": {"strategy": "None"}},
       "status": {"conditions": [{"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                                  "message": "the initial names have been accepted",
                                  "lastTransitionTime": "2024-05-01T10:00:00Z"}],
                  "acceptedNames": {"kind": "Widget", "plural": "widgets"},
                  "storedVersions": ["v1beta1", "v1"]}}
doc = review(crd, "CustomResourceDefinition", "apiextensions.k8s.io", "v1", "customresourcedefinitions",
             "widgets.example.com", "")
s = json.dumps(doc, separators=(",", ":"))
open(os.path.join(D, "crd.json"), "w").write(s)
print("crd", len(s))
