#!/usr/bin/env python3
"""Generates catalog/data/api_history.json: every group/version/kind k8s.io/api ever carried.

The history of Kubernetes' built-in API kinds, with the lifecycle kube-apiserver acts on
(introduced / deprecated / removed / replacement, from the `+k8s:prerelease-lifecycle-gen`
tags as the generated `zz_generated.prerelease-lifecycle.go` functions return them), for
manifest scanners. It is history, not what a binary serves: catalog/generate.py does not read
it, and no answer of the embedded catalog depends on it.

Two steps (catalog/README.md, "API history", says more):

  extract  read every release tag of kubernetes/api (and of apiextensions-apiserver,
           kube-aggregator and apiserver, for CustomResourceDefinition, APIService and the
           audit API) with git, and write the per-tag facts to
           catalog/data/api_history_extract.json (compact: consecutive tags with the same
           facts share one line).
  merge    combine the extract with catalog/data/deprecation_guide.json (hand-maintained,
           for kinds no lifecycle tag covers) and catalog/data/api_lifecycles.json (plural
           resource names) into catalog/data/api_history.json.

Usage:
  python3 catalog/generate_api_history.py --api DIR --apiextensions-apiserver DIR \\
      --kube-aggregator DIR --apiserver DIR
                     full rebuild: extract from the four repositories, then merge.
                     DIR is a clone or a bare git directory with the release tags.
  python3 catalog/generate_api_history.py
                     merge only: rewrite api_history.json from the committed extract.
  python3 catalog/generate_api_history.py --check
                     offline: check the committed extract's consistency, re-merge from the
                     committed inputs, exit 1 if api_history.json or the extract differs
                     from what that gives.

Python 3 standard library only; the output is deterministic (no dates; sorted).
"""

import argparse
import difflib
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
EXTRACT = os.path.join(DATA, "api_history_extract.json")
GUIDE = os.path.join(DATA, "deprecation_guide.json")
LIFECYCLES = os.path.join(DATA, "api_lifecycles.json")
OUTPUT = os.path.join(DATA, "api_history.json")

SCHEMA_VERSION = 1

# The repositories read, the command-line option naming each one's git directory, and
# where their API packages live (<group dir>/<version>/*.go).
REPOS = [
    {"repo": "kubernetes/api", "option": "api",
     "package": re.compile(r"^([a-z0-9]+)/(v\d+(?:(?:alpha|beta)\d+)?)/([^/]+\.go)$")},
    {"repo": "kubernetes/apiextensions-apiserver", "option": "apiextensions_apiserver",
     "package": re.compile(r"^pkg/apis/(apiextensions)/(v\d+(?:(?:alpha|beta)\d+)?)/([^/]+\.go)$")},
    {"repo": "kubernetes/kube-aggregator", "option": "kube_aggregator",
     "package": re.compile(r"^pkg/apis/(apiregistration)/(v\d+(?:(?:alpha|beta)\d+)?)/([^/]+\.go)$")},
    {"repo": "kubernetes/apiserver", "option": "apiserver",
     "package": re.compile(r"^pkg/apis/(audit)/(v\d+(?:(?:alpha|beta)\d+)?)/([^/]+\.go)$")},
]

# Release tags. Staging repositories are tagged v0.N.P for Kubernetes 1.N.P (from 1.15)
# and kubernetes-1.N.P (from 1.8, the oldest tags). Lifecycle tags exist from 1.19
# (v0.19.0): from there on every v0.N.P tag is read; before it, kubernetes-1.N.P tags are
# read only to know which kinds each release carried. Pre-releases (-alpha.N, -beta.N,
# -rc.N) are not releases and are not read.
LIFECYCLE_TAG = re.compile(r"^v0\.(\d+)\.(\d+)$")
OLD_TAG = re.compile(r"^kubernetes-1\.(\d+)\.(\d+)$")
FIRST_LIFECYCLE_MINOR = 19

# client-gen's --plural-exceptions as Kubernetes passes them (hack/update-codegen.sh:
# "Endpoints:Endpoints"), plus ResourceClaimParameters and ResourceClassParameters, kinds
# of resource.k8s.io/v1alpha2 (1.30 only) served as resourceclaimparameters and
# resourceclassparameters (catalog/data/PROVENANCE.md says where this was seen).
PLURAL_EXCEPTIONS = {
    "Endpoints": "Endpoints",
    "ResourceClaimParameters": "ResourceClaimParameters",
    "ResourceClassParameters": "ResourceClassParameters",
}

