#!/usr/bin/env python3
"""Derives catalog/data/patch_changes.json: every gate a patch release changed inside a line.

A line's catalog describes one patch (generate_lines.LINES, `patch`); this file records how
the line's other patches register some gates otherwise, and how far the patches were read
(`patchesKnownThrough`). It compares, per line 1.31-1.36:

* staging gates: the feature files of every staging repository (generate_lines.
  STAGING_FEATURE_FILES) at every patch tag v0.N.0, v0.N.1, ... in the mirror;
* kube gates (pkg/features, not in staging): the k8s.io/kubernetes module vendored at a
  patch release (UPSTREAM_KUBE: the tag's own content), and the OpenShift fork copy inside
  openshift/microshift at the first commit of each release branch that moved to a patch
  (Makefile.kube_git.var's KUBE_GIT_VERSION); the fork's own carries are named in
  FORK_CARRIES and left out.

Every difference between two consecutive readings must be explained by an entry of
CHANGELOG_CHANGES (a cherry-pick named by the line's CHANGELOG with its PR) or a fork carry,
else the run stops naming it; every change's earlier specs are read from the newest reading
before it (exact upstream first, else the fork copy) unless the entry gives them. Feature
files are parsed with generate_lines' own functions.

Usage (catalog/README.md, "Patch changes"):
  python3 catalog/generate_patch_changes.py --sources DIR          write data/patch_changes.json
  python3 catalog/generate_patch_changes.py --sources DIR --check  exit 1 if it is stale
DIR holds git directories as DIR/<owner>+<name>/repo (the layout generate.py --sources
reads): kubernetes/{apiserver,apiextensions-apiserver,controller-manager,client-go,
component-base}, openshift-kni/scheduler-plugins, ceph/ceph-csi, openshift/microshift.
Then python3 catalog/generate.py renders the catalogs. Standard library only; deterministic.
"""

import argparse
import json
import os
import re
import subprocess
import sys

import generate_lines as gl

OUTPUT = os.path.join(gl.DATA, "patch_changes.json")
LINE_NUMBERS = ["1.31", "1.32", "1.33", "1.34", "1.35", "1.36"]

# The k8s.io/kubernetes module vendored at a patch release: (repo, commit, version). Each
# commit's vendor/modules.txt is checked to name that version. The lines' pinned patches
# (generate_lines.LINES, `kube`) are read as well.
UPSTREAM_KUBE = [
    ("ceph/ceph-csi", "77f8c3f8f394eb767c64e852506d5fece7f2919b", "1.31.0"),
    ("ceph/ceph-csi", "52fcb7b00c3d586c12c05593b1c73ad2c42b171f", "1.31.1"),
    ("openshift-kni/scheduler-plugins", "d7ac706a7ed357d574d7da9535f8ebb6231be377", "1.31.2"),
    ("openshift-kni/scheduler-plugins", "4f354f99bd20a80408a7d9f54dfd605da059f3a1", "1.32.3"),
    ("openshift-kni/scheduler-plugins", "30d55f730470cfadf6769190a844bbd4aa4a5d88", "1.34.1"),
    ("openshift-kni/scheduler-plugins", "2117d3e3014c4e22354a87c333bf37c741baab39", "1.35.7"),
]

FORK_REPO = "openshift/microshift"
FORK_BRANCHES = {"1.31": "release-4.18", "1.32": "release-4.19", "1.33": "release-4.20",
                 "1.34": "release-4.21", "1.35": "release-4.22", "1.36": "release-4.23"}
FORK_FEATURE_DIRS = ["deps/github.com/openshift/kubernetes/pkg/features",
                     "vendor/k8s.io/kubernetes/pkg/features"]
FORK_CHANGELOG = "deps/github.com/openshift/kubernetes/CHANGELOG/CHANGELOG-{line}.md"

