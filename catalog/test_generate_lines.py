#!/usr/bin/env python3
"""Unit tests of catalog/generate_lines.py and crosscheck_lines.py (standard library only).

  python3 -m unittest discover -s catalog -p 'test_*.py'

The Go snippets are written here in the shapes Kubernetes' feature, install and instance files
use (each shape named where it occurs), not copied from them.
"""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import crosscheck_lines  # noqa: E402
import generate_lines as gen  # noqa: E402

FEATURES_GO = '''
package features

import (
\tgenericfeatures "k8s.io/apiserver/pkg/features"
\t"k8s.io/component-base/featuregate"
)

const (
\t// Typed const whose string differs from the identifier.
\tCPUCFSQuotaPeriod featuregate.Feature = "CustomCPUCFSQuotaPeriod"

\tConverted = featuregate.Feature("Converted")

\tUntyped = "Untyped"

\tdefaultOn = true
)

func featureGates() map[featuregate.Feature]featuregate.FeatureSpec {
\treturn map[featuregate.Feature]featuregate.FeatureSpec{
\t\tCPUCFSQuotaPeriod: {Default: false, PreRelease: featuregate.Alpha},
\t\tConverted:         {Default: defaultOn, PreRelease: featuregate.Beta}, // a comment, {braces}
\t}
}

var versioned = map[featuregate.Feature]featuregate.VersionedSpecs{
\tUntyped: {
\t\t{Version: version.MustParse("1.26"), Default: true, PreRelease: featuregate.Alpha},
\t\t{Version: version.MajorMinor(1, 33), Default: false, PreRelease: featuregate.Deprecated, LockToDefault: true},
\t},
\tgenericfeatures.APIListChunking: {
\t\t{Version: version.MustParse("1.8"), Default: false, PreRelease: featuregate.Alpha},
\t},
}
'''


class GoReadingTest(unittest.TestCase):
    def test_consts_in_all_three_shapes(self):
        self.assertEqual(gen.feature_consts(FEATURES_GO), {
            "CPUCFSQuotaPeriod": "CustomCPUCFSQuotaPeriod",
            "Converted": "Converted",
            "Untyped": "Untyped",
        })

    def test_maps_skip_result_types_and_resolve_bool_consts(self):
        entries = gen.feature_maps(FEATURES_GO, "test")
        self.assertEqual([(k, v) for k, v, _ in entries], [
            ("CPUCFSQuotaPeriod", False), ("Converted", False),
            ("Untyped", True), ("genericfeatures.APIListChunking", True)])
        specs = {k: s for k, _, s in entries}
        self.assertEqual(specs["Converted"], [
            {"version": None, "default": True, "lockToDefault": False, "preRelease": "BETA"}])
        self.assertEqual(specs["Untyped"], [
            {"version": "1.26", "default": True, "lockToDefault": False, "preRelease": "ALPHA"},
            {"version": "1.33", "default": False, "lockToDefault": True,
             "preRelease": "DEPRECATED"}])

    def test_unknown_spec_field_stops(self):
        bad = FEATURES_GO.replace("Default: false, PreRelease: featuregate.Alpha}",
                                  "Default: false, Stage: featuregate.Alpha}")
        with self.assertRaisesRegex(ValueError, "unknown spec field 'Stage'"):
            gen.feature_maps(bad, "test")

    def test_min_compatibility_version_spec(self):
        # The shape of DRAFractionalCapacityRange in kubernetes/kubernetes
        # pkg/features/kube_features.go at ae5d4d35 (2026-07, the 1.37 code freeze): two
        # 1.37 Beta specs, the second on by default only at min-compatibility 1.37.
        text = FEATURES_GO.replace(
            "\tUntyped = \"Untyped\"",
            "\tUntyped = \"Untyped\"\n\n\tFractional featuregate.Feature = \"Fractional\"")
        self.assertIn("var versioned = map[", text)
        text = text.replace(
            "var versioned = map[featuregate.Feature]featuregate.VersionedSpecs{",
            "var versioned = map[featuregate.Feature]featuregate.VersionedSpecs{\n\tFractional: {\n"
            "\t\t{Version: version.MustParse(\"1.37\"), Default: false, "
            "PreRelease: featuregate.Beta},\n"
            "\t\t{Version: version.MustParse(\"1.37\"), Default: true, "
            "PreRelease: featuregate.Beta, MinCompatibilityVersion: version.MustParse(\"1.37\")},\n"
            "\t},")
        specs = {key: specs for key, _, specs in gen.feature_maps(text, "test")}["Fractional"]
        self.assertEqual(specs, [
            {"version": "1.37", "default": False, "lockToDefault": False, "preRelease": "BETA"},
            {"version": "1.37", "default": True, "lockToDefault": False, "preRelease": "BETA",
             "minCompatibilityVersion": "1.37"}])
        lines, _ = gen.feature_lines(
            [{"name": "DRAFractionalCapacityRange", "component": "kube", "specs": specs}], "1.37")
        self.assertEqual(lines[-2:], [
            '      - {version: "1.37", default: false, lockToDefault: false, preRelease: Beta}',
            '      - {version: "1.37", default: true, lockToDefault: false, preRelease: Beta, '
            'minCompatibilityVersion: "1.37"}'])

    def test_unknown_bool_stops(self):
        bad = FEATURES_GO.replace("Default: defaultOn", "Default: someFunc()")
        with self.assertRaisesRegex(ValueError, "is not a known bool"):
            gen.feature_maps(bad, "test")

    def test_imports(self):
        self.assertEqual(gen.imports(FEATURES_GO), {
            "genericfeatures": "k8s.io/apiserver/pkg/features",
            "featuregate": "k8s.io/component-base/featuregate"})

    def test_gv_of_import(self):
        dirs = {"flowcontrol/v1beta3": ("flowcontrol.apiserver.k8s.io", "v1beta3"),
                "core/v1": ("", "v1")}
        self.assertEqual(gen.gv_of_import("k8s.io/api/core/v1", dirs), ("", "v1"))
        self.assertEqual(gen.gv_of_import("k8s.io/kubernetes/pkg/apis/flowcontrol/v1beta3", dirs),
                         ("flowcontrol.apiserver.k8s.io", "v1beta3"))
        self.assertIsNone(gen.gv_of_import("k8s.io/api/extensions/v1beta1", dirs))
        self.assertEqual(gen.group_of_import("k8s.io/kubernetes/pkg/apis/flowcontrol", dirs),
                         "flowcontrol.apiserver.k8s.io")

    def test_fork_marker_stops(self):
        gen.check_fork_file("package x\n", "x.go")
        with self.assertRaisesRegex(SystemExit, "x.go:2: an OpenShift change"):
            gen.check_fork_file("package x\n// openshift: extra group\n", "x.go")

    def test_generated_feature_list(self):
        text = ('# generated\n\n- name: A\n  versionedSpecs:\n  - default: false\n'
                '    lockToDefault: false\n    preRelease: Alpha\n    version: "1.8"\n'
                '  - default: true\n    lockToDefault: true\n    preRelease: GA\n'
                '    version: "1.10"\n')
        self.assertEqual(gen.parse_feature_list(text), {
            "A": [["1.8", False, False, "ALPHA"], ["1.10", True, True, "GA"]]})


