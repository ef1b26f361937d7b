#!/usr/bin/env python3
"""Generates catalog/kubernetes-1.36.yaml, compatd's embedded default catalog.

Inputs (copied into catalog/data/ so that a clone of the repository is enough;
see catalog/data/PROVENANCE.md for where each fact was read):
  catalog/data/feature_gates.json    versioned feature gates of Kubernetes 1.36
  catalog/data/api_lifecycles.json   API group-versions, kinds and lifecycles
  catalog/data/storage_versions.json kube-apiserver 1.36 storage overrides
  catalog/data/api_history.json      every built-in group/version/kind ever
                                     (generate_api_history.py), as apiHistory

It also writes the catalog of every other release line (generate_lines.py, from
catalog/data/lines_extract.json) and k8s/catalog/catalog.yaml, the catalog the
Kubernetes manifests serve (the 1.36 catalog under a header of its own).

Usage:
  python3 catalog/generate.py                rewrite every catalog from catalog/data/
  python3 catalog/generate.py --sources DIR  first re-read every line's sources from
                                             DIR/<owner>+<name>/repo (git directories
                                             with tags) into data/lines_extract.json
  python3 catalog/generate.py --check        exit 1 if a committed file differs
  python3 catalog/generate.py --cross-check  compare the lines with data/crosscheck/

Python 3 standard library only; the output is deterministic (no dates, sorted
input-independent order). The choices made here are explained in
catalog/README.md.
"""

import argparse
import difflib
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import crosscheck_lines  # noqa: E402
import generate_lines  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
DEFAULT_OUTPUT = os.path.join(HERE, "kubernetes-1.36.yaml")
K8S_CATALOG = os.path.join(os.path.dirname(HERE), "k8s", "catalog", "catalog.yaml")
K8S_HEADER = """\
# The catalog the Kubernetes manifests serve (ConfigMap compatd-catalog, mounted
# as a directory at /etc/compatd/catalog/). It starts as a copy of the embedded
# catalog/kubernetes-1.36.yaml; edit it for your cluster (a cluster: section with
# its emulation / min-compatibility versions, feature gates, runtime config).
# docs/deployment.md, "Kubernetes", says how a change reaches every replica.
# tests/deploy/kustomize_test.cc checks that it passes compatd --check-catalog;
# python3 catalog/generate.py --check that it is still the generated copy (after
# an edit for your cluster, drop the file from the check or keep it in sync).
#
"""
BINARY_VERSION = "1.36"

# preRelease spellings of Kubernetes'
# test/compatibility_lifecycle/reference/versioned_feature_list.yaml.
PRE_RELEASE = {
    "ALPHA": "Alpha",
    "BETA": "Beta",
    "GA": "GA",
    "DEPRECATED": "Deprecated",
}

# The data names the Go module that defines a gate; the catalog names the
# component that registers it (README.md, "Components").
COMPONENTS = {
    "kube": "kube",
    "apiserver": "kube-apiserver",
    "apiextensions-apiserver": "kube-apiserver",
    "controller-manager": "kube-controller-manager",
    "client-go": "client-go",
    "component-base/logs": "component-base",
    "component-base/metrics": "component-base",
    "component-base/zpages": "component-base",
}

# Kinds the data lists in a group-version that are not resources of it: they
# are subresources of core resources (pods/eviction, serviceaccounts/token),
# so kube-apiserver neither lists them in that group-version's discovery nor
# stores them. Binding is different: core/v1 also serves a top-level,
# create-only `bindings` resource, which is kept (persisted: false).
SUBRESOURCE_ONLY_KINDS = {"Eviction", "TokenRequest"}

KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_key(text):
    """Sort key of a "major.minor" string."""
    return tuple(int(part) for part in text.split("."))


def kube_priority_key(version):
    """Sort key giving apimachinery's CompareKubeAwareVersionStrings order.

    Sorted ascending, the highest priority comes first: GA > beta > alpha,
    then the major number, then the minor one; every kube version outranks a
    non-kube string, and non-kube strings come alphabetically.
    """
    match = KUBE_VERSION.match(version)
    if not match:
        return (1, 0, 0, 0, version)
    major = int(match.group(1))
    stage = {"": 0, "beta": 1, "alpha": 2}[match.group(2) or ""]
    minor = int(match.group(3) or 0)
    return (0, stage, -major, -minor, "")


def default_enabled(version):
    """kube-apiserver's default: GA versions on, beta and alpha off."""
    match = KUBE_VERSION.match(version)
    return bool(match) and not match.group(2)