# Differences between two fork readings that are OpenShift's, not a Kubernetes patch's:
# (line, fork patch that shows it, gate) -> why.
FORK_CARRIES = {
    ("1.31", "1.31.14", "StreamingCollectionEncodingToJSON"):
        "OpenShift backport (the release-lines note's known fork differences); no v0.31.x "
        "apiserver tag registers it",
    ("1.31", "1.31.14", "StreamingCollectionEncodingToProtobuf"):
        "OpenShift backport; no v0.31.x apiserver tag registers it",
    ("1.32", "1.32.10", "StreamingCollectionEncodingToJSON"):
        "OpenShift backport; the v0.32.x apiserver tags register it unchanged",
    ("1.32", "1.32.10", "StreamingCollectionEncodingToProtobuf"):
        "OpenShift backport; the v0.32.x apiserver tags register it unchanged",
    ("1.32", "1.32.3", "genericfeatures.ResilientWatchCacheInitialization"):
        "OpenShift dropped its default-false carry; the v0.32.x apiserver tags have Beta, "
        "default true throughout",
    ("1.35", "1.35.3", "MaxUnavailableStatefulSet"):
        "OpenShift picked kubernetes/kubernetes#137926 into its 1.35.3 rebase; upstream "
        "shipped it in v1.35.4",
}

# Gate changes the lines' CHANGELOGs name in patch releases (CHANGELOG/CHANGELOG-1.N.md of
# kubernetes/kubernetes, read in the fork copy, which carries upstream's changelog as it
# is). `specsBefore`, when given, is what the patches before `since` registered and no
# reading before `since` exists; `specsFrom` then says where it comes from.
CHANGELOG_CHANGES = [
    {"line": "1.31", "feature": "DisableNodeKubeProxyVersion", "since": "1.31.1",
     "pr": 126721,
     "changelog": "Reverted the `DisableNodeKubeProxyVersion` feature gate to default-off"},
    {"line": "1.31", "feature": "OrderedNamespaceDeletion", "since": "1.31.7", "pr": 130509,
     "changelog": "Added a feature gate `OrderedNamespaceDeletion`"},
    {"line": "1.32", "feature": "ServiceAccountNodeAudienceRestriction", "since": "1.32.2",
     "pr": 130015,
     "changelog": "Reverts the `ServiceAccountNodeAudienceRestriction` feature to disabled "
                  "in v1.32"},
    {"line": "1.32", "feature": "OrderedNamespaceDeletion", "since": "1.32.3", "pr": 130508,
     "changelog": "Added a feature gate `OrderedNamespaceDeletion`"},
    {"line": "1.34", "feature": "SchedulerAsyncAPICalls", "since": "1.34.2", "pr": 134401,
     "changelog": "The SchedulerAsyncAPICalls feature gate has been disabled"},
    {"line": "1.34", "feature": "StatefulSetSemanticRevisionComparison", "since": "1.34.2",
     "pr": 135087,
     "changelog": "This fix is guarded by a `StatefulSetSemanticRevisionComparison` feature "
                  "gate, which is enabled by default"},
    {"line": "1.35", "feature": "SchedulerAsyncAPICalls", "since": "1.35.1", "pr": 135904,
     "changelog": "Fixed a 1.35.0 regression by disabling the `SchedulerAsyncAPICalls` "
                  "feature gate",
     # No copy of 1.35.0's pkg/features was found. CHANGELOG-1.35.md: #134400 (1.35.0-alpha)
     # disabled the 1.34 Beta, #135059 (1.35.0-beta) "re-enabled by default" for 1.35, and
     # 1.35.1+ (and 1.36) have the 1.34 spec alone.
     "specsBefore": [
         {"version": "1.34", "default": False, "lockToDefault": False, "preRelease": "BETA"},
         {"version": "1.35", "default": True, "lockToDefault": False, "preRelease": "BETA"}],
     "specsFrom": "CHANGELOG-1.35.md v1.35.0-alpha.1 (#134400: the 1.34 Beta default off) and "
                  "v1.35.0-beta.0 (#135059: re-enabled by default at 1.35); no 1.35.0 "
                  "pkg/features was read"},
    {"line": "1.35", "feature": "MaxUnavailableStatefulSet", "since": "1.35.4", "pr": 137926,
     "changelog": "disabling the MaxUnavailableStatefulSet feature by default"},
]