LIFECYCLE_FIELDS = ("introduced", "deprecated", "removed")
GA_VERSION = re.compile(r"^v\d+$")
KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


# --------------------------------------------------------------------------------------
# Rules shared by extract and merge (unit-tested in test_generate_api_history.py).

def plural(kind, exceptions=PLURAL_EXCEPTIONS):
    """The lowercase plural client-gen gives a kind (gengo namer.NewAllLowercasePluralNamer).

    gengo v2/namer/plural_namer.go: an exception wins; otherwise by the last letter:
    s/x/z -> +es; consonant+y -> ies; vowel+y -> +s; ch/sh -> +es; other h -> +s;
    fe -> ves; other e -> +s; f -> ves; anything else -> +s. Then lowercased.
    """
    if kind in exceptions:
        return exceptions[kind].lower()
    if len(kind) < 2:
        return kind.lower()
    last, before = kind[-1], kind[-2]
    consonants = "bcdfghjklmnpqrstvwxyz"
    if last in "sxz":
        result = kind + "es"
    elif last == "y":
        result = kind[:-1] + "ies" if before in consonants else kind + "s"
    elif last == "h":
        result = kind + "es" if before in "cs" else kind + "s"
    elif last == "e":
        result = kind[:-2] + "ves" if before == "f" else kind + "s"
    elif last == "f":
        result = kind[:-1] + "ves"
    else:
        result = kind + "s"
    return result.lower()


def lifecycle_defaults(version, tags):
    """What prerelease-lifecycle-gen generates for a type, from its tags.

    k8s.io/code-generator cmd/prerelease-lifecycle-gen/prerelease-lifecycle-generators/
    status.go (argsFromType): introduced is required; deprecated = the tag, else
    introduced + 3 minors; removed = the tag, else deprecated + 3 minors; for a GA
    package (version vN) deprecated and removed are generated only when tagged;
    replacement only when tagged. Returns {field: (value, "tag" | "default")}.
    """
    result = {}
    introduced = tags.get("introduced")
    if not introduced:
        return result
    result["introduced"] = (introduced, "tag")
    major, minor = (int(x) for x in introduced.split("."))
    ga = bool(GA_VERSION.match(version))
    if tags.get("deprecated"):
        deprecated = tags["deprecated"]
        result["deprecated"] = (deprecated, "tag")
    else:
        deprecated = f"{major}.{minor + 3}"
        if not ga:
            result["deprecated"] = (deprecated, "default")
    if tags.get("removed"):
        result["removed"] = (tags["removed"], "tag")
    elif not ga or tags.get("deprecated"):
        dmajor, dminor = (int(x) for x in deprecated.split("."))
        result["removed"] = (f"{dmajor}.{dminor + 3}", "default")
    if tags.get("replacement"):
        result["replacement"] = (tags["replacement"], "tag")
    return result


def minor_of_tag(tag):
    for pattern in (LIFECYCLE_TAG, OLD_TAG):
        match = pattern.match(tag)
        if match:
            return int(match.group(1)), int(match.group(2))
    raise ValueError(f"not a release tag: {tag}")


def release_of_tag(tag):
    """The Kubernetes minor release a tag belongs to, as "1.N"."""
    return f"1.{minor_of_tag(tag)[0]}"


def kube_priority_key(version):
    """apimachinery's kube-aware order, highest first: GA > beta > alpha, then numbers."""
    match = KUBE_VERSION.match(version)
    if not match:
        return (1, 0, 0, 0, version)
    stage = {"": 0, "beta": 1, "alpha": 2}[match.group(2) or ""]
    return (0, stage, -int(match.group(1)), -int(match.group(3) or 0), "")


def version_key(text):
    return tuple(int(part) for part in text.split("."))


# --------------------------------------------------------------------------------------
# Go source parsing (text only; the files are gofmt'ed generated or API code).

def comment_groups(lines):
    """{end line index: [comment text lines]} for each group of consecutive // lines."""
    groups = {}
    start = None
    for i, line in enumerate(lines + [""]):
        stripped = line.strip()
        if stripped.startswith("//"):
            if start is None:
                start = i
            continue
        if start is not None:
            texts = []
            for raw in lines[start:i]:
                text = raw.strip()[2:]
                texts.append(text[1:] if text.startswith(" ") else text)
            groups[i - 1] = (start, texts)
            start = None
    return groups