def quote(text):
    """A double-quoted YAML scalar."""
    return json.dumps(text)


def group_scalar(group):
    """A group name as YAML: plain, except the core group's empty string."""
    return group if group else '""'


def load(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return json.load(f)


def gate_name(feature, names):
    """The --feature-gates string of a 1.36 gate: its const's value (names1_36 of
    data/lines_extract.json), whatever name the input gives."""
    consts = names["consts"].get(feature["component"], {})
    ident = feature.get("goIdentifier") or feature["name"]
    if ident not in consts:
        raise SystemExit(f"{feature['name']}: no const {ident} in {feature['component']}'s "
                         "1.36 feature file")
    return consts[ident]


def feature_lines(gates, names):
    lines = ["features:"]
    features = sorted(gates["features"], key=lambda f: gate_name(f, names))
    for feature in features:
        component = COMPONENTS[feature["component"]]
        lines.append(f"  - name: {gate_name(feature, names)}")
        lines.append(f"    component: {component}")
        lines.append("    versionedSpecs:")
        specs = sorted(feature["specs"], key=lambda s: version_key(s["version"]))
        for spec in specs:
            if version_key(spec["version"]) > version_key(BINARY_VERSION):
                continue
            fields = [
                f"version: {quote(spec['version'])}",
                f"default: {str(spec['default']).lower()}",
                f"lockToDefault: {str(spec['lockToDefault']).lower()}",
                f"preRelease: {PRE_RELEASE[spec['preRelease']]}",
            ]
            if spec.get("minCompatibilityVersion"):
                fields.append(
                    f"minCompatibilityVersion: {quote(spec['minCompatibilityVersion'])}"
                )
            lines.append("      - {" + ", ".join(fields) + "}")
    return lines, len(features)


def types_deleted(resource):
    deleted = resource.get("typesDeletedFromK8sApiIn")
    return deleted is not None and version_key(deleted) <= version_key(BINARY_VERSION)


def replacement_of(resource):
    replacement = resource.get("replacement")
    if not replacement:
        return ""
    group, version = replacement["group"], replacement["version"]
    return f"{group}/{version}" if group else version


def lifecycle_methods(api_extract, tag):
    """{(group, version, kind): values} of the hand-written APILifecycle* methods at tag
    (core/v1 lifecycle.go: ComponentStatus, Endpoints), which prerelease-lifecycle-gen
    leaves out of its generated file and api_lifecycles.json therefore misses."""
    index = generate_lines.tag_index(api_extract)
    out = {}
    for gvk in api_extract["gvks"]:
        if gvk["repo"] != "kubernetes/api":
            continue
        run = generate_lines.run_at(gvk, tag, index)
        if run and run.get("methods"):
            out[(gvk["group"], gvk["version"], gvk["kind"])] = run["methods"]
    return out


def with_methods(resource, group, version, methods):
    found = methods.get((group, version, resource["kind"]))
    if not found:
        return resource
    resource = dict(resource)
    for key in ("introduced", "deprecated", "removed", "replacement"):
        if key in found:
            resource[key] = found[key]
    return resource


def api_lines(lifecycles, methods):
    """The apis section, plus the (group, resource) -> versions it lists."""
    lines = ["apis:"]
    by_group = {}
    for gv in lifecycles["groupVersions"]:
        by_group.setdefault(gv["group"], []).append(gv)
    served = {}
    skipped = []
    dropped = []
    count = 0
    # The core group first, then groups by name; within a group, versions in
    # kube-aware priority order (highest first).
    for group in sorted(by_group, key=lambda g: (g != "", g)):
        for gv in sorted(by_group[group], key=lambda v: kube_priority_key(v["version"])):
            resources = []
            for resource in gv["resources"]:
                if types_deleted(resource):
                    skipped.append((gv, resource, "types deleted from k8s.io/api in "
                                    + resource["typesDeletedFromK8sApiIn"]))
                    continue
                if resource["kind"] in SUBRESOURCE_ONLY_KINDS:
                    skipped.append((gv, resource, "subresource " + resource["subresourceOf"]))
                    continue
                resources.append(resource)
            if not resources:
                # No kind of it is left in the 1.36 binary: kube-apiserver 1.36
                # does not register the group-version at all.
                dropped.append(gv)
                continue
            count += 1
            lines.append(f"  - group: {group_scalar(group)}")
            lines.append(f"    version: {gv['version']}")
            if gv["enabledByDefault"] != default_enabled(gv["version"]):
                lines.append(f"    enabledByDefault: {str(gv['enabledByDefault']).lower()}")
            lines.append("    resources:")
            for resource in resources:
                resource = with_methods(resource, group, gv["version"], methods)
                fields = [f"resource: {resource['resource']}", f"kind: {resource['kind']}"]
                for key in ("introduced", "deprecated", "removed"):
                    if resource.get(key):
                        fields.append(f"{key}: {quote(resource[key])}")
                replacement = replacement_of(resource)
                if replacement:
                    fields.append(f"replacement: {replacement}")
                    kind = (resource.get("replacement") or {}).get("kind")
                    if kind and kind != resource["kind"]:
                        fields.append(f"replacementKind: {kind}")
                if resource.get("persisted") is False:
                    fields.append("persisted: false")
                lines.append("      - {" + ", ".join(fields) + "}")
                served.setdefault((group, resource["resource"]), []).append(gv["version"])
    return lines, served, count, skipped, dropped


def storage_override_lines(storage, served):
    lines = ["storageOverrides:"]
    for override in storage["overrides1_36"]:
        key = (override["group"], override["resource"])
        entry = (f"{{group: {group_scalar(override['group'])}, resource: {override['resource']}, "
                 f"version: {override['version']}}}")
        if key not in served:
            # kube-apiserver 1.36 names resource "storagemigrations", which no
            # group-version serves (the resource is storageversionmigrations),
            # so the override has no effect there; it has none here either.
            lines.append(f"  # left out (matches no resource, so kube-apiserver ignores it): {entry}")
            continue
        if override["version"] not in served[key]:
            raise SystemExit(f"storage override {entry}: version not listed in apis")
        lines.append(f"  - {entry}")
    return lines


def gv_name(gv):
    return f"{gv['group']}/{gv['version']}" if gv["group"] else gv["version"]


def header(gates, lifecycles, storage, feature_count, gv_count, skipped, dropped):
    gate_source = gates["source"][0]
    api_source = lifecycles["sources"][0]
    override_source = storage["overridesSource"]
    lines = [
        "# compatd's embedded default catalog: Kubernetes 1.36.",
        "#",
        "# GENERATED by catalog/generate.py; do not edit. Regenerate with",
        "#   python3 catalog/generate.py",
        "# Inputs (catalog/data/, provenance in catalog/data/PROVENANCE.md):",
        f"#   feature_gates.json     {feature_count} gates; "
        f"{gate_source['repo']} {gate_source['path']} @ {gate_source['commit'][:12]},",
        "#                          staging feature files at v0.36.3",
        f"#   api_lifecycles.json    {len(lifecycles['groupVersions'])} group-versions; "
        f"{api_source['repo']} {api_source['tag']} register.go and",
        "#                          zz_generated.prerelease-lifecycle.go",
        f"#   storage_versions.json  overrides1_36; {override_source['repo']} "
        f"{override_source['path']} @ {override_source['commit'][:12]}",
        "#",
        "# No cluster section (emulation = binary) and no skewPolicy (the KEP-4330 table).",
        f"# {feature_count} features and {gv_count} group-versions. Left out of the API data",
        "# (catalog/README.md explains why):",
        f"# - {len(skipped)} kinds:",
    ]
    for gv, resource, why in skipped:
        lines.append(f"#     {gv_name(gv)} {resource['kind']}: {why}")
    lines.append(f"# - {len(dropped)} group-versions left without a kind, which kube-apiserver 1.36 does")
    lines.append("#   not register:")
    names = [gv_name(gv) for gv in dropped]
    for i in range(0, len(names), 4):
        lines.append("#     " + ", ".join(names[i:i + 4]))
    return lines


# Beta versions kube-apiserver kept on by default from 1.24, when new beta APIs
# stopped being enabled by default (KEP-3136): the betas served before 1.24
# (pkg/controlplane/instance.go legacyBetaEnabledByDefaultResources at
# kubernetes v1.24.0: autoscaling v2beta1/v2beta2, batch/v1beta1, discovery,
# events, flowcontrol v1beta1/v1beta2, node, policy, storage v1beta1
# csistoragecapacities), and flowcontrol.apiserver.k8s.io/v1beta3, a new
# version of an API already on, which v1.26.0 added to that list. Other betas
# introduced from 1.24 on are off by default.
KEP_3136_RELEASE = "1.24"
LEGACY_BETA_ADDED_LATER = {("flowcontrol.apiserver.k8s.io", "v1beta3")}


def beta_on_by_default(entry):
    """True for a beta entry served past 1.24 and still on by default there."""
    match = KUBE_VERSION.match(entry["version"])
    if not match or match.group(2) != "beta" or not entry["resource"] \
            or entry.get("subresourceOf"):
        return False
    ends = [v for v in (entry["removed"], entry["typesDeletedIn"]) if v]
    if ends and min(version_key(v) for v in ends) <= version_key(KEP_3136_RELEASE):
        return False  # gone by 1.24: the pre-1.24 default (beta on) covers it
    if (entry["group"], entry["version"]) in LEGACY_BETA_ADDED_LATER:
        return True
    introduced = entry["introduced"]
    return introduced is not None and version_key(introduced) < version_key(KEP_3136_RELEASE)


def history_lines(history):
    """The apiHistory section: one line per group/version/kind."""
    lines = ["apiHistory:"]
    entries = sorted(history["entries"],
                     key=lambda e: (e["group"] != "", e["group"],
                                    kube_priority_key(e["version"]), e["kind"]))
    for entry in entries:
        fields = [f"group: {group_scalar(entry['group'])}", f"version: {entry['version']}",
                  f"kind: {entry['kind']}"]
        if entry["resource"]:
            fields.append(f"resource: {entry['resource']}")
        for key in ("introduced", "deprecated", "removed"):
            if entry[key]:
                fields.append(f"{key}: {quote(entry[key])}")
        replacement = entry["replacement"]
        if replacement:
            fields.append("replacement: " + (f"{replacement['group']}/{replacement['version']}"
                                             if replacement["group"] else replacement["version"]))
            if replacement["kind"] != entry["kind"]:
                fields.append(f"replacementKind: {replacement['kind']}")
        if entry["typesDeletedIn"]:
            fields.append(f"typesDeleted: {quote(entry['typesDeletedIn'])}")
        if beta_on_by_default(entry):
            fields.append("enabledByDefault: true")
        lines.append("  - {" + ", ".join(fields) + "}")
    return lines, len(entries)


def generate():
    gates = load("feature_gates.json")
    lifecycles = load("api_lifecycles.json")
    storage = load("storage_versions.json")
    history = load("api_history.json")
    if gates["binaryVersion"] != BINARY_VERSION or lifecycles["binaryVersion"] != BINARY_VERSION:
        raise SystemExit("catalog/data is not for Kubernetes " + BINARY_VERSION)
    extract = load("lines_extract.json")
    api_extract = load("api_history_extract.json")
    methods = lifecycle_methods(api_extract, extract["names1_36"]["staging"])
    features, feature_count = feature_lines(gates, extract["names1_36"])
    apis, served, gv_count, skipped, dropped = api_lines(lifecycles, methods)
    overrides = storage_override_lines(storage, served)
    lines = header(gates, lifecycles, storage, feature_count, gv_count, skipped, dropped)
    lines.append(f"binaryVersion: {quote(BINARY_VERSION)}")
    lines.extend(features)
    lines.extend(apis)
    lines.extend(overrides)
    history_section, history_count = history_lines(history)
    lines.append(f"# The history of every built-in group/version/kind ({history_count}), for manifest")
    lines.append("# scans only (compatd scan): never served or stored; from data/api_history.json.")
    lines.extend(history_section)
    return "\n".join(lines) + "\n"


def outputs(extract=None):
    """{path: text} of every generated catalog (from `extract`, default the committed
    data/lines_extract.json)."""
    catalog_1_36 = generate()
    out = {DEFAULT_OUTPUT: catalog_1_36, K8S_CATALOG: K8S_HEADER + catalog_1_36}
    if extract is None:
        extract = load("lines_extract.json")
    api_extract = load("api_history_extract.json")
    lifecycles = load("api_lifecycles.json")
    changes = load("patch_changes.json")
    history_section, history_count = history_lines(load("api_history.json"))
    history_section = [
        f"# The history of every built-in group/version/kind ({history_count}), for manifest",
        "# scans only (compatd scan): never served or stored; from data/api_history.json.",
    ] + history_section
    for entry in extract["lines"]:
        path = os.path.join(HERE, f"kubernetes-{entry['line']}.yaml")
        out[path] = generate_lines.render_line(entry, api_extract, lifecycles,
                                               history_section, changes)
    return out


def render_one(entry):
    """The catalog text of one extract entry alone (generate.py --tree ... --output FILE)."""
    history_section, history_count = history_lines(load("api_history.json"))
    history_section = [
        f"# The history of every built-in group/version/kind ({history_count}), for manifest",
        "# scans only (compatd scan): never served or stored; from data/api_history.json.",
    ] + history_section
    return generate_lines.render_line(entry, load("api_history_extract.json"),
                                      load("api_lifecycles.json"), history_section,
                                      load("patch_changes.json"))


def check(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            current = f.read()
    except OSError as error:
        print(f"{path}: {error}", file=sys.stderr)
        return False
    if current == text:
        return True
    diff = difflib.unified_diff(current.splitlines(), text.splitlines(),
                                path, "generated", lineterm="", n=1)
    print("\n".join(list(diff)[:40]), file=sys.stderr)
    print(f"{path} is out of date: run python3 catalog/generate.py", file=sys.stderr)
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if a generated file differs from what would be generated")
    parser.add_argument("--sources", metavar="DIR",
                        help="re-read every release line's sources from DIR/<owner>+<name>/repo "
                             "into data/lines_extract.json first")
    parser.add_argument("--cross-check", action="store_true",
                        help="compare every line's gates with data/crosscheck/ and list the "
                             "differences; exit 1 if one is not a known, explained difference")
    tree = parser.add_argument_group(
        "a release line from a kubernetes/kubernetes tree (catalog/README.md, \"Adding a "
        "release\")")
    tree.add_argument("--tree", metavar="DIR",
                      help="a kubernetes/kubernetes checkout at a release tag: extract --line "
                           "from it into data/lines_extract.json and write "
                           "kubernetes-<line>.yaml")
    tree.add_argument("--line", help="with --tree: the release line, e.g. 1.37")
    tree.add_argument("--patch", help="with --tree: the release the tree is (1.37.2), or the "
                                      "line alone when no patch describes it; default --line")
    tree.add_argument("--exactness", choices=("EXACT", "PROVISIONAL"), default="EXACT",
                      help="with --tree: EXACT for a release tag's tree (default), PROVISIONAL "
                           "for pre-release sources")
    tree.add_argument("--reason", default="",
                      help="with --exactness PROVISIONAL: which sources, of which date")
    tree.add_argument("--output", metavar="FILE",
                      help="with --tree: write only that line's catalog, to FILE, and change "
                           "nothing in the repository (a catalog to serve with --catalog)")
    tree.add_argument("--note", default="",
                      help="with --tree: where the tree came from (written to the extract and "
                           "the catalog's header)")
    args = parser.parse_args()
    extract = None
    if args.tree:
        if not args.line:
            parser.error("--tree needs --line (e.g. --line 1.37)")
        entry = generate_lines.extract_tree(
            args.tree, args.line, args.patch or args.line,
            {"level": args.exactness, "reason": args.reason}, args.note)
        if args.output:
            write_all({args.output: render_one(entry)})
            return 0
        extract = with_tree_line(load("lines_extract.json"), entry)
    elif args.sources:
        extract = generate_lines.extract(args.sources)
        # Lines made from a tree (--tree) have no sources here: keep them.
        extract["lines"] += [e for e in load("lines_extract.json")["lines"]
                             if e.get("apiKinds") is not None]
    if args.cross_check:
        return crosscheck_lines.main(load("lines_extract.json"))
    files = outputs(extract)
    if args.check:
        ok = all([check(path, text) for path, text in sorted(files.items())])
        return 0 if ok else 1
    if extract is not None:
        files[generate_lines.LINES_EXTRACT] = json.dumps(extract, indent=1,
                                                         sort_keys=True) + "\n"
    write_all(files)
    return 0


def with_tree_line(extract, entry):
    """The extract with `entry` replacing the line's entry (or added), lines in order."""
    lines = [e for e in extract["lines"] if e["line"] != entry["line"]] + [entry]
    lines.sort(key=lambda e: version_key(e["line"]))
    return dict(extract, lines=lines)


def write_all(files):
    """Writes every file or none: each to a temporary file first, renamed at the end."""
    temps = []
    try:
        for path, text in sorted(files.items()):
            temp = f"{path}.tmp{os.getpid()}"
            with open(temp, "w", encoding="utf-8") as f:
                f.write(text)
            temps.append((temp, path))
    except OSError as error:
        for temp, _ in temps:
            os.unlink(temp)
        raise SystemExit(f"{error}: nothing written")
    for temp, path in temps:
        os.replace(temp, path)


if __name__ == "__main__":
    sys.exit(main())