def git(git_dir, *args):
    result = subprocess.run(["git", "--git-dir", git_dir] + list(args), capture_output=True,
                            check=True)
    return result.stdout.decode("utf-8")


def patch_key(version):
    return tuple(int(p) for p in version.split("."))


def read_gates(texts, where):
    """{gate key: (versioned, specs)} of the feature maps in texts (one package's files).

    Keys are --feature-gates strings; a re-listed staging gate (kube's genericfeatures.X)
    keeps its Go key."""
    consts = {}
    entries = []
    for text in texts:
        consts.update(gl.feature_consts(text))
        entries.extend(gl.feature_maps(text, where))
    gates = {}
    for key, versioned, specs in entries:
        name = key if "." in key else consts.get(key)
        if name is None:
            raise SystemExit(f"{where}: map key {key} is not a Feature const")
        gates[name] = {"versioned": versioned,
                       "specs": sorted(specs, key=lambda s: patch_key(s["version"] or "0.0"))}
    return gates


def staging_tags(sources, line):
    """The release tags v0.N.P of line in kubernetes/apiserver, by patch."""
    minor = line.split(".")[1]
    tags = git(gl.repo_dir(sources, "kubernetes/apiserver"), "tag", "-l", f"v0.{minor}.*")
    found = [t for t in tags.split() if re.fullmatch(rf"v0\.{minor}\.\d+", t)]
    return sorted(found, key=lambda t: int(t.split(".")[2]))


def staging_reading(sources, tag):
    gates = {}
    for repo, path, component in gl.STAGING_FEATURE_FILES:
        text = gl.git_show(gl.repo_dir(sources, repo), tag, path)
        if text is None:
            continue
        for name, gate in read_gates([text], f"{repo} {tag} {path}").items():
            gates[f"{component}:{name}"] = gate
    return gates


def kube_reading(git_dir, commit, feature_dirs, where):
    texts = []
    for directory in feature_dirs:
        for name in gl.KUBE_FEATURE_FILES:
            text = gl.git_show(git_dir, commit, f"{directory}/{name}")
            if text is not None:
                texts.append(text)
        if texts:
            return read_gates(texts, where)
    raise SystemExit(f"{where}: no pkg/features/kube_features.go under "
                     + " or ".join(feature_dirs))


def upstream_readings(sources, line):
    """[(patch, source text, gates)] of the vendored k8s.io/kubernetes modules of line."""
    snapshots = list(UPSTREAM_KUBE)
    for pinned in gl.LINES:
        snapshots.append((gl.KUBE_FEATURES_REPO, pinned["kube"], pinned["patch"]))
    out = []
    for repo, commit, version in snapshots:
        if not version.startswith(line + "."):
            continue
        git_dir = gl.repo_dir(sources, repo)
        modules = gl.git_show(git_dir, commit, "vendor/modules.txt") or ""
        vendored = rf"^# k8s\.io/kubernetes (?:=> k8s\.io/kubernetes )?v{re.escape(version)}\b"
        if not re.search(vendored, modules, re.MULTILINE):
            raise SystemExit(f"{repo} {commit}: vendor/modules.txt does not vendor "
                             f"k8s.io/kubernetes v{version}")
        where = f"{repo}@{commit[:12]} (k8s.io/kubernetes v{version})"
        out.append((version, where, kube_reading(git_dir, commit, [gl.KUBE_FEATURES_DIR],
                                                 where)))
    return sorted(out, key=lambda r: patch_key(r[0]))