class RenderTest(unittest.TestCase):
    def test_served_lifecycle_is_the_methods(self):
        # Generated methods, overridden by hand-written ones; tags alone give nothing.
        self.assertEqual(gen.served_lifecycle(
            {"tags": {"introduced": "1.0"}, "zz": {"introduced": "1.0"},
             "methods": {"deprecated": "1.33"}}),
            {"introduced": "1.0", "deprecated": "1.33"})
        self.assertEqual(gen.served_lifecycle({"tags": {"introduced": "1.26"}}), {})
        self.assertEqual(gen.served_lifecycle({"tags": {"introduced": "1.26"}, "zz": {}}), {})

    def test_unversioned_spec_is_version_0_0(self):
        gates = [{"name": "G", "component": "kube", "versioned": False,
                  "specs": [{"version": None, "default": True, "lockToDefault": True,
                             "preRelease": "GA"}]}]
        lines, dropped = gen.feature_lines(gates, "1.31")
        self.assertEqual(dropped, 0)
        self.assertIn('      - {version: "0.0", default: true, lockToDefault: true, preRelease: GA}',
                      lines)

    def test_specs_after_the_line_are_dropped(self):
        gates = [{"name": "G", "component": "kube", "versioned": True,
                  "specs": [{"version": "1.33", "default": False, "lockToDefault": False,
                             "preRelease": "ALPHA"},
                            {"version": "1.34", "default": True, "lockToDefault": False,
                             "preRelease": "BETA"}]}]
        lines, dropped = gen.feature_lines(gates, "1.33")
        self.assertEqual(dropped, 1)
        self.assertFalse(any('"1.34"' in line for line in lines))

    def test_patch_change_for_an_unknown_gate_stops(self):
        with open(gen.LINES_EXTRACT, encoding="utf-8") as f:
            extract = json.load(f)
        entry = extract["lines"][0]
        changes = {"changes": [{"line": entry["line"], "feature": "NoSuchGate",
                                "since": entry["patch"], "before": "not registered"}]}
        with self.assertRaisesRegex(SystemExit, "NoSuchGate is not a gate"):
            gen.render_line(entry, {"gvks": [], "repos": []}, {"groupVersions": []}, [],
                            changes)


class CrossCheckTest(unittest.TestCase):
    def test_committed_extract_has_only_known_differences(self):
        with open(gen.LINES_EXTRACT, encoding="utf-8") as f:
            extract = json.load(f)
        diffs = crosscheck_lines.compare(extract)
        unexplained = [d for d in diffs if crosscheck_lines.known_reason(d, extract) is None]
        self.assertEqual(unexplained, [])

    def test_a_changed_spec_is_reported(self):
        with open(gen.LINES_EXTRACT, encoding="utf-8") as f:
            extract = json.load(f)
        entry = next(e for e in extract["lines"] if e["line"] == "1.32")
        gate = next(g for g in entry["gates"] if g["name"] == "WindowsHostNetwork")
        gate["specs"][0]["default"] = not gate["specs"][0]["default"]
        diffs = crosscheck_lines.compare(extract)
        self.assertIn(("gates-by-line", "1.32", "WindowsHostNetwork", "specs"),
                      [d[:4] for d in diffs])


if __name__ == "__main__":
    unittest.main()