def extract_tag(name, comments):
    """Values of `+name` / `+name=value` among comment lines (gengo's
    ExtractCommentTagsWithoutArguments: a line "+name=value"; "+name" alone gives "")."""
    values = []
    for line in comments:
        line = line.strip()
        if not line.startswith("+" + name):
            continue
        rest = line[len(name) + 1:]
        if rest == "":
            values.append("")
        elif rest.startswith("="):
            values.append(rest[1:])
    return values


# `type X struct {` and named types such as core/v1's `type List metav1.List`.
TYPE_DECL = re.compile(r"^type\s+([A-Z]\w*)\s+(?:struct\s*\{|[A-Za-z_][\w.]*\s*(?://.*)?$)")


def parse_types(text):
    """{type name: {"genclient": bool, "resourceName": str|None, "lifecycle": {...}}} for
    every exported struct type, from its doc comment and the detached comment block before
    it (gengo CommentLines + SecondClosestCommentLines)."""
    lines = text.split("\n")
    groups = comment_groups(lines)
    types = {}
    for i, line in enumerate(lines):
        match = TYPE_DECL.match(line)
        if not match:
            continue
        comments = []
        closest = groups.get(i - 1)
        if closest:
            comments.extend(closest[1])
            second = groups.get(closest[0] - 2)
        else:
            second = groups.get(i - 2)
        if second:
            comments.extend(second[1])
        genclient = [v for v in extract_tag("genclient", comments)]
        lifecycle = {}
        for field in LIFECYCLE_FIELDS + ("replacement",):
            values = extract_tag("k8s:prerelease-lifecycle-gen:" + field, comments)
            if values:
                lifecycle[field] = values[0].split(",")[0] if field != "replacement" else values[0]
        if lifecycle.get("replacement"):
            group, version, kind = lifecycle["replacement"].split(",")
            lifecycle["replacement"] = {"group": group, "version": version, "kind": kind}
        resource_name = extract_tag("resourceName", comments)
        types[match.group(1)] = {
            "genclient": bool(genclient) and genclient[0] in ("", "true"),
            "noVerbs": bool(extract_tag("genclient:noVerbs", comments)),
            "resourceName": resource_name[0] if resource_name else None,
            "lifecycle": lifecycle,
        }
    return types


ZZ_VERSION = re.compile(
    r"func \(in \*(\w+)\) APILifecycle(Introduced|Deprecated|Removed)\(\) \(major, minor int\) "
    r"\{\s*return (\d+), (\d+)\s*\}")
ZZ_REPLACEMENT = re.compile(
    r"func \(in \*(\w+)\) APILifecycleReplacement\(\) schema\.GroupVersionKind \{\s*return "
    r"schema\.GroupVersionKind\{Group: \"([^\"]*)\", Version: \"([^\"]*)\", Kind: \"([^\"]*)\"\}")


def parse_zz(text):
    """{type name: {field: value}} from zz_generated.prerelease-lifecycle.go."""
    result = {}
    for name, field, major, minor in ZZ_VERSION.findall(text):
        result.setdefault(name, {})[field.lower()] = f"{int(major)}.{int(minor)}"
    for name, group, version, kind in ZZ_REPLACEMENT.findall(text):
        result.setdefault(name, {})["replacement"] = {"group": group, "version": version,
                                                      "kind": kind}
    return result


ADD_KNOWN_TYPES = re.compile(r"\bAddKnownTypes\(\s*SchemeGroupVersion\s*,")
GROUP_NAME = re.compile(r"\bGroupName\s*=\s*\"([^\"]*)\"")


def parse_register(text):
    """(group name or None, [registered local type names, in order])."""
    group = GROUP_NAME.search(text)
    kinds = []
    for match in ADD_KNOWN_TYPES.finditer(text):
        depth, j = 1, match.end()
        while j < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        for name in re.findall(r"&([A-Za-z_]\w*)\{\}", text[match.end():j]):
            if name not in kinds:
                kinds.append(name)
    return (group.group(1) if group else None), kinds


def top_level_kinds(registered):
    """Registered kinds less list kinds (XList where X is registered too). Core's `List`
    itself stays: it is the kind of `kind: List` manifests."""
    names = set(registered)
    return [k for k in registered if not (k.endswith("List") and k[:-4] in names)]


# --------------------------------------------------------------------------------------
# extract: git -> per-tag facts