def fork_readings(sources, line):
    """[(patch, source text, gates)]: the fork copy at the first commit of the line's
    microshift release branch that moved to each patch."""
    git_dir = gl.repo_dir(sources, FORK_REPO)
    branch = FORK_BRANCHES[line]
    first = {}
    for commit in git(git_dir, "log", "--format=%H", branch, "--",
                      "Makefile.kube_git.var").split():
        text = gl.git_show(git_dir, commit, "Makefile.kube_git.var") or ""
        match = re.search(r"^KUBE_GIT_VERSION=v(\d+\.\d+\.\d+)\s*$", text, re.MULTILINE)
        if match and match.group(1).startswith(line + "."):
            first[match.group(1)] = commit  # git log is newest first: the oldest wins
    out = []
    for version in sorted(first, key=patch_key):
        where = f"{FORK_REPO}@{first[version][:12]} ({branch}, openshift/kubernetes {version})"
        out.append((version, where, kube_reading(git_dir, first[version], FORK_FEATURE_DIRS,
                                                 where)))
    return out


def changelog_through(sources, line):
    """The newest release the line's CHANGELOG (fork copy at the branch head) describes."""
    git_dir = gl.repo_dir(sources, FORK_REPO)
    text = gl.git_show(git_dir, FORK_BRANCHES[line], FORK_CHANGELOG.format(line=line)) or ""
    found = re.findall(rf"^# v({re.escape(line)}\.\d+)\s*$", text, re.MULTILINE)
    return max(found, key=patch_key) if found else None


def differences(readings):
    """[(earlier patch, later patch, gate key, before, after)] between consecutive readings."""
    out = []
    for (p1, _, g1), (p2, _, g2) in zip(readings, readings[1:]):
        for key in sorted(set(g1) | set(g2)):
            if g1.get(key) != g2.get(key):
                out.append((p1, p2, key, g1.get(key), g2.get(key)))
    return out


def explain(line, diffs, kind, fork):
    """Stops on a difference no CHANGELOG entry (or, for the fork, carry) explains."""
    for p1, p2, key, _, _ in diffs:
        name = key.split(":", 1)[-1]
        if any(c["line"] == line and c["feature"] == name and
               patch_key(p1) < patch_key(c["since"]) <= patch_key(p2)
               for c in CHANGELOG_CHANGES):
            continue
        if fork and (line, p2, key) in FORK_CARRIES:
            continue
        raise SystemExit(f"{kind} {line}: {key} differs between {p1} and {p2} and no "
                         "CHANGELOG entry or fork carry in generate_patch_changes.py "
                         "explains it")


def phrase(gate, line):
    """What a gate's specs give at its line's own version, e.g. "Beta, default true"."""
    if gate is None:
        return "not registered"
    current = None
    for spec in gate["specs"]:
        if patch_key(spec["version"] or "0.0") <= patch_key(line):
            current = spec
    text = (f"{gl.PRE_RELEASE[current['preRelease']]}, default "
            f"{str(current['default']).lower()}")
    return text + (", locked" if current["lockToDefault"] else "")


def reading_before(readings, since):
    """The newest reading of a patch before since, or None."""
    before = [r for r in readings if patch_key(r[0]) < patch_key(since)]
    return before[-1] if before else None


def derive_change(change, upstream, fork):
    line, feature = change["line"], change["feature"]
    out = {"line": line, "feature": feature, "since": change["since"],
           "source": f"CHANGELOG-{line}.md v{change['since']}: \"{change['changelog']}\" "
                     f"(kubernetes/kubernetes#{change['pr']})"}
    if "specsBefore" in change:
        gate = {"specs": change["specsBefore"]}
        out["specsFrom"] = change["specsFrom"]
    else:
        # A fork reading at or after a carry of the gate (an early pick) is not the
        # earlier patches' form.
        carried = [patch_key(p) for (l, p, key) in FORK_CARRIES if l == line and key == feature]
        fork_clean = [r for r in fork if not any(patch_key(r[0]) >= c for c in carried)]
        reading = reading_before(upstream, change["since"]) or reading_before(
            fork_clean, change["since"])
        if reading is None:
            raise SystemExit(f"{line} {feature}: no reading before {change['since']}; give "
                             "specsBefore and specsFrom")
        gate = reading[2].get(feature)
        out["specsFrom"] = reading[1]
    out["before"] = phrase(gate, line)
    if gate is None:
        out["registeredBefore"] = False
    else:
        out["specsBefore"] = gate["specs"]
    return out


