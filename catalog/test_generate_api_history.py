#!/usr/bin/env python3
"""Unit tests of catalog/generate_api_history.py (Python 3 standard library only).

  python3 -m unittest discover -s catalog -p 'test_*.py'
"""

import copy
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import generate_api_history as gen  # noqa: E402


def load(name):
    with open(os.path.join(HERE, "data", name), encoding="utf-8") as f:
        return json.load(f)


class PluralTest(unittest.TestCase):
    def test_rules(self):
        # One case per branch of gengo's namer.pluralNamer.
        cases = {
            "Pod": "pods",                          # default +s
            "Ingress": "ingresses",                 # s -> es
            "Box": "boxes", "Quiz": "quizes",       # x, z -> es (no doubling)
            "PodSecurityPolicy": "podsecuritypolicies",  # consonant + y
            "Gateway": "gateways",                  # vowel + y
            "Batch": "batches", "Mesh": "meshes",   # ch, sh -> es
            "Graph": "graphs",                      # other h -> s
            "Knife": "knives",                      # fe -> ves
            "Service": "services",                  # other e -> s
            "Leaf": "leaves",                       # f -> ves
            "Endpoints": "endpoints",               # Kubernetes' exception
            "ResourceClaimParameters": "resourceclaimparameters",
            "A": "a",                               # shorter than 2
        }
        for kind, want in cases.items():
            self.assertEqual(gen.plural(kind), want, kind)

    def test_matches_client_go_names(self):
        # Every name api_lifecycles.json took from client-go's typed clients is what the
        # rule gives: the rule is client-gen's.
        checked = 0
        for gv in load("api_lifecycles.json")["groupVersions"]:
            for resource in gv["resources"]:
                if resource.get("resourceNameSource") == "client-go typed client":
                    self.assertEqual(gen.plural(resource["kind"]), resource["resource"])
                    checked += 1
        self.assertGreater(checked, 100)


class LifecycleDefaultsTest(unittest.TestCase):
    def test_beta_defaults(self):
        got = gen.lifecycle_defaults("v1beta1", {"introduced": "1.20"})
        self.assertEqual(got, {"introduced": ("1.20", "tag"), "deprecated": ("1.23", "default"),
                               "removed": ("1.26", "default")})

    def test_removed_follows_a_tagged_deprecation(self):
        got = gen.lifecycle_defaults("v1alpha1", {"introduced": "1.18", "deprecated": "1.20"})
        self.assertEqual(got["deprecated"], ("1.20", "tag"))
        self.assertEqual(got["removed"], ("1.23", "default"))

    def test_ga_has_no_defaults(self):
        self.assertEqual(gen.lifecycle_defaults("v1", {"introduced": "1.0"}),
                         {"introduced": ("1.0", "tag")})
        got = gen.lifecycle_defaults("v2", {"introduced": "1.23", "deprecated": "1.40"})
        self.assertEqual(got["removed"], ("1.43", "default"))

    def test_explicit_everything(self):
        replacement = {"group": "apps", "version": "v1", "kind": "Deployment"}
        got = gen.lifecycle_defaults("v1beta1", {"introduced": "1.1", "deprecated": "1.8",
                                                 "removed": "1.16", "replacement": replacement})
        self.assertEqual({f: s for f, (_, s) in got.items()},
                         dict.fromkeys(("introduced", "deprecated", "removed", "replacement"),
                                       "tag"))

    def test_no_introduced_no_lifecycle(self):
        self.assertEqual(gen.lifecycle_defaults("v1alpha1", {}), {})


GO_TYPES = """package v1beta1

// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=Scale
// +k8s:prerelease-lifecycle-gen:introduced=1.1
// +k8s:prerelease-lifecycle-gen:deprecated=1.8
// +k8s:prerelease-lifecycle-gen:removed=1.16
// +k8s:prerelease-lifecycle-gen:replacement=apps,v1,Deployment

// Deployment enables declarative updates.
type Deployment struct {
	metav1.TypeMeta `json:",inline"`
}

// +k8s:prerelease-lifecycle-gen:introduced=1.9


// Too far away: two blank lines, so not this type's.
type Far struct {
	metav1.TypeMeta `json:",inline"`
}

// +genclient
// +genclient:noVerbs
// +k8s:prerelease-lifecycle-gen:introduced=1.22
type Eviction struct {
	metav1.TypeMeta `json:",inline"`
}

// +k8s:prerelease-lifecycle-gen:introduced=1.0

// List holds a list of objects.
type List metav1.List
"""

GO_ZZ = """package v1beta1

func (in *Deployment) APILifecycleIntroduced() (major, minor int) {
	return 1, 1
}

func (in *Deployment) APILifecycleReplacement() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
}

func (in *Deployment) APILifecycleRemoved() (major, minor int) {
	return 1, 16
}
"""

