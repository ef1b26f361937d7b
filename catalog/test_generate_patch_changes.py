#!/usr/bin/env python3
"""Unit tests of catalog/generate_patch_changes.py (standard library only).

  python3 -m unittest discover -s catalog -p 'test_*.py'

The staging comparison runs on a small git repository made here, laid out like
kubernetes/apiserver (pkg/features/kube_features.go at tags v0.35.0, v0.35.1, v0.35.2); the
Go text is written in the shape that file uses, not copied from it.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import generate_lines as gl  # noqa: E402
import generate_patch_changes as gen  # noqa: E402

APISERVER_FEATURES = '''
package features

import "k8s.io/component-base/featuregate"

const (
\tWatchList featuregate.Feature = "WatchList"
%s)

var defaultVersionedKubernetesFeatureGates = map[featuregate.Feature]featuregate.VersionedSpecs{
\tWatchList: {
\t\t{Version: version.MustParse("1.27"), Default: false, PreRelease: featuregate.Alpha},
\t\t{Version: version.MustParse("1.34"), Default: %s, PreRelease: featuregate.Beta},
\t},
%s}
'''


def features_at(watch_list_default, with_new_gate):
    const = '\tNewGate featuregate.Feature = "NewGate"\n' if with_new_gate else ""
    entry = ('\tNewGate: {\n\t\t{Version: version.MustParse("1.35"), Default: false, '
             'PreRelease: featuregate.Beta},\n\t},\n') if with_new_gate else ""
    return APISERVER_FEATURES % (const, watch_list_default, entry)


def git(repo, *args):
    subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t",
                    "-c", "commit.gpgsign=false"] + list(args),
                   check=True, capture_output=True)


def spec(version, default, stage):
    return {"version": version, "default": default, "lockToDefault": False,
            "preRelease": stage}


class StagingComparisonTest(unittest.TestCase):
    def setUp(self):
        self.sources = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.sources)
        repo = os.path.join(self.sources, "kubernetes+apiserver", "repo")
        os.makedirs(os.path.join(repo, "pkg", "features"))
        git(repo, "init", "-q")
        tags = [("v0.35.0", "true", False), ("v0.35.1", "false", False),
                ("v0.35.2", "false", True)]
        for tag, default, new_gate in tags:
            with open(os.path.join(repo, "pkg", "features", "kube_features.go"), "w",
                      encoding="utf-8") as f:
                f.write(features_at(default, new_gate))
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", tag)
            git(repo, "tag", tag)
        # The other staging repositories: absent files are skipped.
        for repo_name, _, _ in gl.STAGING_FEATURE_FILES:
            other = os.path.join(self.sources, repo_name.replace("/", "+"), "repo")
            if not os.path.isdir(other):
                os.makedirs(other)
                git(other, "init", "-q")
                git(other, "commit", "-q", "--allow-empty", "-m", "empty")
                for tag, _, _ in tags:
                    git(other, "tag", tag)
        # generate_lines.git_show reads --git-dir: the work tree's .git.
        for name in os.listdir(self.sources):
            path = os.path.join(self.sources, name)
            os.rename(os.path.join(path, "repo"), os.path.join(path, "work"))
            os.symlink(os.path.join(path, "work", ".git"), os.path.join(path, "repo"))

    def readings(self):
        tags = gen.staging_tags(self.sources, "1.35")
        self.assertEqual(tags, ["v0.35.0", "v0.35.1", "v0.35.2"])
        return [(t[1:].replace("0.", "1.", 1), t, gen.staging_reading(self.sources, t))
                for t in tags]

    def test_every_changed_gate_is_found_between_its_tags(self):
        diffs = gen.differences(self.readings())
        self.assertEqual([(d[0], d[1], d[2]) for d in diffs],
                         [("1.35.0", "1.35.1", "apiserver:WatchList"),
                          ("1.35.1", "1.35.2", "apiserver:NewGate")])
        self.assertEqual(diffs[0][3]["specs"][1], spec("1.34", True, "BETA"))
        self.assertEqual(diffs[0][4]["specs"][1], spec("1.34", False, "BETA"))
        self.assertIsNone(diffs[1][3])

    def test_a_change_no_changelog_entry_explains_stops_the_run(self):
        diffs = gen.differences(self.readings())
        with self.assertRaisesRegex(SystemExit, "WatchList differs between 1.35.0 and 1.35.1"):
            gen.explain("1.35", diffs, "staging tags", fork=False)
        saved = gen.CHANGELOG_CHANGES
        try:
            gen.CHANGELOG_CHANGES = [
                {"line": "1.35", "feature": "WatchList", "since": "1.35.1"},
                {"line": "1.35", "feature": "NewGate", "since": "1.35.2"}]
            gen.explain("1.35", diffs, "staging tags", fork=False)
            # An entry whose since lies outside the two readings does not explain it.
            gen.CHANGELOG_CHANGES = [
                {"line": "1.35", "feature": "WatchList", "since": "1.35.2"},
                {"line": "1.35", "feature": "NewGate", "since": "1.35.2"}]
            with self.assertRaisesRegex(SystemExit, "WatchList"):
                gen.explain("1.35", diffs, "staging tags", fork=False)
        finally:
            gen.CHANGELOG_CHANGES = saved


class DeriveTest(unittest.TestCase):
    def test_phrase_is_the_spec_at_the_line(self):
        gate = {"specs": [spec("1.24", False, "ALPHA"), spec("1.35", True, "BETA"),
                          spec("1.36", False, "BETA")]}
        self.assertEqual(gen.phrase(gate, "1.35"), "Beta, default true")
        self.assertEqual(gen.phrase({"specs": [spec(None, True, "BETA")]}, "1.31"),
                         "Beta, default true")
        self.assertEqual(gen.phrase(None, "1.31"), "not registered")

    def test_earlier_specs_skip_a_fork_reading_with_an_early_pick(self):
        before = {"MaxUnavailableStatefulSet": {"versioned": True, "specs": [
            spec("1.24", False, "ALPHA"), spec("1.35", True, "BETA")]}}
        picked = {"MaxUnavailableStatefulSet": {"versioned": True, "specs": [
            spec("1.24", False, "ALPHA"), spec("1.35", False, "BETA")]}}
        fork = [("1.35.2", "fork 1.35.2", before), ("1.35.3", "fork 1.35.3", picked)]
        change = next(c for c in gen.CHANGELOG_CHANGES
                      if c["feature"] == "MaxUnavailableStatefulSet")
        derived = gen.derive_change(change, [], fork)
        self.assertEqual(derived["specsFrom"], "fork 1.35.2")
        self.assertEqual(derived["specsBefore"][1], spec("1.35", True, "BETA"))
        self.assertEqual(derived["before"], "Beta, default true")

    def test_a_gate_missing_before_is_not_registered(self):
        change = {"line": "1.32", "feature": "OrderedNamespaceDeletion", "since": "1.32.3",
                  "pr": 130508, "changelog": "Added a feature gate"}
        derived = gen.derive_change(change, [("1.32.1", "r", {})], [])
        self.assertIs(derived["registeredBefore"], False)
        self.assertNotIn("specsBefore", derived)


class RenderTest(unittest.TestCase):
    def test_a_line_gets_patches_known_through_and_each_change_its_earlier_form(self):
        changes = {"lines": [{"line": "1.35", "patch": "1.35.4",
                              "patchesKnownThrough": "1.35.7"}],
                   "changes": [
                       {"line": "1.35", "feature": "MaxUnavailableStatefulSet",
                        "since": "1.35.4", "before": "Beta, default true",
                        "source": "CHANGELOG-1.35.md v1.35.4 (kubernetes/kubernetes#137926)",
                        "specsBefore": [spec("1.24", False, "ALPHA"),
                                        spec("1.35", True, "BETA")]},
                       {"line": "1.35", "feature": "G", "since": "1.35.2",
                        "before": "not registered", "registeredBefore": False}]}
        lines = gl.patch_change_lines(changes, "1.35")
        self.assertIn('patchesKnownThrough: "1.35.7"', lines)
        at = lines.index("  - feature: MaxUnavailableStatefulSet")
        self.assertEqual(lines[at + 1:at + 3], ['    since: "1.35.4"',
                                                '    before: "Beta, default true"'])
        self.assertIn('      - {version: "1.35", default: true, lockToDefault: false, '
                      'preRelease: Beta}', lines)
        self.assertIn("    registeredBefore: false", lines)
        self.assertEqual(gl.patch_change_lines(changes, "1.34"), [])


class CommittedDataTest(unittest.TestCase):
    def test_every_change_is_a_gate_of_its_line_with_what_came_before(self):
        with open(gen.OUTPUT, encoding="utf-8") as f:
            data = json.load(f)
        with open(gl.LINES_EXTRACT, encoding="utf-8") as f:
            extract = {e["line"]: e for e in json.load(f)["lines"]}
        pins = {r["line"]: r.get("patch") for r in data["lines"]}
        for change in data["changes"]:
            line = change["line"]
            names = {g["name"] for g in extract[line]["gates"]}
            self.assertIn(change["feature"], names)
            self.assertLessEqual(gen.patch_key(change["since"]), gen.patch_key(pins[line]))
            self.assertNotEqual(change.get("registeredBefore") is False,
                                bool(change.get("specsBefore")), change)
            self.assertIn("kubernetes/kubernetes#", change["source"])
        for record in data["lines"]:
            if record.get("patch"):
                self.assertGreaterEqual(gen.patch_key(record["patchesKnownThrough"]),
                                        gen.patch_key(record["patch"]))


if __name__ == "__main__":
    unittest.main()