def derive(sources):
    pins = {entry["line"]: entry["patch"] for entry in gl.LINES}
    with open(gl.LINES_EXTRACT, encoding="utf-8") as f:
        extract = {e["line"]: e for e in json.load(f)["lines"]}
    lines, changes = [], []
    for line in LINE_NUMBERS:
        tags = staging_tags(sources, line)
        staging = [(t[1:].replace("0.", "1.", 1), t, staging_reading(sources, t)) for t in tags]
        explain(line, differences(staging), "staging tags", fork=False)
        upstream = upstream_readings(sources, line)
        explain(line, differences(upstream), "k8s.io/kubernetes", fork=False)
        fork = fork_readings(sources, line)
        explain(line, differences(fork), "fork copy", fork=True)
        through_changelog = changelog_through(sources, line)
        kube_through = max([r[0] for r in upstream + fork]
                           + ([through_changelog] if through_changelog else []), key=patch_key)
        staging_through = staging[-1][0]
        known = min(kube_through, staging_through, key=patch_key)
        record = {"line": line,
                  "stagingTags": f"{tags[0]}..{tags[-1]} ({len(tags)} tags)",
                  "kubeUpstream": [r[1] for r in upstream],
                  "kubeFork": f"{len(fork)} patches of {FORK_BRANCHES[line]}: "
                              + ", ".join(r[0] for r in fork),
                  "changelogThrough": through_changelog}
        pin = pins.get(line)
        if pin is not None:
            record["patch"] = pin
            record["patchesKnownThrough"] = known
        else:
            record["note"] = (f"no catalog of a {line} patch (generate_lines.LINES has no "
                              f"{line} entry): read through {known}, nothing recorded")
        lines.append(record)
        for change in CHANGELOG_CHANGES:
            if change["line"] != line:
                continue
            if pin is None or patch_key(change["since"]) > patch_key(pin):
                raise SystemExit(f"{line} {change['feature']} since {change['since']}: after "
                                 f"the line's catalog patch ({pin}); move the pin")
            derived = derive_change(change, upstream, fork)
            gate = next((g for g in extract[line]["gates"] if g["name"] == change["feature"]),
                        None)
            if gate is None:
                raise SystemExit(f"{line}: {change['feature']} is not a gate of the catalog")
            changes.append(derived)
    changes.sort(key=lambda c: (c["line"], c["feature"], patch_key(c["since"])))
    return {
        "schemaVersion": 2,
        "semantics": "Gates that patch releases inside a release line changed. A line's "
                     "catalog describes its pinned patch (`patch`); each change holds from "
                     "`since`, and `specsBefore` (or `registeredBefore: false`) is what the "
                     "line's patches before it registered. `patchesKnownThrough`: every patch "
                     "up to it was read (staging tags, kube pkg/features readings, CHANGELOG).",
        "generator": "catalog/generate_patch_changes.py --sources DIR (catalog/README.md, "
                     "\"Patch changes\")",
        "lines": lines,
        "changes": changes,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", metavar="DIR", required=True,
                        help="git directories as DIR/<owner>+<name>/repo")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if data/patch_changes.json differs from what is derived")
    args = parser.parse_args()
    text = json.dumps(derive(args.sources), indent=1, sort_keys=True) + "\n"
    if args.check:
        with open(OUTPUT, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{OUTPUT} is out of date: run python3 catalog/generate_patch_changes.py "
                      "--sources DIR", file=sys.stderr)
                return 1
        return 0
    with open(OUTPUT, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