class Git:
    def __init__(self, path):
        self.path = path
        self.batch = subprocess.Popen(["git", "-C", path, "cat-file", "--batch"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.blobs = {}

    def run(self, *args):
        return subprocess.run(["git", "-C", self.path] + list(args), check=True,
                              stdout=subprocess.PIPE).stdout.decode("utf-8")

    def blob(self, sha):
        if sha not in self.blobs:
            self.batch.stdin.write(sha.encode() + b"\n")
            self.batch.stdin.flush()
            header = self.batch.stdout.readline().split()
            size = int(header[2])
            data = self.batch.stdout.read(size + 1)[:-1]
            self.blobs[sha] = data.decode("utf-8", errors="replace")
        return self.blobs[sha]

    def close(self):
        self.batch.stdin.close()
        self.batch.wait()


def release_tags(git):
    tags = []
    for tag in git.run("tag", "-l").split():
        match = LIFECYCLE_TAG.match(tag)
        if match and int(match.group(1)) >= FIRST_LIFECYCLE_MINOR:
            tags.append(tag)
            continue
        match = OLD_TAG.match(tag)
        if match and int(match.group(1)) < FIRST_LIFECYCLE_MINOR:
            tags.append(tag)
    return sorted(tags, key=minor_of_tag)


GENERATED = re.compile(r"^(zz_generated\..*|generated\.pb|types_swagger_doc_generated|.*_test)\.go$")


def extract_tag_facts(git, spec, tag, cache):
    """{(group, version, kind): facts} for one tag of one repository."""
    packages = {}
    for line in git.run("ls-tree", "-r", tag).splitlines():
        meta, path = line.split("\t", 1)
        _, kind, sha = meta.split()
        match = spec["package"].match(path)
        if kind != "blob" or not match:
            continue
        packages.setdefault((match.group(1), match.group(2)), {})[match.group(3)] = sha
    facts = {}
    for (pkg, version), files in sorted(packages.items()):
        if "register.go" not in files:
            continue
        key = ("register", files["register.go"])
        if key not in cache:
            cache[key] = parse_register(git.blob(files["register.go"]))
        group, registered = cache[key]
        if group is None:
            raise SystemExit(f"{spec['repo']} {tag} {pkg}/{version}: no GroupName")
        types, methods = {}, {}
        for name in sorted(files):
            if GENERATED.match(name) or name == "register.go":
                continue
            key = ("types", files[name])
            if key not in cache:
                text = git.blob(files[name])
                # Hand-written APILifecycle* methods (core/v1 lifecycle.go): the generator
                # leaves out a function the type already has, and kube-apiserver calls the
                # method, whoever wrote it.
                cache[key] = (parse_types(text), parse_zz(text))
            types.update(cache[key][0])
            for type_name, fields in cache[key][1].items():
                methods.setdefault(type_name, {}).update(fields)
        zz = {}
        zz_file = files.get("zz_generated.prerelease-lifecycle.go")
        if zz_file:
            key = ("zz", zz_file)
            if key not in cache:
                cache[key] = parse_zz(git.blob(zz_file))
            zz = cache[key]
        for kind in top_level_kinds(registered):
            info = types.get(kind, {"genclient": False, "noVerbs": False, "resourceName": None,
                                    "lifecycle": {}})
            fact = {"dir": f"{pkg}/{version}"}
            if info["genclient"]:
                # "noVerbs": +genclient:noVerbs, a client with no REST verbs of its own
                # (policy Eviction, a pods subresource; imagepolicy ImageReview, a webhook
                # payload): not a resource.
                fact["genclient"] = "noVerbs" if info["noVerbs"] else True
            if info["resourceName"]:
                fact["resourceName"] = info["resourceName"]
            if info["lifecycle"]:
                fact["tags"] = info["lifecycle"]
            if zz_file:
                fact["zz"] = zz.get(kind, {})
            if methods.get(kind):
                fact["methods"] = methods[kind]
            facts[(group, version, kind)] = fact
    return facts


def extract(paths):
    """Reads the repositories; returns the extract document."""
    repos = []
    gvks = []
    for spec in REPOS:
        path = paths[spec["option"]]
        git = Git(path)
        try:
            tags = release_tags(git)
            if not tags:
                raise SystemExit(f"{path}: no release tags (fetch the tags too)")
            cache = {}
            per_tag = []
            for tag in tags:
                per_tag.append(extract_tag_facts(git, spec, tag, cache))
            newest = tags[-1]
            commit = git.run("rev-list", "-n", "1", newest).strip()
        finally:
            git.close()
        repos.append({"repo": spec["repo"], "tags": tags, "newestTag": newest,
                      "newestCommit": commit})
        keys = sorted({k for facts in per_tag for k in facts})
        for key in keys:
            runs = []
            for i, facts in enumerate(per_tag):
                fact = facts.get(key)
                if fact is None:
                    continue
                if runs and runs[-1]["_last"] == i - 1 and runs[-1]["fact"] == fact:
                    runs[-1]["_last"] = i
                    runs[-1]["to"] = tags[i]
                    continue
                runs.append({"from": tags[i], "to": tags[i], "_last": i, "fact": fact})
            gvks.append({"repo": spec["repo"], "group": key[0], "version": key[1],
                         "kind": key[2],
                         "runs": [dict(run["fact"], **{"from": run["from"], "to": run["to"]})
                                  for run in runs]})
        print(f"{spec['repo']}: {len(tags)} release tags {tags[0]} .. {newest}, "
              f"{len(keys)} kinds", file=sys.stderr)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "generatedBy": "catalog/generate_api_history.py (extract)",
        "notes": [
            "Facts read with git from every release tag: kubernetes-1.N.P for 1.8-1.18 "
            "(kinds only: no lifecycle tags existed), v0.N.P from v0.19.0. One line per run "
            "of consecutive tags with the same facts.",
            "dir: package directory; genclient: the type has +genclient (\"noVerbs\": with "
            "+genclient:noVerbs); resourceName: its "
            "+resourceName tag; tags: its +k8s:prerelease-lifecycle-gen tags as written; zz: "
            "what zz_generated.prerelease-lifecycle.go returns for it (absent: the package "
            "has no such file at those tags; {}: the file has no function for the type); "
            "methods: hand-written APILifecycle* methods (which the generator leaves out).",
        ],
        "repos": repos,
        "gvks": gvks,
    }


# --------------------------------------------------------------------------------------
# merge: extract + guide + api_lifecycles -> api_history

def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def gv_string(group, version):
    return f"{group}/{version}" if group else version


def check_extract(extract_doc):
    """Offline consistency checks of the extract. Returns a list of problems."""
    problems = []
    for repo in extract_doc["repos"]:
        tags = repo["tags"]
        if tags != sorted(tags, key=minor_of_tag) or len(set(tags)) != len(tags):
            problems.append(f"{repo['repo']}: tags not in release order")
    tag_index = {r["repo"]: {t: i for i, t in enumerate(r["tags"])} for r in extract_doc["repos"]}
    for gvk in extract_doc["gvks"]:
        name = f"{gvk['repo']} {gv_string(gvk['group'], gvk['version'])} {gvk['kind']}"
        index = tag_index[gvk["repo"]]
        previous = -1
        for run in gvk["runs"]:
            if run["from"] not in index or run["to"] not in index:
                problems.append(f"{name}: run names an unknown tag")
                continue
            if not previous < index[run["from"]] <= index[run["to"]]:
                problems.append(f"{name}: runs out of order")
            previous = index[run["to"]]
            if "zz" not in run:
                continue
            # What the generated functions return must be what the tags give by the
            # generator's rules; this is what makes "default" vs "tag" trustworthy.
            derived = lifecycle_defaults(gvk["version"], run.get("tags", {}))
            for field in LIFECYCLE_FIELDS + ("replacement",):
                got = run["zz"].get(field)
                want = derived.get(field, (None,))[0]
                if field in run.get("methods", {}):
                    want = None  # the generator skips a method the type already has
                if got != want:
                    problems.append(f"{name} {run['from']}..{run['to']}: zz {field}={got} "
                                    f"but the tags give {want}")
    return problems


def resource_mapping(lifecycles):
    mapping = {}
    for gv in lifecycles["groupVersions"]:
        for resource in gv["resources"]:
            mapping[(gv["group"], gv["version"], resource["kind"])] = resource
    return mapping


def resource_of(key, last, mapped, guide_entry):
    """{resource, resourceSource[, subresourceOf]} of a kind (docs/catalog.md).

    1. The type has +genclient (and not +genclient:noVerbs) at its last tag: client-gen's
       name, its +resourceName or plural(kind); api_lifecycles.json must agree.
    2. Otherwise, api_lifecycles.json names it as a subresource (Binding, Eviction,
       TokenRequest): that name and subresourceOf.
    3. Otherwise a kind known only from the migration guide: plural(kind).
    4. Otherwise null: not a resource (options, Scale, DeploymentRollback, review payloads,
       List, ...). api_lifecycles.json's own lowercase-plural guesses for kinds without
       +genclient (batch JobTemplate, extensions ThirdPartyResourceData, ...) are not used.
    """
    group, version, kind = key
    if last and last.get("genclient") is True:
        resource = last.get("resourceName") or plural(kind)
        if mapped and mapped["resource"] != resource:
            raise SystemExit(f"{gv_string(group, version)} {kind}: client-gen gives "
                             f"{resource}, api_lifecycles.json {mapped['resource']}")
        return {"resource": resource, "resourceSource": "client-gen"}
    if mapped and mapped.get("subresourceOf"):
        return {"resource": mapped["resource"], "resourceSource": "api_lifecycles.json",
                "subresourceOf": mapped["subresourceOf"]}
    if last is None and guide_entry is not None:
        return {"resource": plural(kind), "resourceSource": "plural-rule"}
    return {"resource": None, "resourceSource": None}


def lifecycle_of(version, run):
    """({field: value}, {field: source}, lifecycleFrom) of one extract run."""
    values, sources = {}, {}
    tags = run.get("tags", {})
    if run.get("zz") or run.get("methods"):
        derived = lifecycle_defaults(version, tags)
        for field in LIFECYCLE_FIELDS + ("replacement",):
            if field in run.get("methods", {}):
                values[field], sources[field] = run["methods"][field], "method"
            elif field in run.get("zz", {}):
                values[field], sources[field] = run["zz"][field], derived[field][1]
        return values, sources, "methods"
    if tags.get("introduced"):
        # Tags but no generated file (the package was not generated at that tag): apply
        # the generator's rules ourselves.
        for field, (value, source) in lifecycle_defaults(version, tags).items():
            values[field], sources[field] = value, source
        return values, sources, "tags+rules"
    return values, sources, None


def guide_note(guide, entry):
    note = f"{guide['source']['url']}{entry['section']}: {entry['says']}"
    return note + (f" ({entry['note']})" if entry.get("note") else "")


def merge(extract_doc, guide, lifecycles):
    """The api_history document."""
    repos = {r["repo"]: r for r in extract_doc["repos"]}
    mapping = resource_mapping(lifecycles)
    guide_entries = {}
    for entry in guide["entries"]:
        key = (entry["group"], entry["version"], entry["kind"])
        if key in guide_entries:
            raise SystemExit(f"{GUIDE}: {gv_string(*key[:2])} {key[2]} listed twice")
        guide_entries[key] = entry
    carried = {}
    for gvk in extract_doc["gvks"]:
        key = (gvk["group"], gvk["version"], gvk["kind"])
        if key in carried:
            raise SystemExit(f"{gv_string(*key[:2])} {key[2]} comes from two repositories")
        carried[key] = gvk
    entries = []
    for key in sorted(set(carried) | set(guide_entries)):
        group, version, kind = key
        gvk, guide_entry = carried.get(key), guide_entries.get(key)
        entry = {"group": group, "version": version, "kind": kind}
        values, sources, origin = {}, {}, None
        if gvk:
            repo = repos[gvk["repo"]]
            first, last = gvk["runs"][0], gvk["runs"][-1]
            last_release = release_of_tag(last["to"])
            entry.update({
                "repo": gvk["repo"], "firstTag": first["from"], "lastTag": last["to"],
                "typesDeletedIn": (None if last_release == release_of_tag(repo["newestTag"])
                                   else f"1.{version_key(last_release)[1] + 1}"),
            })
            # The last tag that carried the type decides (a type deleted later keeps the
            # values of the last tag that had it).
            values, sources, origin = lifecycle_of(version, last)
            # Values earlier tags gave and a later tag changed (for instance v0.19.0-v0.19.2
            # said removed=1.18 for the 1.16 removals): kept for the record, not used.
            superseded = []
            for run in gvk["runs"]:
                earlier = lifecycle_of(version, run)[0]
                if not earlier or earlier == values:
                    continue
                if superseded and superseded[-1]["values"] == earlier:
                    superseded[-1]["to"] = run["to"]
                else:
                    superseded.append({"from": run["from"], "to": run["to"], "values": earlier})
            if superseded:
                entry["superseded"] = [dict(s["values"], tags=f"{s['from']} .. {s['to']}")
                                       for s in superseded]
        else:
            entry.update({"repo": guide_entry["repo"], "firstTag": None, "lastTag": None,
                          "typesDeletedIn": None})
        if guide_entry:
            entry["guide"] = {"removed": guide_entry["removed"], "section": guide_entry["section"],
                              "replacement": guide_entry.get("replacement")}
            if not values:
                values["removed"], sources["removed"] = guide_entry["removed"], "guide"
                if guide_entry.get("replacement"):
                    values["replacement"] = guide_entry["replacement"]
                    sources["replacement"] = "guide"
                origin = "guide"
                entry["source"] = guide_note(guide, guide_entry)
        for field in LIFECYCLE_FIELDS + ("replacement",):
            entry[field] = values.get(field)
        entry["valueSources"] = sources
        entry["lifecycleFrom"] = origin
        entry.update(resource_of(key, gvk["runs"][-1] if gvk else None, mapping.get(key),
                                 guide_entry))
        entries.append(entry)
    entries.sort(key=lambda e: (e["group"], kube_priority_key(e["version"]), e["kind"]))
    disagreements = []
    for e in entries:
        g = e.get("guide")
        if not g or e["lifecycleFrom"] == "guide":
            continue
        name = f"{gv_string(e['group'], e['version'])} {e['kind']}"
        if e["removed"] != g["removed"]:
            disagreements.append(f"{name}: lifecycle removed {e['removed']}, guide {g['removed']}")
        ours = e["replacement"] and gv_string(e["replacement"]["group"], e["replacement"]["version"])
        theirs = g["replacement"] and gv_string(g["replacement"]["group"], g["replacement"]["version"])
        if ours != theirs:
            disagreements.append(f"{name}: lifecycle replacement {ours or 'none'}, guide "
                                 f"{theirs or 'none'}")
    deleted = [e for e in entries if e["typesDeletedIn"]]
    return {
        "schemaVersion": SCHEMA_VERSION,
        "generatedBy": "catalog/generate_api_history.py from api_history_extract.json, "
                       "deprecation_guide.json and api_lifecycles.json; do not edit",
        "semantics": SEMANTICS,
        "sources": [
            {"repo": r["repo"], "tags": f"{r['tags'][0]} .. {r['newestTag']}",
             "tagCount": len(r["tags"]), "newestCommit": r["newestCommit"]}
            for r in extract_doc["repos"]
        ] + [{"url": guide["source"]["url"], "file": "catalog/data/deprecation_guide.json"}],
        "counts": {
            "entries": len(entries),
            "typesDeletedIn<=1.36": sum(1 for e in deleted
                                        if version_key(e["typesDeletedIn"]) <= (1, 36)),
            "typesDeletedIn<=1.18": sum(1 for e in deleted
                                        if version_key(e["typesDeletedIn"]) <= (1, 18)),
            "guideOnly": sum(1 for e in entries if e["firstTag"] is None),
            "values": {source: sum(1 for e in entries for s in e["valueSources"].values()
                                   if s == source)
                       for source in ("tag", "default", "method", "guide")},
            "noLifecycle": sum(1 for e in entries if e["lifecycleFrom"] is None),
        },
        "guideDisagreements": disagreements,
        "entries": entries,
    }


SEMANTICS = {
    "entry": "one group/version/kind that k8s.io/api carried at a release tag (for "
             "apiextensions.k8s.io, apiregistration.k8s.io and audit.k8s.io: "
             "apiextensions-apiserver, kube-aggregator and apiserver), or that the deprecated API "
             "migration guide lists; list kinds (XList) are left out",
    "introduced/deprecated/removed/replacement": "\"1.N\" / {group, version, kind}: what the "
             "type's APILifecycleIntroduced/Deprecated/Removed/Replacement methods return at "
             "lastTag, the values kube-apiserver acts on; null where the type has no such method "
             "(GA kinds are deprecated or removed only when tagged)",
    "valueSources": "per non-null value: tag (an explicit +k8s:prerelease-lifecycle-gen tag), "
             "default (filled in by prerelease-lifecycle-gen: deprecated = introduced + 3 minors, "
             "removed = deprecated + 3 minors, non-GA versions only), method (a hand-written "
             "method, which the generator leaves alone), guide (the migration guide; only where "
             "no lifecycle value exists)",
    "lifecycleFrom": "methods (the generated or hand-written methods at lastTag), tags+rules "
             "(tags without generated methods: the generator's rules applied here), guide "
             "(source gives the guide's section), null (no source gives a lifecycle; "
             "typesDeletedIn is then the only evidence of an end, as an upper bound)",
    "firstTag/lastTag": "first and last release tag of repo whose tree has the Go type "
             "(kubernetes-1.N.P tags before 1.19, v0.N.P from 1.19; the oldest tags, "
             "kubernetes-1.8.0 and kubernetes-1.7.6, are lower bounds); null for guide-only entries",
    "typesDeletedIn": "first release whose tags no longer have the Go type (null: the newest "
             "tag has it); from that release on kube-apiserver can neither serve nor decode the "
             "kind at any emulation version",
    "resource": "plural resource name. resourceSource: client-gen (the type has +genclient "
             "without +genclient:noVerbs: client-gen's plural of the kind or its +resourceName, "
             "the REST path client-go uses), api_lifecycles.json (a subresource kind that file "
             "names, with its subresourceOf), plural-rule (a guide-only kind: client-gen's "
             "pluralisation); null: not a resource (options, Scale, review/webhook payloads, "
             "audit and config-file kinds, List)",
    "guide": "where the migration guide lists the kind: its removal release, section and the "
             "group/version it says to migrate to (as replacement, same kind); a migration hint "
             "where the lifecycle has no replacement",
    "superseded": "lifecycle values that earlier tags returned and a later tag changed, with "
             "the tags that returned them (for the record; the entry's own values win)",
}


def render(doc):
    """Deterministic JSON: sorted keys, one entry (or extract run) per line."""
    def dump(value):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    lines = ["{"]
    keys = sorted(doc)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        value = doc[key]
        if key in ("entries", "gvks", "repos") and isinstance(value, list):
            lines.append(f"  {json.dumps(key)}: [")
            for j, item in enumerate(value):
                item_comma = "," if j < len(value) - 1 else ""
                if key == "gvks":
                    head = {k: v for k, v in item.items() if k != "runs"}
                    lines.append("    {" + dump(head)[1:-1] + ',"runs":[')
                    for k, run in enumerate(item["runs"]):
                        run_comma = "," if k < len(item["runs"]) - 1 else ""
                        lines.append("      " + dump(run) + run_comma)
                    lines.append("    ]}" + item_comma)
                else:
                    lines.append("    " + dump(item) + item_comma)
            lines.append("  ]" + comma)
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, sort_keys=True, ensure_ascii=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def compare(path, text, command):
    try:
        with open(path, encoding="utf-8") as f:
            current = f.read()
    except OSError as error:
        print(f"{path}: {error}", file=sys.stderr)
        return False
    if current == text:
        return True
    diff = difflib.unified_diff(current.splitlines(), text.splitlines(), path, "generated",
                                lineterm="", n=1)
    print("\n".join(list(diff)[:40]), file=sys.stderr)
    print(f"{path} is out of date: run {command}", file=sys.stderr)
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for spec in REPOS:
        parser.add_argument("--" + spec["option"].replace("_", "-"), dest=spec["option"],
                            metavar="DIR", help=f"clone or git directory of {spec['repo']}")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the committed output differs (offline)")
    args = parser.parse_args()
    paths = {spec["option"]: getattr(args, spec["option"]) for spec in REPOS}
    given = [p for p in paths.values() if p]
    if given and len(given) != len(paths):
        parser.error("give all four repositories, or none")
    if given and args.check:
        parser.error("--check works offline, from the committed extract")
    if given:
        extract_text = render(extract(paths))
        with open(EXTRACT, "w", encoding="utf-8") as f:
            f.write(extract_text)
    extract_doc = load_json(EXTRACT)
    problems = check_extract(extract_doc)
    for problem in problems:
        print(f"{EXTRACT}: {problem}", file=sys.stderr)
    if problems:
        return 1
    if given:
        # The extract must read back to what was written (stable rendering).
        if render(extract_doc) != extract_text:
            print("the extract does not round-trip", file=sys.stderr)
            return 1
    text = render(merge(extract_doc, load_json(GUIDE), load_json(LIFECYCLES)))
    if args.check:
        ok = compare(EXTRACT, render(extract_doc), "python3 catalog/generate_api_history.py")
        ok = compare(OUTPUT, text, "python3 catalog/generate_api_history.py") and ok
        return 0 if ok else 1
    with open(OUTPUT, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