GO_REGISTER = """package v1
const GroupName = "apps"
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Deployment{},
		&DeploymentList{},
		&Scale{},
	)
	scheme.AddKnownTypes(SchemeGroupVersion, &metav1.Status{})
	scheme.AddKnownTypes(SchemeGroupVersion, &List{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
"""


class GoParsingTest(unittest.TestCase):
    def test_types_use_the_doc_comment_and_the_detached_block_before_it(self):
        types = gen.parse_types(GO_TYPES)
        deployment = types["Deployment"]
        self.assertTrue(deployment["genclient"])
        self.assertFalse(deployment["noVerbs"])
        self.assertEqual(deployment["lifecycle"], {
            "introduced": "1.1", "deprecated": "1.8", "removed": "1.16",
            "replacement": {"group": "apps", "version": "v1", "kind": "Deployment"}})
        self.assertEqual(types["Far"]["lifecycle"], {})
        self.assertTrue(types["Eviction"]["noVerbs"])
        self.assertEqual(types["List"]["lifecycle"], {"introduced": "1.0"})

    def test_generated_functions(self):
        self.assertEqual(gen.parse_zz(GO_ZZ), {"Deployment": {
            "introduced": "1.1", "removed": "1.16",
            "replacement": {"group": "apps", "version": "v1", "kind": "Deployment"}}})

    def test_register(self):
        group, kinds = gen.parse_register(GO_REGISTER)
        self.assertEqual(group, "apps")
        self.assertEqual(kinds, ["Deployment", "DeploymentList", "Scale", "List"])
        self.assertEqual(gen.top_level_kinds(kinds), ["Deployment", "Scale", "List"])


class ResourceTest(unittest.TestCase):
    def test_rules(self):
        key = ("apps", "v1", "Deployment")
        self.assertEqual(gen.resource_of(key, {"genclient": True}, None, None),
                         {"resource": "deployments", "resourceSource": "client-gen"})
        self.assertEqual(gen.resource_of(key, {"genclient": True, "resourceName": "deploys"},
                                         None, None)["resource"], "deploys")
        with self.assertRaises(SystemExit):
            gen.resource_of(key, {"genclient": True}, {"resource": "other"}, None)
        eviction = {"resource": "evictions", "subresourceOf": "pods/eviction"}
        self.assertEqual(gen.resource_of(("policy", "v1", "Eviction"), {"genclient": "noVerbs"},
                                         eviction, None),
                         {"resource": "evictions", "resourceSource": "api_lifecycles.json",
                          "subresourceOf": "pods/eviction"})
        # api_lifecycles.json's own guess for a kind without +genclient is not used.
        self.assertEqual(gen.resource_of(("batch", "v1beta1", "JobTemplate"), {},
                                         {"resource": "jobtemplates"}, None),
                         {"resource": None, "resourceSource": None})
        self.assertEqual(gen.resource_of(("apps", "v1beta1", "ReplicaSet"), None, None, {}),
                         {"resource": "replicasets", "resourceSource": "plural-rule"})


def tiny_extract():
    tags = ["kubernetes-1.18.0", "v0.19.0", "v0.19.3", "v0.20.0"]
    return {
        "repos": [{"repo": "kubernetes/api", "tags": tags, "newestTag": "v0.20.0",
                   "newestCommit": "0" * 40}],
        "gvks": [
            {"repo": "kubernetes/api", "group": "extensions", "version": "v1beta1",
             "kind": "Deployment", "runs": [
                 {"dir": "extensions/v1beta1", "from": "kubernetes-1.18.0",
                  "to": "kubernetes-1.18.0", "genclient": True},
                 {"dir": "extensions/v1beta1", "from": "v0.19.0", "to": "v0.19.0",
                  "genclient": True, "tags": {"introduced": "1.1", "deprecated": "1.8"},
                  "zz": {"introduced": "1.1", "deprecated": "1.8", "removed": "1.11"}},
                 {"dir": "extensions/v1beta1", "from": "v0.19.3", "to": "v0.19.3",
                  "genclient": True,
                  "tags": {"introduced": "1.1", "deprecated": "1.8", "removed": "1.16"},
                  "zz": {"introduced": "1.1", "deprecated": "1.8", "removed": "1.16"}},
             ]},
        ],
    }


