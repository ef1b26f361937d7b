#!/usr/bin/env python3
"""Tests of the tree reader (generate.py --tree, generate_lines.extract_tree) on a small tree
laid out like kubernetes/kubernetes. Every Go file below is written here, in the shapes of
Kubernetes' files (each shape named), not copied from them.

  python3 -m unittest discover -s catalog -p 'test_*.py'
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import generate  # noqa: E402
import generate_lines as gen  # noqa: E402

# pkg/features/kube_features.go: typed consts, a const whose string differs from its name,
# a re-listed staging gate (genericfeatures.X) and a MinCompatibilityVersion spec (1.37's
# DRAFractionalCapacityRange shape).
KUBE_FEATURES = '''package features

import (
\tgenericfeatures "k8s.io/apiserver/pkg/features"
\t"k8s.io/component-base/featuregate"
)

const (
\tKubeGate featuregate.Feature = "KubeGate"
\tCPUCFSQuotaPeriod featuregate.Feature = "CustomCPUCFSQuotaPeriod"
\tMinCompat featuregate.Feature = "MinCompat"
)

var defaultVersionedKubernetesFeatureGates = map[featuregate.Feature]featuregate.VersionedSpecs{
\tKubeGate: {
\t\t{Version: version.MustParse("1.36"), Default: false, PreRelease: featuregate.Alpha},
\t\t{Version: version.MustParse("1.37"), Default: true, PreRelease: featuregate.Beta},
\t},
\tCPUCFSQuotaPeriod: {
\t\t{Version: version.MustParse("1.12"), Default: false, PreRelease: featuregate.Alpha},
\t},
\tMinCompat: {
\t\t{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Beta},
\t\t{Version: version.MustParse("1.37"), Default: true, PreRelease: featuregate.Beta, MinCompatibilityVersion: version.MustParse("1.37")},
\t},
\tgenericfeatures.GenericGate: {
\t\t{Version: version.MustParse("1.30"), Default: true, PreRelease: featuregate.Beta},
\t},
}
'''

# staging/src/k8s.io/apiserver/pkg/features/kube_features.go
APISERVER_FEATURES = '''package features

const (
\tGenericGate featuregate.Feature = "GenericGate"
)

var defaultVersionedKubernetesFeatureGates = map[featuregate.Feature]featuregate.VersionedSpecs{
\tGenericGate: {
\t\t{Version: version.MustParse("1.30"), Default: true, PreRelease: featuregate.Beta},
\t},
}
'''

# staging/src/k8s.io/api/<group>/<version>/{register,types,zz_generated.prerelease-lifecycle}.go
REGISTER = '''package {version}

const GroupName = "{group}"

func addKnownTypes(scheme *runtime.Scheme) error {{
\tscheme.AddKnownTypes(SchemeGroupVersion,
{kinds}\t)
\treturn nil
}}
'''
TYPE = '''
// +genclient
// +k8s:prerelease-lifecycle-gen:introduced={introduced}

// {kind} is a test kind.
type {kind} struct {{
}}

type {kind}List struct {{
}}
'''
ZZ = '''
func (in *{kind}) APILifecycle{what}() (major, minor int) {{
\treturn {major}, {minor}
}}
'''

# pkg/apis/<group>/install/install.go: the internal version and each version added to the
# scheme (what kube-apiserver registers), then the priorities, which need not name every
# registered version (node.k8s.io/v1alpha1's shape in 1.36).
INSTALL = '''package install

import (
\t"k8s.io/kubernetes/pkg/apis/{group}"
{imports})

func Install(scheme *runtime.Scheme) {{
\tutilruntime.Must({group}.AddToScheme(scheme))
{register}\tutilruntime.Must(scheme.SetVersionPriority({priority}))
}}
'''


def install(group, registered, prioritized):
    imports = "".join(f'\t"k8s.io/kubernetes/pkg/apis/{group}/{v}"\n'
                      for v in registered + [v for v in prioritized if v not in registered])
    register = "".join(f"\tutilruntime.Must({v}.AddToScheme(scheme))\n" for v in registered)
    priority = ", ".join(f"{v}.SchemeGroupVersion" for v in prioritized)
    return INSTALL.format(group=group, imports=imports, register=register, priority=priority)


# pkg/controlplane/instance.go (1.36's shape: generic lists beside kube-apiserver's own).
INSTANCE = '''package controlplane

import (
\tapiv1 "k8s.io/api/core/v1"
\twidgetsv1 "k8s.io/api/widgets/v1"
\twidgetsv1beta1 "k8s.io/api/widgets/v1beta1"
)

var (
\tgenericStableAPIGroupVersionsEnabledByDefault = []schema.GroupVersion{
\t\tapiv1.SchemeGroupVersion,
\t}
\tstableAPIGroupVersionsEnabledByDefault = []schema.GroupVersion{
\t\twidgetsv1.SchemeGroupVersion,
\t}
\tbetaAPIGroupVersionsDisabledByDefault = []schema.GroupVersion{
\t\twidgetsv1beta1.SchemeGroupVersion,
\t}
)
'''

# pkg/registry/<group>/rest/storage_<group>.go
REST = '''package rest

import (
\twidgetsv1 "k8s.io/api/widgets/v1"
\twidgetsv1beta1 "k8s.io/api/widgets/v1beta1"
)

func (p RESTStorageProvider) storage(apiResourceConfigSource serverstorage.APIResourceConfigSource) {
\tif resource := "widgets"; apiResourceConfigSource.ResourceEnabled(widgetsv1.SchemeGroupVersion.WithResource(resource)) {
\t}
\tif resource := "widgets"; apiResourceConfigSource.ResourceEnabled(widgetsv1beta1.SchemeGroupVersion.WithResource(resource)) {
\t}
}
'''

# pkg/kubeapiserver/default_storage_factory_builder.go
STORAGE = '''package kubeapiserver

import (
\t"k8s.io/kubernetes/pkg/apis/widgets"
)

func NewStorageFactoryConfig() *StorageFactoryConfig {
\tresources := []schema.GroupVersionResource{
\t\twidgets.Resource("widgets").WithVersion("v1beta1"),
\t}
\treturn &StorageFactoryConfig{ResourceEncodingOverrides: resources}
}
'''


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)


def api_package(root, group, version, kinds, introduced, removed=None):
    """k8s.io/api/<group>/<version> with `kinds`, each introduced (and removed) then;
    `removed` maps a kind to its removal release."""
    removed = removed or {}
    base = f"staging/src/k8s.io/api/{group.split('.')[0] or 'core'}/{version}"
    listed = "".join(f"\t\t&{k}{{}},\n\t\t&{k}List{{}},\n" for k in kinds)
    write(root, f"{base}/register.go",
          REGISTER.format(version=version, group=group, kinds=listed))
    types, zz = [], []
    for kind in kinds:
        text = TYPE.format(kind=kind, introduced=introduced)
        zz.append(ZZ.format(kind=kind, what="Introduced", major=introduced.split(".")[0],
                            minor=introduced.split(".")[1]))
        if kind in removed:
            text = text.replace("\n\n// " + kind, "\n// +k8s:prerelease-lifecycle-gen:removed="
                                + removed[kind] + "\n\n// " + kind)
            zz.append(ZZ.format(kind=kind, what="Removed", major=removed[kind].split(".")[0],
                                minor=removed[kind].split(".")[1]))
        types.append(text)
    write(root, f"{base}/types.go", "package " + version + "\n" + "".join(types))
    write(root, f"{base}/zz_generated.prerelease-lifecycle.go",
          "package " + version + "\n" + "".join(zz))


def make_tree(root):
    write(root, "pkg/features/kube_features.go", KUBE_FEATURES)
    write(root, "staging/src/k8s.io/apiserver/pkg/features/kube_features.go", APISERVER_FEATURES)
    api_package(root, "", "v1", ["Pod"], "1.0")
    api_package(root, "widgets.k8s.io", "v1", ["Widget"], "1.37")
    # v1beta1: Widget has REST storage; Gizmo has none and was removed in 1.25, before the
    # lowest emulation version a 1.37 binary accepts (1.34): listed, served at none.
    api_package(root, "widgets.k8s.io", "v1beta1", ["Gizmo", "Widget"], "1.20",
                removed={"Gizmo": "1.25"})
    # v1alpha1: registered by install.go but in no list of instance.go and with no REST
    # storage (apps/v1beta1's shape): --runtime-config accepts it, it serves nothing. Gadget
    # (removed 1.36, after 1.34) would be served by its lifecycle: left out.
    api_package(root, "widgets.k8s.io", "v1alpha1", ["Gadget", "Widget"], "1.10",
                removed={"Gadget": "1.36", "Widget": "1.16"})
    write(root, "pkg/apis/core/install/install.go", install("core", ["v1"], ["v1"]))
    write(root, "pkg/apis/widgets/install/install.go",
          install("widgets", ["v1alpha1", "v1beta1", "v1"], ["v1", "v1beta1"]))
    write(root, "pkg/controlplane/instance.go", INSTANCE)
    write(root, "pkg/registry/widgets/rest/storage_widgets.go", REST)
    write(root, "pkg/kubeapiserver/default_storage_factory_builder.go", STORAGE)


EXACT = {"level": "EXACT", "reason": ""}


class TreeTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="compatd-tree-")
        make_tree(self.root)

    def tearDown(self):
        shutil.rmtree(self.root)

    def extract(self, line="1.37", patch="1.37.2", exactness=EXACT):
        return gen.extract_tree(self.root, line, patch, exactness, "test tree")

    def test_reads_every_fact_of_the_layout(self):
        entry = self.extract()
        gates = {g["name"]: g for g in entry["gates"]}
        self.assertEqual(sorted(gates), ["CustomCPUCFSQuotaPeriod", "GenericGate", "KubeGate",
                                         "MinCompat"])
        self.assertEqual(gates["GenericGate"]["component"], "apiserver")
        self.assertEqual(gates["MinCompat"]["specs"][1]["minCompatibilityVersion"], "1.37")
        self.assertNotIn("minCompatibilityVersion", gates["MinCompat"]["specs"][0])
        self.assertEqual(entry["kubeRelisted"], ["GenericGate"])
        self.assertEqual(entry["versionPriorities"],
                         {"": ["v1"], "widgets.k8s.io": ["v1", "v1beta1"]})
        self.assertEqual([(e["group"], e["version"]) for e in
                          entry["enablement"]["stableAPIGroupVersionsEnabledByDefault"]],
                         [("", "v1"), ("widgets.k8s.io", "v1")])
        self.assertEqual(entry["restStorage"], {"widgets.k8s.io/v1": ["widgets"],
                                                "widgets.k8s.io/v1beta1": ["widgets"]})
        self.assertEqual(entry["storageOverrides"], [
            {"group": "widgets.k8s.io", "resource": "widgets", "version": "v1beta1"}])
        self.assertEqual(entry["registeredVersions"],
                         {"": ["v1"], "widgets.k8s.io": ["v1alpha1", "v1beta1", "v1"]})
        self.assertEqual({(k["group"], k["version"], k["kind"]) for k in entry["apiKinds"]},
                         {("", "v1", "Pod"), ("widgets.k8s.io", "v1", "Widget"),
                          ("widgets.k8s.io", "v1beta1", "Gizmo"),
                          ("widgets.k8s.io", "v1beta1", "Widget"),
                          ("widgets.k8s.io", "v1alpha1", "Gadget"),
                          ("widgets.k8s.io", "v1alpha1", "Widget")})
        self.assertEqual(entry["patch"], "1.37.2")
        self.assertEqual(entry["exactness"], EXACT)

    def test_renders_a_catalog(self):
        entry = self.extract(exactness={"level": "PROVISIONAL", "reason": "a test tree"})
        history = ["apiHistory:"]
        changes = {"changes": []}
        # The committed overlay (data/lines_overlay.json) is for the real 1.37, not this tree.
        saved, gen.LINES_OVERLAY = gen.LINES_OVERLAY, os.path.join(self.root, "no-overlay.json")
        self.addCleanup(setattr, gen, "LINES_OVERLAY", saved)
        text = gen.render_line(entry, {"gvks": [], "repos": []}, {"groupVersions": []},
                               history, changes)
        self.assertIn('binaryVersion: "1.37.2"\nexactness:\n  level: PROVISIONAL\n'
                      '  reason: "a test tree"\n', text)
        self.assertIn('minCompatibilityVersion: "1.37"', text)
        self.assertIn("  - group: widgets.k8s.io\n    version: v1beta1\n", text)
        self.assertIn("  - {group: widgets.k8s.io, resource: widgets, version: v1beta1}", text)
        # Kinds no apiHistory entry lists (here: all) get one, with their lifecycle.
        self.assertIn("  - {group: widgets.k8s.io, version: v1, kind: Widget, resource: widgets, "
                      'introduced: "1.37"}', text)

    def render(self):
        # The committed overlay (data/lines_overlay.json) is for the real lines, not this tree.
        saved, gen.LINES_OVERLAY = gen.LINES_OVERLAY, os.path.join(self.root, "no-overlay.json")
        self.addCleanup(setattr, gen, "LINES_OVERLAY", saved)
        return gen.render_line(self.extract(), {"gvks": [], "repos": []},
                               {"groupVersions": []}, ["apiHistory:"], {"changes": []})

    def test_every_registered_version_is_listed_serving_only_its_rest_storage(self):
        # kube-apiserver accepts --runtime-config=G/V when pkg/apis/<G>/install registers V
        # (apiserver pkg/server/resourceconfig/helpers.go IsVersionRegistered), served or
        # not; what it serves is what pkg/registry/<G>/rest builds.
        text = self.render()
        apis = text[text.index("apis:\n"):text.index("storageOverrides:")]
        self.assertEqual(
            apis[apis.index("  - group: widgets.k8s.io"):],
            "  - group: widgets.k8s.io\n    version: v1\n    resources:\n"
            '      - {resource: widgets, kind: Widget, introduced: "1.37"}\n'
            "  - group: widgets.k8s.io\n    version: v1beta1\n    resources:\n"
            '      - {resource: gizmos, kind: Gizmo, introduced: "1.20", removed: "1.25"}\n'
            '      - {resource: widgets, kind: Widget, introduced: "1.20"}\n'
            # After the prioritized versions, as the scheme's PrioritizedVersionsForGroup.
            "  - group: widgets.k8s.io\n    version: v1alpha1\n    resources:\n"
            '      - {resource: widgets, kind: Widget, introduced: "1.10", removed: "1.16"}\n')
        self.assertIn("# Registered, served by no REST storage (1):\n#   widgets.k8s.io/v1alpha1\n",
                      text)
        self.assertIn("# Kinds left out: no REST storage serves them (1):\n"
                      "#   widgets.k8s.io/v1alpha1 gadgets (removed 1.36)\n", text)

    def test_a_registered_version_without_resource_kinds_serves_nothing(self):
        api_package(self.root, "widgets.k8s.io", "v1alpha1", ["Gadget"], "1.10",
                    removed={"Gadget": "1.36"})
        text = self.render()
        self.assertIn("  - group: widgets.k8s.io\n    version: v1alpha1\n    resources: []\n",
                      text)

    def test_an_unregistered_prioritized_version_stops_it(self):
        write(self.root, "pkg/apis/widgets/install/install.go",
              install("widgets", ["v1"], ["v1", "v1beta1"]))
        self.assert_stops(r"install\.go: SetVersionPriority names v1beta1 of widgets\.k8s\.io, "
                          r"which no <version>\.AddToScheme\(scheme\) registers")

    def assert_stops(self, pattern, **kwargs):
        with self.assertRaisesRegex(SystemExit, pattern):
            self.extract(**kwargs)

    def test_missing_file_names_path_and_expectation(self):
        os.unlink(os.path.join(self.root, "pkg/kubeapiserver/default_storage_factory_builder.go"))
        self.assert_stops(r"pkg/kubeapiserver/default_storage_factory_builder\.go: no such file "
                          r"\(the storage overrides\)")

    def test_not_a_directory(self):
        shutil.rmtree(self.root)
        self.assert_stops(r"no such directory \(expected a kubernetes/kubernetes checkout\)")
        os.makedirs(self.root)

    def test_unparseable_go(self):
        path = os.path.join(self.root, "pkg/features/kube_features.go")
        with open(path, "a", encoding="utf-8") as f:
            f.write("var more = map[featuregate.Feature]featuregate.VersionedSpecs{\n"
                    "\tKubeGate: {{Version: version.MustParse(\"1.37\"), Default: maybe, "
                    "PreRelease: featuregate.Beta}},\n}\n")
        self.assert_stops(r"kube_features\.go KubeGate: Default 'maybe' is not a known bool")

    def test_unknown_layout(self):
        write(self.root, "pkg/controlplane/instance.go", "package controlplane\n")
        self.assert_stops(r"instance\.go: no stableAPIGroupVersionsEnabledByDefault .*unknown "
                          "layout")
        write(self.root, "pkg/controlplane/instance.go", INSTANCE)
        shutil.rmtree(os.path.join(self.root, "pkg/registry"))
        self.assert_stops(r"pkg/registry: no directory")

    def test_wrong_line_and_flags(self):
        self.assert_stops(r"no gate has a spec at 1\.38 \(newest: 1\.37\)", line="1.38",
                          patch="1.38")
        self.assert_stops(r"--patch '1\.36\.2': expected 1\.37 or 1\.37\.N", patch="1.36.2")
        self.assert_stops(r"--line 'v1\.37'", line="v1.37")
        self.assert_stops(r"PROVISIONAL needs --reason",
                          exactness={"level": "PROVISIONAL", "reason": ""})

    def test_replaces_the_line_in_the_extract(self):
        entry = self.extract()
        extract = {"lines": [{"line": "1.35"}, {"line": "1.37", "old": True}, {"line": "1.36"}]}
        lines = generate.with_tree_line(extract, entry)["lines"]
        self.assertEqual([e["line"] for e in lines], ["1.35", "1.36", "1.37"])
        self.assertNotIn("old", lines[2])

    def test_write_all_writes_everything_or_nothing(self):
        out = os.path.join(self.root, "out")
        os.makedirs(out)
        good = os.path.join(out, "a.yaml")
        bad = os.path.join(out, "missing-dir", "b.yaml")
        with self.assertRaisesRegex(SystemExit, "nothing written"):
            generate.write_all({good: "a\n", bad: "b\n"})
        self.assertEqual(os.listdir(out), [])
        generate.write_all({good: "a\n"})
        self.assertEqual(os.listdir(out), ["a.yaml"])


class OverlayTest(unittest.TestCase):
    def test_the_committed_overlay_applies_to_its_line(self):
        with open(gen.LINES_EXTRACT, encoding="utf-8") as f:
            extract = json.load(f)
        for entry in extract["lines"]:
            applied, overlay = gen.with_overlay(entry)
            if overlay is None:
                continue
            names = {g["name"] for g in applied["gates"]}
            for change in overlay["gates"]:
                self.assertIn(change["name"], names)
                self.assertTrue(change["prs"] or change["source"], change["name"])


if __name__ == "__main__":
    unittest.main()
