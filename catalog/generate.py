#!/usr/bin/env python3
"""Generates compatd's embedded catalogs, catalog/kubernetes-<line>.yaml, one per release line.

Every line is rendered by generate_lines.py from catalog/data/lines_extract.json (the facts
of each line's sources: the git extract of 1.31-1.35, the kubernetes/kubernetes trees of 1.36
and 1.37), with catalog/data/api_history_extract.json (kinds and lifecycles per kubernetes/api
tag), api_lifecycles.json (persisted and subresource kinds), lines_overlay.json (gate
corrections of a tree), patch_changes.json, and api_history.json (apiHistory). The inputs are
in catalog/data/ so that a clone of the repository is enough; catalog/data/PROVENANCE.md and
catalog/README.md say where each fact was read.

Usage:
  python3 catalog/generate.py                rewrite every catalog from catalog/data/
  python3 catalog/generate.py --sources DIR  first re-read the git-extracted lines' sources
                                             from DIR/<owner>+<name>/repo (git directories
                                             with tags) into data/lines_extract.json
  python3 catalog/generate.py --tree DIR --line 1.N [--patch 1.N.P] ...
                                             first read one line from a kubernetes/kubernetes
                                             tree (catalog/README.md)
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


def quote(text):
    """A double-quoted YAML scalar."""
    return json.dumps(text)


def group_scalar(group):
    """A group name as YAML: plain, except the core group's empty string."""
    return group if group else '""'


def load(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return json.load(f)


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


def outputs(extract=None):
    """{path: text} of every generated catalog (from `extract`, default the committed
    data/lines_extract.json)."""
    out = {}
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