class MergeTest(unittest.TestCase):
    guide = {"source": {"url": "https://example.invalid/guide/"}, "entries": [
        {"group": "extensions", "version": "v1beta1", "kind": "Deployment", "removed": "1.16",
         "section": "#d", "says": "gone", "repo": "kubernetes/api",
         "replacement": {"group": "apps", "version": "v1", "kind": "Deployment"}},
        {"group": "apps", "version": "v1beta1", "kind": "ReplicaSet", "removed": "1.16",
         "section": "#r", "says": "gone", "repo": "kubernetes/api", "replacement": None},
    ]}
    lifecycles = {"groupVersions": []}

    def test_last_tag_wins_and_defaults_are_marked(self):
        doc = gen.merge(tiny_extract(), self.guide, self.lifecycles)
        entry = next(e for e in doc["entries"] if e["kind"] == "Deployment")
        self.assertEqual((entry["introduced"], entry["deprecated"], entry["removed"]),
                         ("1.1", "1.8", "1.16"))
        self.assertEqual(entry["valueSources"], {"introduced": "tag", "deprecated": "tag",
                                                 "removed": "tag"})
        self.assertEqual(entry["superseded"][0]["removed"], "1.11")
        self.assertEqual(entry["firstTag"], "kubernetes-1.18.0")
        self.assertEqual(entry["lastTag"], "v0.19.3")
        self.assertEqual(entry["typesDeletedIn"], "1.20")
        self.assertEqual(entry["guide"]["removed"], "1.16")
        self.assertEqual(entry["lifecycleFrom"], "methods")

    def test_guide_only_kind(self):
        doc = gen.merge(tiny_extract(), self.guide, self.lifecycles)
        entry = next(e for e in doc["entries"] if e["kind"] == "ReplicaSet")
        self.assertEqual(entry["removed"], "1.16")
        self.assertEqual(entry["valueSources"], {"removed": "guide"})
        self.assertEqual(entry["lifecycleFrom"], "guide")
        self.assertTrue(entry["source"].startswith("https://example.invalid/guide/#r"))
        self.assertIsNone(entry["firstTag"])

    def test_guide_disagreement_is_listed(self):
        guide = copy.deepcopy(self.guide)
        guide["entries"][0]["removed"] = "1.17"
        doc = gen.merge(tiny_extract(), guide, self.lifecycles)
        self.assertEqual(doc["guideDisagreements"], [
            "extensions/v1beta1 Deployment: lifecycle removed 1.16, guide 1.17",
            "extensions/v1beta1 Deployment: lifecycle replacement none, guide apps/v1"])


class CheckExtractTest(unittest.TestCase):
    def test_consistent(self):
        self.assertEqual(gen.check_extract(tiny_extract()), [])

    def test_generated_value_that_the_rules_do_not_give(self):
        extract = tiny_extract()
        extract["gvks"][0]["runs"][2]["zz"]["removed"] = "1.17"
        problems = gen.check_extract(extract)
        self.assertEqual(len(problems), 1)
        self.assertIn("zz removed=1.17 but the tags give 1.16", problems[0])

    def test_hand_written_method_excuses_the_generated_function(self):
        extract = tiny_extract()
        run = extract["gvks"][0]["runs"][2]
        del run["zz"]["removed"]
        run["methods"] = {"removed": "1.16"}
        self.assertEqual(gen.check_extract(extract), [])

    def test_runs_out_of_order(self):
        extract = tiny_extract()
        runs = extract["gvks"][0]["runs"]
        runs[1], runs[2] = runs[2], runs[1]
        self.assertTrue(any("out of order" in p for p in gen.check_extract(extract)))


class CommittedDataTest(unittest.TestCase):
    def test_check_passes_on_the_committed_files(self):
        result = subprocess.run([sys.executable, os.path.join(HERE, "generate_api_history.py"),
                                 "--check"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(result.returncode, 0, result.stderr.decode())

    def test_history_facts_the_issue_asks_for(self):
        entries = {(e["group"], e["version"], e["kind"]): e
                   for e in load("api_history.json")["entries"]}
        deployment = entries[("extensions", "v1beta1", "Deployment")]
        self.assertEqual((deployment["removed"], deployment["replacement"]["group"]),
                         ("1.16", "apps"))
        psp = entries[("policy", "v1beta1", "PodSecurityPolicy")]
        self.assertEqual((psp["removed"], psp["typesDeletedIn"]), ("1.25", "1.29"))
        self.assertEqual(psp["resource"], "podsecuritypolicies")
        # The embedded catalog's 42 kinds whose types are gone by 1.36 are all here.
        gone = set()
        for gv in load("api_lifecycles.json")["groupVersions"]:
            for resource in gv["resources"]:
                deleted = resource.get("typesDeletedFromK8sApiIn")
                if deleted and gen.version_key(deleted) <= (1, 36):
                    gone.add((gv["group"], gv["version"], resource["kind"]))
        self.assertEqual(len(gone), 42)
        for key in gone:
            self.assertIsNotNone(entries[key]["typesDeletedIn"], key)


if __name__ == "__main__":
    unittest.main()
