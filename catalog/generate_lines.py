#!/usr/bin/env python3
"""Generates one catalog per kube-apiserver release line (catalog/kubernetes-1.N.yaml).

Two steps, like generate_api_history.py:

* extract (needs checkouts): reads every line's sources with `git show` and writes
  catalog/data/lines_extract.json, the facts the catalogs need and nothing else:
    - feature gates: kube's pkg/features (the k8s.io/kubernetes module vendored by
      openshift-kni/scheduler-plugins at the commit of each patch release) and the staging
      repositories' feature files at the line's v0.N.P tag, under their const strings;
    - version priorities (pkg/apis/*/install), the default-enabled API lists
      (pkg/controlplane/instance.go) and the storage overrides
      (pkg/kubeapiserver/default_storage_factory_builder.go), from the OpenShift fork copy
      inside openshift/microshift (deps/github.com/openshift/kubernetes/) at its release
      branch head (the only copy of those kubernetes/kubernetes files at a line's patch
      release found; see LINES and catalog/README.md for what the fork changes and how it
      is undone).
* render (offline): writes the catalogs from the extract, data/api_history_extract.json
  (API kinds and lifecycles per kubernetes/api tag), data/api_history.json (apiHistory),
  data/api_lifecycles.json (persisted and subresource facts) and data/patch_changes.json.

Usage (catalog/README.md, "Release lines"):
  python3 catalog/generate.py --sources DIR   extract from DIR/<owner>+<name>/repo, render all
  python3 catalog/generate.py                 render every catalog from the committed extract
  python3 catalog/generate.py --check         exit 1 (with a diff) if a committed file is stale

Python 3 standard library only; output deterministic.
"""

import json
import os
import re
import subprocess

import generate_api_history as history_gen

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
LINES_EXTRACT = os.path.join(DATA, "lines_extract.json")
PATCH_CHANGES = os.path.join(DATA, "patch_changes.json")

KUBE_FEATURES_REPO = "openshift-kni/scheduler-plugins"
KUBE_FEATURES_DIR = "vendor/k8s.io/kubernetes/pkg/features"
FORK_REPO = "openshift/microshift"
FORK_DIR = "deps/github.com/openshift/kubernetes"

# One entry per release line generated from sources. Adding a release is one entry here
# (catalog/README.md, "Adding a release").
#   line     the binary's major.minor
#   patch    the patch release the catalog describes (every source below is that patch's)
#   staging  the staging repositories' tag of that patch
#   kube     commit of KUBE_FEATURES_REPO whose vendor/ holds k8s.io/kubernetes at `patch`
#   fork     commit of FORK_REPO (a release branch head) and the kubernetes version its
#            fork copy is at; used for priorities, default-enabled lists, storage overrides
LINES = [
    {"line": "1.31", "patch": "1.31.8", "staging": "v0.31.8",
     "kube": "d6b15cd1f7b37c543ac6445cae06cf3da7d56b18",
     "fork": "8eb6c2962b3a2c6a8545e6726b3213a0dcff81a0", "forkBranch": "release-4.18",
     "forkKubernetes": "1.31.14"},
    {"line": "1.32", "patch": "1.32.5", "staging": "v0.32.5",
     "kube": "0aead65517160bb59371a05bf245486ccb8d3676",
     "fork": "d4b43f374a5bc0e0f44c07ff773061e27c7f2a08", "forkBranch": "release-4.19",
     "forkKubernetes": "1.32.13"},
    {"line": "1.33", "patch": "1.33.3", "staging": "v0.33.3",
     "kube": "0c967825a300296bf3dbd58c6623477aaa02838f",
     "fork": "78a395343031f8800b7139df070665e03b42f934", "forkBranch": "release-4.20",
     "forkKubernetes": "1.33.13"},
    {"line": "1.34", "patch": "1.34.7", "staging": "v0.34.7",
     "kube": "3d6d3a01b62a1d496c9fd85165adcbdb72164aa7",
     "fork": "473c3de15d9aeeb399aa95250672c07655554015", "forkBranch": "release-4.21",
     "forkKubernetes": "1.34.9"},
    {"line": "1.35", "patch": "1.35.4", "staging": "v0.35.4",
     "kube": "4495d2058964d9ad1ce6e7f9cf553a2d623a3613",
     "fork": "5019821e0eb2f9a74e00e2aab215144336c4b981", "forkBranch": "release-4.22",
     "forkKubernetes": "1.35.6"},
]

# Feature files of the staging repositories: (repository, path, data component). A file a
# tag does not have is skipped (zpages exists from 1.32).
STAGING_FEATURE_FILES = [
    ("kubernetes/apiserver", "pkg/features/kube_features.go", "apiserver"),
    ("kubernetes/apiextensions-apiserver", "pkg/features/kube_features.go",
     "apiextensions-apiserver"),
    ("kubernetes/controller-manager", "pkg/features/kube_features.go", "controller-manager"),
    ("kubernetes/client-go", "features/known_features.go", "client-go"),
    ("kubernetes/component-base", "logs/api/v1/kube_features.go", "component-base/logs"),
    ("kubernetes/component-base", "metrics/features/kube_features.go",
     "component-base/metrics"),
    ("kubernetes/component-base", "zpages/features/kube_features.go",
     "component-base/zpages"),
]
KUBE_FEATURE_FILES = ["kube_features.go", "versioned_kube_features.go"]

# The fork's known differences from upstream (release-lines note; openshift/kubernetes
# carries them as "UPSTREAM: <carry>" commits). All of them are in feature files, which are
# never read from the fork; the three files read from it are checked for OpenShift
# additions (FORK_MARKERS) so that an unknown carry there stops the extract.
FORK_KNOWN_DIFFERENCES = [
    "NodeLogQuery default true (upstream false): pkg/features, not read from the fork",
    "registerOpenshiftFeatures() adding OpenShift's own gates: pkg/features, not read "
    "from the fork",
    "1.31/1.32: StreamingCollectionEncodingToJSON/ToProtobuf backports and "
    "ResilientWatchCacheInitialization default false: feature files, not read from the fork",
]
FORK_MARKERS = re.compile(r"openshift|UPSTREAM: <carry>", re.IGNORECASE)


def git_show(git_dir, rev, path):
    """The file's text at rev, or None if rev has no such file."""
    result = subprocess.run(["git", "--git-dir", git_dir, "show", f"{rev}:{path}"],
                            capture_output=True, check=False)
    if result.returncode != 0:
        return None
    return result.stdout.decode("utf-8")


def git_ls(git_dir, rev, path):
    result = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "--name-only",
                             f"{rev}:{path}"], capture_output=True, check=True)
    return result.stdout.decode("utf-8").split()


def git_rev(git_dir, rev):
    result = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", f"{rev}^{{commit}}"],
                            capture_output=True, check=True)
    return result.stdout.decode("utf-8").strip()


# ---------------------------------------------------------------------------
# Go source reading (the shapes Kubernetes' feature, install and instance files use)

LINE_COMMENT = re.compile(r"//[^\n]*")
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


def strip_comments(text):
    return LINE_COMMENT.sub("", BLOCK_COMMENT.sub("", text))


# `X featuregate.Feature = "S"`, `X = featuregate.Feature("S")` and an untyped `X = "S"`
# (1.34's StatefulSetSemanticRevisionComparison); only names used as map keys count.
FEATURE_CONST = re.compile(
    r"^\s*(\w+)\s*(?:(?:\w+\.)?Feature\s*=\s*\"([^\"]+)\"|=\s*(?:\w+\.)?Feature\(\"([^\"]+)\"\)"
    r"|=\s*\"([^\"]+)\")",
    re.MULTILINE)
BOOL_CONST = re.compile(r"^\s*(\w+)\s*(?:bool\s*)?=\s*(true|false)\s*$", re.MULTILINE)
FEATURE_MAP = re.compile(r"map\[(?:\w+\.)?Feature\](?:\w+\.)?(FeatureSpec|VersionedSpecs)\s*\{")


def feature_consts(text):
    """{Go identifier: --feature-gates string} of every `X Feature = "..."` const."""
    return {name: typed or converted or untyped
            for name, typed, converted, untyped in FEATURE_CONST.findall(strip_comments(text))}


def bool_consts(text):
    return {name: value == "true" for name, value in BOOL_CONST.findall(strip_comments(text))}


def matching_brace(text, start):
    """Index of the brace closing the one at text[start]."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced braces")


def split_top(body, sep=","):
    """Splits at `sep` outside braces and parentheses."""
    parts, depth, current = [], 0, []
    for char in body:
        if char in "{(":
            depth += 1
        elif char in "})":
            depth -= 1
        if char == sep and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


PRE_RELEASES = {"Alpha": "ALPHA", "Beta": "BETA", "GA": "GA", "Deprecated": "DEPRECATED"}


def parse_spec(literal, bools, where):
    """One `{Version: ..., Default: ..., PreRelease: ..., LockToDefault: ...}` literal.

    `MinCompatibilityVersion: version.MustParse("1.37")` (component-base featuregate's
    VersionedSpecs field, first set by a kube gate in 1.37: DRAFractionalCapacityRange) is
    kept as `minCompatibilityVersion`; the key is present only when the literal sets it."""
    inner = literal.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        raise ValueError(f"{where}: not a spec literal: {literal!r}")
    spec = {"version": None, "default": False, "lockToDefault": False, "preRelease": None}
    for field in split_top(inner[1:-1]):
        key, _, value = (s.strip() for s in field.partition(":"))
        if key in ("Version", "MinCompatibilityVersion"):
            match = re.fullmatch(r"version\.(?:MustParse|MajorMinor)\((.*)\)", value)
            if not match:
                raise ValueError(f"{where}: {key} {value!r}")
            args = match.group(1)
            if args.startswith('"'):
                parsed = args.strip('"')
            else:
                parsed = ".".join(a.strip() for a in args.split(","))
            spec["version" if key == "Version" else "minCompatibilityVersion"] = parsed
        elif key in ("Default", "LockToDefault"):
            if value in ("true", "false"):
                flag = value == "true"
            elif value in bools:
                flag = bools[value]
            else:
                raise ValueError(f"{where}: {key} {value!r} is not a known bool")
            spec["default" if key == "Default" else "lockToDefault"] = flag
        elif key == "PreRelease":
            stage = value.split(".")[-1]
            if stage not in PRE_RELEASES:
                raise ValueError(f"{where}: PreRelease {value!r}")
            spec["preRelease"] = PRE_RELEASES[stage]
        else:
            raise ValueError(f"{where}: unknown spec field {key!r}")
    if spec["preRelease"] is None:
        raise ValueError(f"{where}: no PreRelease")
    return spec


def feature_maps(text, where):
    """[(key as written, versioned?, [specs])] of every feature map literal in a file."""
    bools = bool_consts(text)
    clean = strip_comments(text)
    entries = []
    for match in FEATURE_MAP.finditer(clean):
        before = clean[:match.start()].rstrip()
        if not (before.endswith("=") or before.endswith("return")):
            continue  # a function's result type, not a literal
        versioned = match.group(1) == "VersionedSpecs"
        open_brace = match.end() - 1
        body = clean[open_brace + 1:matching_brace(clean, open_brace)]
        for entry in split_top(body):
            key, _, value = (s.strip() for s in entry.partition(":"))
            if versioned:
                value = value.strip()
                specs = [parse_spec(s, bools, f"{where} {key}")
                         for s in split_top(value[1:-1])]
            else:
                specs = [parse_spec(value, bools, f"{where} {key}")]
            entries.append((key, versioned, specs))
    return entries


IMPORT_BLOCK = re.compile(r"^import\s*\((.*?)^\)", re.MULTILINE | re.DOTALL)
IMPORT_LINE = re.compile(r"^\s*(\w+)?\s*\"([^\"]+)\"", re.MULTILINE)


def imports(text):
    """{alias: import path} of a Go file."""
    out = {}
    for block in IMPORT_BLOCK.findall(text):
        for alias, path in IMPORT_LINE.findall(block):
            out[alias or path.rsplit("/", 1)[-1]] = path
    return out


# ---------------------------------------------------------------------------
# Extract


def repo_dir(sources, repo):
    path = os.path.join(sources, repo.replace("/", "+"), "repo")
    if not os.path.isdir(path):
        raise SystemExit(f"{path}: no git directory for {repo} (see catalog/README.md)")
    return path


def extract_gates(sources, line):
    """Every gate the line's kube-apiserver registers, keyed by its --feature-gates string."""
    kube_git = repo_dir(sources, KUBE_FEATURES_REPO)
    staging_texts, kube_texts = [], []
    for repo, path, component in STAGING_FEATURE_FILES:
        git = repo_dir(sources, repo)
        text = git_show(git, line["staging"], path)
        if text is None:
            continue
        staging_texts.append((component, text, f"{repo} {line['staging']} {path}",
                              {"repo": repo, "tag": line["staging"], "path": path,
                               "commit": git_rev(git, line["staging"])}))
    for name in KUBE_FEATURE_FILES:
        path = f"{KUBE_FEATURES_DIR}/{name}"
        text = git_show(kube_git, line["kube"], path)
        if text is None:
            continue
        kube_texts.append((text, f"{KUBE_FEATURES_REPO} {path}",
                           {"repo": KUBE_FEATURES_REPO, "commit": line["kube"], "path": path,
                            "module": f"k8s.io/kubernetes v{line['patch']}"}))
    return gates_of(staging_texts, kube_texts)


def gates_of(staging_texts, kube_texts):
    """The gates of a binary from its feature files' texts: staging_texts is
    [(component, text, where, source record)], kube_texts [(text, where, source record)]
    (pkg/features). Returns (gates, relisted, sources read)."""
    staging = {}   # Go identifier (module-qualified) -> gate
    consts = {}    # component -> {identifier: string}
    sources_read = []
    for component, text, where, record in staging_texts:
        sources_read.append(record)
        names = feature_consts(text)
        consts[component] = names
        for key, versioned, specs in feature_maps(text, where):
            if key not in names:
                raise SystemExit(f"{where}: map key {key} is not a Feature const")
            staging[(component, key)] = {"name": names[key], "goIdentifier": key,
                                         "component": component,
                                         "versioned": versioned, "specs": specs}
    # The generic apiserver's gates are what kube's files call genericfeatures.X; in
    # 1.31 kube's file re-lists some of them (the specs must agree, or AddVersioned
    # refuses to start the binary).
    kube_aliases = {}
    kube_text_all = ""
    kube_specs = []
    for text, where, record in kube_texts:
        sources_read.append(record)
        kube_text_all += text + "\n"
        for alias, module in imports(text).items():
            kube_aliases[alias] = module
        kube_specs.extend(feature_maps(text, where))
    kube_consts = feature_consts(kube_text_all)
    module_component = {
        "k8s.io/apiserver/pkg/features": "apiserver",
        "k8s.io/apiextensions-apiserver/pkg/features": "apiextensions-apiserver",
        "k8s.io/controller-manager/pkg/features": "controller-manager",
        "k8s.io/client-go/features": "client-go",
        "k8s.io/component-base/logs/api/v1": "component-base/logs",
        "k8s.io/component-base/metrics/features": "component-base/metrics",
        "k8s.io/component-base/zpages/features": "component-base/zpages",
    }
    gates = {}
    relisted = []
    for key, versioned, specs in kube_specs:
        if "." in key:
            alias, ident = key.split(".", 1)
            component = module_component.get(kube_aliases.get(alias, ""))
            if component is None:
                raise SystemExit(f"kube features: {key}: unknown package alias {alias}")
            name = consts.get(component, {}).get(ident)
            if name is None:
                raise SystemExit(f"kube features: {key} is not a const of {component}")
            own = staging.get((component, ident))
            if own is not None and own["specs"] != specs:
                raise SystemExit(f"kube features: {key} re-listed with specs {specs}, "
                                 f"{component} has {own['specs']}")
            relisted.append(name)
            if own is None:
                # Defined by the staging package, registered only through kube's map.
                gates[name] = {"name": name, "goIdentifier": key, "component": component,
                               "versioned": versioned, "specs": specs,
                               "registeredBy": "kube pkg/features"}
            continue
        if key not in kube_consts:
            raise SystemExit(f"kube features: map key {key} is not a Feature const")
        name = kube_consts[key]
        if name in gates:
            raise SystemExit(f"kube features: {name} registered twice")
        gates[name] = {"name": name, "goIdentifier": key, "component": "kube",
                       "versioned": versioned, "specs": specs}
    for gate in staging.values():
        kube_gate = gates.get(gate["name"])
        if kube_gate is not None and kube_gate["component"] == "kube":
            # kube's own const with the same string: featuregate.Add accepts the second
            # registration only with the same specs.
            if kube_gate["specs"] != gate["specs"]:
                raise SystemExit(f"{gate['name']}: kube and {gate['component']} register it "
                                 "with different specs")
            relisted.append(gate["name"])
        gates[gate["name"]] = gate
    for gate in gates.values():
        gate["specs"] = sorted(gate["specs"], key=lambda s: version_key(s["version"] or "0.0"))
    return [gates[name] for name in sorted(gates)], sorted(set(relisted)), sources_read


def api_dirs(api_extract):
    """{k8s.io/api package dir: (group, version)} from the API history extract."""
    out = {}
    for gvk in api_extract["gvks"]:
        if gvk["repo"] != "kubernetes/api":
            continue
        for run in gvk["runs"]:
            out[run["dir"]] = (gvk["group"], gvk["version"])
    return out


def gv_of_import(path, dirs):
    for prefix in ("k8s.io/api/", "k8s.io/kubernetes/pkg/apis/"):
        if path.startswith(prefix):
            rest = path[len(prefix):]
            if rest in dirs:
                return dirs[rest]
    return None


def group_of_import(path, dirs):
    """The API group of an internal package k8s.io/kubernetes/pkg/apis/<group>."""
    prefix = "k8s.io/kubernetes/pkg/apis/"
    if not path.startswith(prefix):
        return None
    group_dir = path[len(prefix):]
    groups = {gv[0] for d, gv in dirs.items() if d.split("/")[0] == group_dir}
    return groups.pop() if len(groups) == 1 else None


def check_fork_file(text, where):
    for number, line_text in enumerate(text.splitlines(), 1):
        if FORK_MARKERS.search(line_text):
            raise SystemExit(f"{where}:{number}: an OpenShift change the generator does not "
                             f"know how to undo: {line_text.strip()}")


class GitFiles:
    """A repository's files at one revision, under a directory of it (`git show`)."""

    def __init__(self, git_dir, rev, prefix):
        self.git_dir, self.rev, self.prefix = git_dir, rev, prefix

    def read(self, path):
        return git_show(self.git_dir, self.rev, f"{self.prefix}/{path}")

    def ls(self, path):
        try:
            return git_ls(self.git_dir, self.rev, f"{self.prefix}/{path}")
        except subprocess.CalledProcessError:
            return None

    def where(self, path):
        return f"{FORK_REPO} {self.rev[:12]} {path}"


def extract_fork(sources, line, dirs):
    files = GitFiles(repo_dir(sources, FORK_REPO), line["fork"], FORK_DIR)
    facts = kube_apiserver_facts(files, dirs, check_fork=True)
    facts["source"] = {"repo": FORK_REPO, "commit": line["fork"], "branch": line["forkBranch"],
                       "dir": FORK_DIR, "kubernetes": line["forkKubernetes"],
                       "files": ["pkg/apis/*/install/install.go", "pkg/controlplane/instance.go",
                                 "pkg/kubeapiserver/default_storage_factory_builder.go",
                                 "pkg/registry/*/rest/*.go", FEATURE_LIST],
                       "knownDifferences": FORK_KNOWN_DIFFERENCES}
    return facts


# The default-enabled lists kube-apiserver builds its resource config from. 1.36 split each
# into a generic one (genericStableAPIGroupVersionsEnabledByDefault, ...: the groups of
# GenericStorageProviders) and kube-apiserver's own; both are read, from instance.go and
# from any file of pkg/controlplane/apiserver/ that declares one.
ENABLEMENT_LISTS = ("stableAPIGroupVersionsEnabledByDefault",
                    "betaAPIGroupVersionsDisabledByDefault",
                    "alphaAPIGroupVersionsDisabledByDefault",
                    "legacyBetaEnabledByDefaultResources")
CONTROLPLANE_INSTANCE = "pkg/controlplane/instance.go"
CONTROLPLANE_APISERVER = "pkg/controlplane/apiserver"
STORAGE_FACTORY = "pkg/kubeapiserver/default_storage_factory_builder.go"


def enablement_lists(files, show, dirs):
    """{list name: [{group, version[, resource]}]} from instance.go and
    pkg/controlplane/apiserver/*.go."""
    texts = [(CONTROLPLANE_INSTANCE, show(CONTROLPLANE_INSTANCE))]
    for name in files.ls(CONTROLPLANE_APISERVER) or []:
        path = f"{CONTROLPLANE_APISERVER}/{name}"
        if not name.endswith(".go") or name.endswith("_test.go"):
            continue
        text = files.read(path)
        if text is not None and any(n[1:] in text for n in ENABLEMENT_LISTS):
            texts.append((path, show(path)))
    lists = {name: [] for name in ENABLEMENT_LISTS}
    for path, text in texts:
        aliases = imports(text)
        clean = strip_comments(text)
        for name in ENABLEMENT_LISTS:
            pattern = (r"\b(?:generic" + name[0].upper() + "|" + name[0] + ")" + name[1:]
                       + r"\s*=\s*\[\]schema\.GroupVersion(?:Resource)?\s*\{")
            for match in re.finditer(pattern, clean):
                body = clean[match.end():matching_brace(clean, match.end() - 1)]
                for item in split_top(body):
                    m = re.fullmatch(r"(\w+)\.SchemeGroupVersion(?:\.WithResource\(\"(\w+)\"\))?",
                                     item)
                    if not m:
                        raise SystemExit(f"{files.where(path)} {name}: {item!r} is not "
                                         "<package>.SchemeGroupVersion[.WithResource(\"r\")]")
                    gv = gv_of_import(aliases.get(m.group(1), ""), dirs)
                    if gv is None:
                        raise SystemExit(f"{files.where(path)} {name}: {m.group(1)} is not a "
                                         "k8s.io/api package")
                    entry = {"group": gv[0], "version": gv[1]}
                    if m.group(2):
                        entry["resource"] = m.group(2)
                    lists[name].append(entry)
    if not lists["stableAPIGroupVersionsEnabledByDefault"]:
        raise SystemExit(f"{files.where(CONTROLPLANE_INSTANCE)}: no "
                         "stableAPIGroupVersionsEnabledByDefault (nor a generic one in "
                         f"{CONTROLPLANE_APISERVER}/): an unknown layout")
    return lists


def registered_versions(clean, aliases, where, dirs):
    """{group: [versions]} that one install.go registers (`<v>.AddToScheme(scheme)` of a
    k8s.io/kubernetes/pkg/apis/<group>/<version> package, in the file's order): what
    kube-apiserver's scheme reports as registered (runtime.Scheme IsVersionRegistered),
    whether or not any REST storage serves them."""
    out = {}
    for alias in re.findall(r"\b(\w+)\.AddToScheme\(\s*scheme\s*\)", clean):
        path = aliases.get(alias, "")
        gv = gv_of_import(path, dirs)
        if gv is None:
            if group_of_import(path, dirs) is not None:
                continue  # the internal version (pkg/apis/<group>), not a group-version
            raise SystemExit(f"{where}: {alias}.AddToScheme: {path or alias} is neither a "
                             "pkg/apis/<group> nor a pkg/apis/<group>/<version> package")
        out.setdefault(gv[0], []).append(gv[1])
    return out


def version_priorities(files, show, dirs):
    """({group: [versions, highest priority first]}, {group: [registered versions]}) of
    pkg/apis/*/install/install.go."""
    priorities, registered = {}, {}
    for group_dir in files.ls("pkg/apis") or []:
        path = f"pkg/apis/{group_dir}/install/install.go"
        if files.read(path) is None:
            continue
        text = show(path)
        aliases = imports(text)
        clean = strip_comments(text)
        for group, versions in registered_versions(clean, aliases, files.where(path),
                                                   dirs).items():
            registered.setdefault(group, []).extend(versions)
        for match in re.finditer(r"SetVersionPriority\(", clean):
            end = clean.index(")", match.end())
            gvs = []
            for alias in re.findall(r"(\w+)\.SchemeGroupVersion", clean[match.end():end]):
                gv = gv_of_import(aliases.get(alias, ""), dirs)
                if gv is None:
                    raise SystemExit(f"{files.where(path)}: {alias} is not a k8s.io/api "
                                     "group-version")
                gvs.append(gv)
            if not gvs:
                raise SystemExit(f"{files.where(path)}: SetVersionPriority names no "
                                 "<package>.SchemeGroupVersion")
            group = gvs[0][0]
            if any(g != group for g, _ in gvs):
                raise SystemExit(f"{files.where(path)}: priorities mix groups")
            priorities[group] = [v for _, v in gvs]
            unregistered = [v for v in priorities[group] if v not in registered.get(group, [])]
            if unregistered:
                raise SystemExit(f"{files.where(path)}: SetVersionPriority names "
                                 f"{', '.join(unregistered)} of {group or 'core'}, which no "
                                 "<version>.AddToScheme(scheme) registers")
    if not priorities:
        raise SystemExit(f"{files.where('pkg/apis')}: no */install/install.go with "
                         "SetVersionPriority")
    return priorities, registered


def storage_overrides(show, files, dirs):
    text = show(STORAGE_FACTORY)
    aliases = imports(text)
    clean = strip_comments(text)
    match = re.search(r"func NewStorageFactoryConfig\(\)", clean)
    end = clean.find("return &StorageFactoryConfig", match.end()) if match else -1
    if end < 0:
        raise SystemExit(f"{files.where(STORAGE_FACTORY)}: no func NewStorageFactoryConfig() "
                         "returning &StorageFactoryConfig")
    body = clean[match.end():end]
    overrides = []
    for alias, resource, version in re.findall(
            r"(\w+)\.Resource\(\"(\w+)\"\)\.WithVersion\(\"(\w+)\"\)", body):
        group = group_of_import(aliases.get(alias, ""), dirs)
        if group is None:
            raise SystemExit(f"{files.where(STORAGE_FACTORY)}: {alias} is not a pkg/apis group")
        overrides.append({"group": group, "resource": resource, "version": version})
    return overrides


def rest_storage(files, show, dirs):
    """Resources each group-version's REST storage serves (pkg/registry/<group>/rest):
    `if resource := "x"; apiResourceConfigSource.ResourceEnabled(<gv>.WithResource(resource))`.
    flowcontrol builds the same storage for each of its versions (`groupVersion`)."""
    registry, group_wide = {}, {}
    groups = files.ls("pkg/registry")
    if not groups:
        raise SystemExit(f"{files.where('pkg/registry')}: no directory (expected "
                         "pkg/registry/<group>/rest/*.go)")
    for group_dir in groups:
        if group_dir == "testapigroup":
            continue  # a test fixture, not installed by kube-apiserver
        rest_dir = f"pkg/registry/{group_dir}/rest"
        names = files.ls(rest_dir)
        if names is None:
            continue
        for name in names:
            if not name.endswith(".go") or name.endswith("_test.go"):
                continue
            text = show(f"{rest_dir}/{name}")
            aliases = imports(text)
            for resource, target in re.findall(
                    r"resource\s*:=\s*\"([\w/]+)\";[^{]*?ResourceEnabled\(\s*"
                    r"(\w+(?:\.SchemeGroupVersion)?)\.WithResource\(resource\)",
                    strip_comments(text)):
                if target == "groupVersion":
                    group = group_of_import(f"k8s.io/kubernetes/pkg/apis/{group_dir}", dirs)
                    if group is None:
                        raise SystemExit(f"{files.where(rest_dir)}/{name}: no API group for "
                                         f"{group_dir}")
                    group_wide.setdefault(group, set()).add(resource)
                    continue
                gv = gv_of_import(aliases.get(target.split(".")[0], ""), dirs)
                if gv is None:
                    raise SystemExit(f"{files.where(rest_dir)}/{name}: {target} is not a "
                                     "k8s.io/api package")
                registry.setdefault(f"{gv[0]}/{gv[1]}", set()).add(resource)
    if not registry:
        raise SystemExit(f"{files.where('pkg/registry')}: no */rest/*.go serves a resource "
                         "(expected `resource := \"x\"; ...ResourceEnabled(<gv>.WithResource"
                         "(resource))`)")
    return registry, group_wide


def kube_apiserver_facts(files, dirs, check_fork):
    """The kubernetes/kubernetes facts of a binary other than gates, read from `files`
    (GitFiles of the fork copy, or TreeFiles of a checkout): version priorities,
    default-enabled lists, storage overrides, REST storage, the generated feature list."""
    def show(path):
        text = files.read(path)
        if text is None:
            raise SystemExit(f"{files.where(path)}: no such file (expected in a "
                             "kubernetes/kubernetes tree)")
        if check_fork:
            check_fork_file(text, files.where(path))
        return text

    priorities, registered = version_priorities(files, show, dirs)
    lists = enablement_lists(files, show, dirs)
    overrides = storage_overrides(show, files, dirs)
    registry, group_wide = rest_storage(files, show, dirs)
    # Kubernetes' generated feature list (hack/update-featuregates.sh), 1.33+: for the
    # cross-check only (crosscheck_lines.py).
    feature_list = None
    list_text = files.read(FEATURE_LIST)
    if list_text is not None:
        feature_list = parse_feature_list(list_text)
    return {"versionPriorities": dict(sorted(priorities.items())),
            "registeredVersions": dict(sorted(registered.items())), "enablement": lists,
            "storageOverrides": overrides, "featureList": feature_list,
            "restStorage": {k: sorted(v) for k, v in sorted(registry.items())},
            "restStorageEveryVersion": {k: sorted(v) for k, v in sorted(group_wide.items())}}


FEATURE_LIST = "test/compatibility_lifecycle/reference/versioned_feature_list.yaml"


def parse_feature_list(text):
    """{name: [[version, default, lockToDefault, preRelease]]} of a generated
    versioned_feature_list.yaml (its one fixed shape: a list of name + versionedSpecs)."""
    out, name, spec = {}, None, None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line == "[]":
            continue
        if raw.startswith("- name: "):
            name = line[len("- name: "):]
            out[name] = []
            continue
        if line == "versionedSpecs:":
            continue
        if line.startswith("- "):
            spec = {}
            out[name].append(spec)
            line = line[2:]
        key, _, value = line.partition(": ")
        value = value.strip('"')
        if key in ("default", "lockToDefault"):
            value = value == "true"
        elif key == "preRelease":
            value = {v: k for k, v in PRE_RELEASE.items()}[value]
        spec[key] = value
    return {n: [[s["version"], s["default"], s["lockToDefault"], s["preRelease"]] for s in specs]
            for n, specs in sorted(out.items())}


# ---------------------------------------------------------------------------
# Extract from a kubernetes/kubernetes source tree (generate.py --tree DIR)
#
# Every fact above, read from one checkout of kubernetes/kubernetes at a release tag: the
# staging repositories are its staging/src/k8s.io/<name>/, kube's gates its pkg/features/,
# and the API kinds and lifecycles its staging/src/k8s.io/api/ (read with
# generate_api_history's per-tag reader, as for the kubernetes/api tags).

STAGING = "staging/src/k8s.io"
KUBE_FEATURES = "pkg/features"
TREE_REQUIRED = [
    (f"{KUBE_FEATURES}/kube_features.go", "kube's feature gates"),
    (f"{STAGING}/apiserver/pkg/features/kube_features.go", "the generic apiserver's gates"),
    (f"{STAGING}/api/core/v1/register.go", "the core/v1 API (k8s.io/api)"),
    (CONTROLPLANE_INSTANCE, "the default-enabled API lists"),
    (STORAGE_FACTORY, "the storage overrides"),
]


class TreeFiles:
    """A directory's files (a kubernetes/kubernetes checkout)."""

    def __init__(self, root):
        self.root = root

    def read(self, path):
        full = os.path.join(self.root, path)
        if not os.path.isfile(full):
            return None
        with open(full, encoding="utf-8") as f:
            return f.read()

    def ls(self, path):
        full = os.path.join(self.root, path)
        return sorted(os.listdir(full)) if os.path.isdir(full) else None

    def where(self, path):
        return os.path.join(self.root, path)


class TreeRepo:
    """generate_api_history's view of a repository (`run("ls-tree", "-r", tag)`,
    `blob(id)`) over a directory: the "tag" is the directory as it is, a blob id its path."""

    def __init__(self, root):
        self.root = root

    def run(self, *args):
        if args[:2] != ("ls-tree", "-r"):
            raise ValueError(f"TreeRepo: {args}")
        out = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames.sort()
            for name in sorted(filenames):
                rel = os.path.relpath(os.path.join(dirpath, name), self.root)
                out.append(f"100644 blob {rel}\t{rel}")
        return "\n".join(out) + "\n"

    def blob(self, rel):
        with open(os.path.join(self.root, rel), encoding="utf-8", errors="replace") as f:
            return f.read()


def tree_api_kinds(root):
    """[{group, version, kind, dir, genclient, ...}] of staging/src/k8s.io/api in the tree,
    the facts generate_api_history.py reads from each kubernetes/api tag."""
    spec = next(r for r in history_gen.REPOS if r["repo"] == "kubernetes/api")
    facts = history_gen.extract_tag_facts(TreeRepo(os.path.join(root, STAGING, "api")), spec,
                                          "tree", {})
    return [dict(fact, group=g, version=v, kind=k) for (g, v, k), fact in sorted(facts.items())]


def tree_git(root):
    """{commit, tag} of a git checkout (None where the tree is not one or has no tag)."""
    def git(*args):
        result = subprocess.run(["git", "-C", root] + list(args), capture_output=True,
                                check=False)
        return result.stdout.decode("utf-8").strip() if result.returncode == 0 else None
    if not os.path.exists(os.path.join(root, ".git")):
        return {"commit": None, "tag": None}
    return {"commit": git("rev-parse", "HEAD"),
            "tag": git("describe", "--tags", "--exact-match", "HEAD")}


def extract_tree(root, line, patch, exactness, note):
    """One line's extract entry from a kubernetes/kubernetes tree. Stops (SystemExit) with
    the path and what was expected when the tree is not laid out like a Kubernetes
    release, before anything is written."""
    if not re.fullmatch(r"1\.\d+", line):
        raise SystemExit(f"--line {line!r}: expected a major.minor such as 1.37")
    if not (patch == line or re.fullmatch(re.escape(line) + r"\.\d+", patch)):
        raise SystemExit(f"--patch {patch!r}: expected {line} or {line}.N")
    if not os.path.isdir(root):
        raise SystemExit(f"{root}: no such directory (expected a kubernetes/kubernetes "
                         "checkout)")
    files = TreeFiles(root)
    for path, what in TREE_REQUIRED:
        if files.read(path) is None:
            raise SystemExit(f"{files.where(path)}: no such file ({what}); expected a "
                             "kubernetes/kubernetes checkout at a release tag")
    try:
        kinds = tree_api_kinds(root)
        dirs = {k["dir"]: (k["group"], k["version"]) for k in kinds}
        staging_texts = []
        for repo, path, component in STAGING_FEATURE_FILES:
            rel = f"{STAGING}/{repo.split('/', 1)[1]}/{path}"
            text = files.read(rel)
            if text is not None:
                staging_texts.append((component, text, files.where(rel), {"path": rel}))
        kube_texts = []
        for name in KUBE_FEATURE_FILES:
            rel = f"{KUBE_FEATURES}/{name}"
            text = files.read(rel)
            if text is not None:
                kube_texts.append((text, files.where(rel), {"path": rel}))
        gates, relisted, gate_sources = gates_of(staging_texts, kube_texts)
        facts = kube_apiserver_facts(files, dirs, check_fork=False)
    except ValueError as error:  # a Go construct the readers do not know
        raise SystemExit(f"{error} (expected the shapes of a Kubernetes release's files)")
    at_line = [g["name"] for g in gates for s in g["specs"] if s["version"] == line]
    if not at_line:
        newest = max((s["version"] for g in gates for s in g["specs"] if s["version"]),
                     key=version_key, default="none")
        raise SystemExit(f"{files.where(KUBE_FEATURES)}: no gate has a spec at {line} "
                         f"(newest: {newest}): the tree is not release {line}")
    if exactness["level"] not in ("EXACT", "PROVISIONAL"):
        raise SystemExit(f"--exactness {exactness['level']!r}: expected EXACT or PROVISIONAL")
    if exactness["level"] == "PROVISIONAL" and not exactness.get("reason"):
        raise SystemExit("--exactness PROVISIONAL needs --reason (which sources, of when)")
    source = {"tree": tree_git(root), "note": note,
              "files": [f"{KUBE_FEATURES}/*.go", f"{STAGING}/*/…feature files",
                        f"{STAGING}/api/*/*/*.go", "pkg/apis/*/install/install.go",
                        CONTROLPLANE_INSTANCE, f"{CONTROLPLANE_APISERVER}/*.go",
                        STORAGE_FACTORY, "pkg/registry/*/rest/*.go", FEATURE_LIST]}
    return {"line": line, "patch": patch, "staging": None, "gates": gates,
            "kubeRelisted": relisted, "gateSources": gate_sources, **facts,
            "source": source, "apiKinds": kinds, "exactness": exactness}


def extract(sources):
    api_extract = history_gen.load_json(history_gen.EXTRACT)
    dirs = api_dirs(api_extract)
    out = {"schemaVersion": 1,
           "generatedBy": "catalog/generate_lines.py (extract)",
           "notes": [
               "Facts of each kube-apiserver release line, read with git from the sources "
               "named in each line's `sources`. gates: every gate the binary registers, by "
               "its --feature-gates string (the const's value); versioned false means an "
               "unversioned FeatureSpec (component-base gives it version 0.0).",
               "fork: files of kubernetes/kubernetes read from the OpenShift fork copy; "
               "knownDifferences says why none of the fork's changes reaches them.",
           ],
           "lines": []}
    for line in LINES:
        gates, relisted, gate_sources = extract_gates(sources, line)
        fork = extract_fork(sources, line, dirs)
        out["lines"].append({"line": line["line"], "patch": line["patch"],
                             "staging": line["staging"], "gates": gates,
                             "kubeRelisted": relisted, "gateSources": gate_sources, **fork})
    return out


# ---------------------------------------------------------------------------
# Render


def version_key(text):
    return tuple(int(p) for p in text.split("."))


def quote(text):
    return json.dumps(text)


def group_scalar(group):
    return group if group else '""'


PRE_RELEASE = {"ALPHA": "Alpha", "BETA": "Beta", "GA": "GA", "DEPRECATED": "Deprecated"}
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
# An unversioned FeatureSpec: component-base's featureGate.Add gives it version 0.0 "so that
# it can be enabled/disabled regardless of emulation version" (feature_gate.go).
UNVERSIONED = "0.0"


def feature_lines(gates, line):
    lines = ["features:"]
    dropped = 0
    for gate in gates:
        lines.append(f"  - name: {gate['name']}")
        lines.append(f"    component: {COMPONENTS[gate['component']]}")
        lines.append("    versionedSpecs:")
        for spec in gate["specs"]:
            version = spec["version"] or UNVERSIONED
            if version_key(version) > version_key(line):
                dropped += 1
                continue
            fields = [f"version: {quote(version)}",
                      f"default: {str(spec['default']).lower()}",
                      f"lockToDefault: {str(spec['lockToDefault']).lower()}",
                      f"preRelease: {PRE_RELEASE[spec['preRelease']]}"]
            if spec.get("minCompatibilityVersion"):
                fields.append(f"minCompatibilityVersion: {quote(spec['minCompatibilityVersion'])}")
            lines.append("      - {" + ", ".join(fields) + "}")
    return lines, dropped


def tag_index(api_extract):
    return {repo["repo"]: {tag: i for i, tag in enumerate(repo["tags"])}
            for repo in api_extract["repos"]}


def run_at(gvk, tag, index):
    order = index[gvk["repo"]]
    if tag not in order:
        raise SystemExit(f"data/api_history_extract.json has no tag {tag} of {gvk['repo']}: "
                         "run generate_api_history.py's full rebuild first")
    at = order[tag]
    for run in gvk["runs"]:
        if order[run["from"]] <= at <= order[run["to"]]:
            return run
    return None


def served_lifecycle(run):
    """What kube-apiserver acts on: the type's APILifecycle* methods, generated
    (zz_generated.prerelease-lifecycle.go) or hand-written (core/v1 lifecycle.go). A type
    with tags but no generated method (resource.k8s.io v1alpha3 at 1.31, whose package was
    not generated yet) has no lifecycle in the binary: it is served at every emulation
    version its group-version is."""
    values = dict(run.get("zz") or {})
    values.update(run.get("methods") or {})
    return values


def kind_runs(entry, api_extract):
    """[(gvk, facts)] of the kubernetes/api kinds of the line's binary: read from its tree
    (`apiKinds`, generate.py --tree) or from the API history extract at its staging tag."""
    if entry.get("apiKinds") is not None:
        return [(kind, kind) for kind in entry["apiKinds"]]
    index = tag_index(api_extract)
    out = []
    for gvk in api_extract["gvks"]:
        if gvk["repo"] != "kubernetes/api":
            continue
        run = run_at(gvk, entry["staging"], index)
        if run is not None:
            out.append((gvk, run))
    return out


def resource_kinds(entry, api_extract, lifecycles):
    """{(group, version): [(kind, resource, run)]}: the kinds of k8s.io/api that are
    resources (`+genclient`, and core's top-level bindings), and the (group, kind)s that
    are not persisted."""
    not_persisted, subresources = set(), {}
    for gv in lifecycles["groupVersions"]:
        for resource in gv["resources"]:
            if resource.get("persisted") is False:
                not_persisted.add((gv["group"], resource["kind"]))
            if resource.get("subresourceOf"):
                subresources[(gv["group"], resource["kind"])] = resource["resource"]
    kinds = {}
    for gvk, run in kind_runs(entry, api_extract):
        key = (gvk["group"], gvk["kind"])
        if run.get("genclient") is True:
            resource = run.get("resourceName") or history_gen.plural(gvk["kind"])
        elif key in subresources and subresources[key] == "bindings":
            # core/v1 also serves a top-level, create-only bindings resource.
            resource = "bindings"
        else:
            continue
        kinds.setdefault((gvk["group"], gvk["version"]), []).append((gvk["kind"], resource, run))
    return kinds, not_persisted


def group_versions(entry, served):
    """[(group, version)] of the apis section: core first, then groups by name; in a group,
    its SetVersionPriority order. Every version pkg/apis/<group>/install registers
    (`registeredVersions`; the unprioritized ones after, as the scheme's
    PrioritizedVersionsForGroup lists them) when the extract has them, else (extracts made
    before registrations were read) the versions of instance.go's lists."""
    priorities = entry["versionPriorities"]
    registered = entry.get("registeredVersions")
    groups = {g for g, _ in served} | set(registered or {})
    out = []
    for group in sorted(groups, key=lambda g: (g != "", g)):
        if group not in priorities:
            raise SystemExit(f"{entry['line']}: {group} is enabled in instance.go but has no "
                             "version priority")
        if registered is None:
            out += [(group, v) for v in priorities[group] if (group, v) in served]
            continue
        versions = priorities[group] + [v for v in registered.get(group, [])
                                        if v not in priorities[group]]
        for version in versions:
            if (group, version) in served and version not in registered.get(group, []):
                raise SystemExit(f"{entry['line']}: {group}/{version} is in instance.go's "
                                 "lists but no pkg/apis/*/install registers it")
        out += [(group, v) for v in versions]
    return out


def emulation_floor(line):
    """The lowest emulation version the line's binary accepts
    (docs/kubernetes-rules.md#emulation-version-floor): the binary itself before 1.32,
    then max(binary - 3 minors, 1.31) (component-base compatibility
    kubeEffectiveVersionFloors; 1.32: N-1)."""
    major, minor = version_key(line)[:2]
    return (major, minor if minor <= 31 else max(minor - 3, 31))


def served_kinds(entry, group, version, gv_kinds, notes):
    """The kinds of one group-version the catalog lists: those its REST storage serves
    (core: every resource kind of core/v1, whose storage is built differently). With
    registrations read, a kind no REST storage serves stays only when its lifecycle already
    removes it at every emulation version the binary accepts (apps/v1beta1 Deployment,
    removed 1.16: listed, served at none); any other is left out and named in `notes`.
    None: the group-version is left out (no registrations read, no REST storage)."""
    if not group:
        return gv_kinds
    tag = entry["staging"] or "the tree's staging/src/k8s.io/api"
    rest = set(entry["restStorage"].get(f"{group}/{version}", [])) | set(
        entry["restStorageEveryVersion"].get(group, []))
    rest = {r for r in rest if "/" not in r}
    missing = rest - {r for _, r, _ in gv_kinds}
    if missing:
        raise SystemExit(f"{entry['line']}: {group}/{version} serves "
                         f"{sorted(missing)}, which have no kind at {tag}")
    if entry.get("registeredVersions") is None:
        if not rest:
            # In instance.go's lists (so --runtime-config accepts it) but no REST
            # storage serves a resource of it.
            notes["unserved"].append(f"{group}/{version}")
            return None
        return [k for k in gv_kinds if k[1] in rest]
    if not rest:
        notes["unserved"].append(f"{group}/{version}")
    floor = emulation_floor(entry["line"])
    kept = []
    for kind, resource, run in gv_kinds:
        removed = served_lifecycle(run).get("removed")
        if resource in rest or (removed and version_key(removed) <= floor):
            kept.append((kind, resource, run))
        else:
            notes["noStorage"].append(f"{group}/{version} {resource} ("
                                      + (f"removed {removed}" if removed else "no lifecycle")
                                      + ")")
    return kept


def resource_line(group, kind, resource, run, not_persisted):
    values = served_lifecycle(run)
    fields = [f"resource: {resource}", f"kind: {kind}"]
    for field in ("introduced", "deprecated", "removed"):
        if values.get(field):
            fields.append(f"{field}: {quote(values[field])}")
    replacement = values.get("replacement")
    if replacement:
        fields.append("replacement: " + (
            f"{replacement['group']}/{replacement['version']}"
            if replacement["group"] else replacement["version"]))
        if replacement.get("kind") and replacement["kind"] != kind:
            fields.append(f"replacementKind: {replacement['kind']}")
    if (group, kind) in not_persisted:
        fields.append("persisted: false")
    return "      - {" + ", ".join(fields) + "}"


def api_section(entry, api_extract, lifecycles):
    """The apis lines of one line, {(group, resource): [versions]}, and the notes for the
    header ({"unserved": [group/version], "noStorage": [kinds left out]})."""
    tag = entry["staging"] or "the tree's staging/src/k8s.io/api"
    kinds, not_persisted = resource_kinds(entry, api_extract, lifecycles)
    enablement = entry["enablement"]
    served = {}
    for name in ("stableAPIGroupVersionsEnabledByDefault", "betaAPIGroupVersionsDisabledByDefault",
                 "alphaAPIGroupVersionsDisabledByDefault", "legacyBetaEnabledByDefaultResources"):
        for item in enablement[name]:
            served.setdefault((item["group"], item["version"]), set()).add(name)
    legacy = {}
    for item in enablement["legacyBetaEnabledByDefaultResources"]:
        legacy.setdefault((item["group"], item["version"]), set()).add(item["resource"])
    lines = ["apis:"]
    resources_of = {}
    notes = {"unserved": [], "noStorage": []}
    for group, version in group_versions(entry, served):
        gv_kinds = served_kinds(entry, group, version, kinds.get((group, version), []), notes)
        if gv_kinds is None:
            continue
        if not gv_kinds and entry.get("registeredVersions") is None:
            raise SystemExit(f"{entry['line']}: {group}/{version} has no kind at {tag}")
        lists = served.get((group, version), set())
        enabled = "stableAPIGroupVersionsEnabledByDefault" in lists
        if (group, version) in legacy:
            resources = {r for _, r, _ in gv_kinds}
            if legacy[(group, version)] != resources:
                raise SystemExit(f"{entry['line']}: {group}/{version}: legacy beta "
                                 "resources are not the whole group-version")
            enabled = True
        rule = history_gen.GA_VERSION.match(version) is not None
        lines.append(f"  - group: {group_scalar(group)}")
        lines.append(f"    version: {version}")
        if enabled != rule:
            lines.append(f"    enabledByDefault: {str(enabled).lower()}")
        if not gv_kinds:
            lines.append("    resources: []")
            continue
        lines.append("    resources:")
        for kind, resource, run in sorted(gv_kinds, key=lambda k: k[1]):
            lines.append(resource_line(group, kind, resource, run, not_persisted))
            resources_of.setdefault((group, resource), []).append(version)
    return lines, resources_of, notes


def storage_lines(entry, resources_of):
    lines = ["storageOverrides:"]
    for override in entry["storageOverrides"]:
        text = (f"{{group: {group_scalar(override['group'])}, resource: {override['resource']}, "
                f"version: {override['version']}}}")
        key = (override["group"], override["resource"])
        if key not in resources_of:
            # kube-apiserver keys its overrides by group/resource; one no group-version
            # serves (storagemigrations; the resource is storageversionmigrations) matches
            # nothing and changes nothing.
            lines.append(f"  # left out (matches no resource, so kube-apiserver ignores it): {text}")
            continue
        if override["version"] not in resources_of[key]:
            raise SystemExit(f"{entry['line']}: storage override {text}: version not served")
        lines.append(f"  - {text}")
    return lines


def spec_line(spec):
    """One versionedSpecs entry, as feature_lines writes it."""
    fields = [f"version: {quote(spec['version'] or UNVERSIONED)}",
              f"default: {str(spec['default']).lower()}",
              f"lockToDefault: {str(spec['lockToDefault']).lower()}",
              f"preRelease: {PRE_RELEASE[spec['preRelease']]}"]
    if spec.get("minCompatibilityVersion"):
        fields.append(f"minCompatibilityVersion: {quote(spec['minCompatibilityVersion'])}")
    return "{" + ", ".join(fields) + "}"


def patch_change_lines(changes, line):
    """patchesKnownThrough and patchChanges of a line, from data/patch_changes.json
    (written by generate_patch_changes.py)."""
    lines = []
    record = next((r for r in changes.get("lines", []) if r["line"] == line), None)
    if record is not None and record.get("patchesKnownThrough"):
        lines += ["# Every patch of the line up to this one was read (staging tags, kube",
                  "# pkg/features, CHANGELOG; data/patch_changes.json): a request naming one",
                  "# is answered as that patch.",
                  f"patchesKnownThrough: {quote(record['patchesKnownThrough'])}"]
    mine = [c for c in changes["changes"] if c["line"] == line]
    if not mine:
        return lines
    lines += ["# Gates that patch releases of this line changed: the features above hold from",
              "# `since`; the patches before it registered specsBefore (or not the gate).",
              "patchChanges:"]
    for change in mine:
        lines.append(f"  - feature: {change['feature']}")
        lines.append(f"    since: {quote(change['since'])}")
        lines.append(f"    before: {quote(change['before'])}")
        if change.get("source"):
            lines.append(f"    # {change['source']}")
        if change.get("specsFrom"):
            lines.append(f"    # earlier specs: {change['specsFrom']}")
        if change.get("registeredBefore") is False:
            lines.append("    registeredBefore: false")
        elif change.get("specsBefore"):
            lines.append("    specsBefore:")
            for spec in change["specsBefore"]:
                lines.append("      - " + spec_line(spec))
    return lines


def render_line(entry, api_extract, lifecycles, history_section, changes):
    """The catalog text of one release line."""
    entry, overlay = with_overlay(entry)
    gate_names = {g["name"] for g in entry["gates"]}
    for change in changes["changes"]:
        if change["line"] == entry["line"] and change["feature"] not in gate_names:
            raise SystemExit(f"patch_changes.json: {change['feature']} is not a gate of "
                             f"{entry['line']}")
    features, dropped = feature_lines(entry["gates"], entry["line"])
    apis, resources_of, api_notes = api_section(entry, api_extract, lifecycles)
    counts = {}
    for gate in entry["gates"]:
        counts[gate["component"]] = counts.get(gate["component"], 0) + 1
    unversioned = sum(1 for g in entry["gates"] if not g["versioned"])
    if entry.get("apiKinds") is not None:
        header = tree_header(entry, overlay, counts, unversioned)
    else:
        header = fork_header(entry, counts, unversioned)
    if dropped:
        header.append(f"# {dropped} specs after {entry['line']} left out.")
    header += api_header(entry, api_notes)
    lines = header + [f"binaryVersion: {quote(entry['patch'])}"]
    if entry.get("exactness"):
        lines += exactness_lines(entry["exactness"])
    lines += features
    lines += apis
    lines += storage_lines(entry, resources_of)
    lines += patch_change_lines(changes, entry["line"])
    lines += history_section
    if entry.get("apiKinds") is not None:
        lines += newer_history(apis, history_section)
    return "\n".join(lines) + "\n"


def api_header(entry, notes):
    """The header lines that say which registered group-versions and kinds serve nothing."""
    header = []
    if entry.get("registeredVersions") is None:
        if notes["unserved"]:
            header.append("# Left out of apis: in instance.go's lists, but no REST storage of "
                          "the binary serves a resource of")
            header.append("#   them: " + ", ".join(notes["unserved"]))
        return header
    floor = "%d.%d" % emulation_floor(entry["line"])
    header.append("# apis: every group-version pkg/apis/*/install registers (so --runtime-config "
                  "accepts it),")
    header.append("#   serving what pkg/registry/*/rest serves. A kind with no REST storage is "
                  "listed only when")
    header.append(f"#   its lifecycle removes it by {floor}, the lowest emulation version the "
                  "binary accepts.")
    if notes["unserved"]:
        header.append(f"# Registered, served by no REST storage ({len(notes['unserved'])}):")
        header += wrapped("#   ", notes["unserved"])
    if notes["noStorage"]:
        header.append(f"# Kinds left out: no REST storage serves them ({len(notes['noStorage'])}):")
        header += wrapped("#   ", notes["noStorage"])
    return header


def wrapped(prefix, items, width=100):
    lines, current = [], prefix
    for item in items:
        piece = item if current == prefix else ", " + item
        if len(current) + len(piece) > width and current != prefix:
            lines.append(current + ",")
            current = prefix + item
        else:
            current += piece
    return lines + [current]


API_GV = re.compile(r"^  - group: (\S+)$|^    version: (\S+)$")
API_RESOURCE = re.compile(r"^      - \{resource: (\S+), kind: (\w+)(.*)\}$")
HISTORY_KEY = re.compile(r"^  - \{group: (\S+), version: (\S+), kind: (\w+)")


def newer_history(apis, history_section):
    """apiHistory entries for the kinds a tree's binary serves that data/api_history.json
    (release tags only) does not list yet: a line made from a tree newer than the newest
    kubernetes/api tag read. Each with the lifecycle its apis entry has."""
    known = {m.groups() for m in map(HISTORY_KEY.match, history_section) if m}
    out, group, version = [], None, None
    for line in apis:
        gv = API_GV.match(line)
        if gv:
            group, version = gv.group(1) or group, gv.group(2) or version
            continue
        resource = API_RESOURCE.match(line)
        if not resource or (group, version, resource.group(2)) in known:
            continue
        rest = resource.group(3).replace(", persisted: false", "")
        out.append(f"  - {{group: {group}, version: {version}, kind: {resource.group(2)}, "
                   f"resource: {resource.group(1)}{rest}}}")
    if not out:
        return []
    return [f"  # {len(out)} kinds of this tree that no kubernetes/api release tag of "
            "data/api_history.json has yet"] + out


def fork_header(entry, counts, unversioned):
    kube_source = next(s for s in entry["gateSources"] if s["repo"] == KUBE_FEATURES_REPO)
    fork = entry["source"]
    return [
        f"# compatd's catalog of the kube-apiserver {entry['patch']} binary (release line "
        f"{entry['line']}).",
        "#",
        "# GENERATED by catalog/generate.py (catalog/generate_lines.py); do not edit.",
        "#   python3 catalog/generate.py                 # from the committed extracts",
        "#   python3 catalog/generate.py --sources DIR   # from checkouts (catalog/README.md)",
        "# Sources (catalog/data/lines_extract.json has every commit):",
        f"#   gates: k8s.io/kubernetes v{entry['patch']} pkg/features as vendored by",
        f"#     {KUBE_FEATURES_REPO} @ {kube_source['commit'][:12]}; staging feature files "
        f"at {entry['staging']}",
        f"#   APIs: kubernetes/api {entry['staging']} (data/api_history_extract.json): kinds,",
        "#     lifecycles, the hand-written core/v1 lifecycle functions",
        f"#   version priorities, default-enabled lists, storage overrides: the OpenShift fork",
        f"#     copy of kubernetes/kubernetes ({fork['kubernetes']}) in {fork['repo']} "
        f"{fork['branch']} @ {fork['commit'][:12]},",
        f"#     {fork['dir']}/. The fork's known differences (NodeLogQuery default,",
        "#     registerOpenshiftFeatures, 1.31/1.32 watch-cache and streaming backports) are",
        "#     all in feature files, which are read from upstream instead; the three files read",
        "#     from the fork are checked to carry no OpenShift change.",
        f"# {len(entry['gates'])} gates (" + ", ".join(
            f"{c} {n}" for c, n in sorted(counts.items())) + ")"
        + (f"; {unversioned} unversioned (one FeatureSpec, version \"0.0\": the binary applies"
           " it at every emulation version)" if unversioned else "") + ".",
    ]


# Gate facts later than a line's tree (data/lines_overlay.json): for a PROVISIONAL line whose
# tree predates the release, the changes the release notes name, each with its provenance.
LINES_OVERLAY = os.path.join(DATA, "lines_overlay.json")


def with_overlay(entry):
    """(entry with the overlay's gates applied, the overlay of its line or None)."""
    if not os.path.exists(LINES_OVERLAY):
        return entry, None
    with open(LINES_OVERLAY, encoding="utf-8") as f:
        overlay = json.load(f)["lines"].get(entry["line"])
    if overlay is None:
        return entry, None
    gates = {g["name"]: g for g in entry["gates"]}
    for change in overlay["gates"]:
        name = change["name"]
        if change["action"] == "replace" and name not in gates:
            raise SystemExit(f"{LINES_OVERLAY}: {entry['line']} {name}: replace, but the tree "
                             "has no such gate")
        if change["action"] == "add" and name in gates:
            raise SystemExit(f"{LINES_OVERLAY}: {entry['line']} {name}: add, but the tree has "
                             "it already (regenerated from a newer tree? drop the entry)")
        if not change.get("prs") and not change.get("source"):
            raise SystemExit(f"{LINES_OVERLAY}: {name}: no provenance (prs or source)")
        if change["action"] not in ("add", "replace"):
            raise SystemExit(f"{LINES_OVERLAY}: {name}: action {change['action']!r}")
        specs = [dict({"minCompatibilityVersion": None}, **spec) for spec in change["specs"]]
        for spec in specs:
            if spec["minCompatibilityVersion"] is None:
                del spec["minCompatibilityVersion"]
        gates[name] = {"name": name, "goIdentifier": name, "component": change["component"],
                       "versioned": True, "specs": specs}
    return dict(entry, gates=[gates[n] for n in sorted(gates)]), overlay


def exactness_lines(exactness):
    lines = ["exactness:", f"  level: {exactness['level']}"]
    if exactness.get("reason"):
        lines.append(f"  reason: {quote(exactness['reason'])}")
    return lines


def tree_header(entry, overlay, counts, unversioned):
    source = entry["source"]
    tree = source["tree"]
    at = ", ".join(x for x in (tree.get("tag"), (tree.get("commit") or "")[:12]) if x)
    header = [
        f"# compatd's catalog of the kube-apiserver {entry['patch']} binary (release line "
        f"{entry['line']}), {entry['exactness']['level']}.",
        "#",
        "# GENERATED by catalog/generate.py (catalog/generate_lines.py) from a kubernetes/kubernetes",
        "# source tree; do not edit.",
        "#   python3 catalog/generate.py                  # from the committed extract",
        f"#   python3 catalog/generate.py --tree DIR --line {entry['line']} --patch {entry['patch']} "
        "...  # from the tree",
        "# Tree: " + (at or "not a git checkout") + (f"; {source['note']}" if source.get("note")
                                                      else ""),
        "#   pkg/features, staging/src/k8s.io/{apiserver,apiextensions-apiserver,controller-manager,",
        "#   client-go,component-base} feature files; staging/src/k8s.io/api (kinds, lifecycles);",
        "#   pkg/apis/*/install, pkg/controlplane, pkg/registry/*/rest, pkg/kubeapiserver.",
    ]
    if overlay:
        heading = overlay["source"].get("heading", "gate changes after the tree")
        header.append(f"# Overlay (data/lines_overlay.json): {len(overlay['gates'])} {heading}, "
                      f"from {overlay['source']['what']}:")
        for change in overlay["gates"]:
            header.append(f"#   {change['action']} {change['name']} ("
                          + (", ".join(change["prs"]) or change["source"]) + ")")
    gates = sum(counts.values())
    header.append(f"# {gates} gates (" + ", ".join(
        f"{c} {n}" for c, n in sorted(counts.items())) + ")"
        + (f"; {unversioned} unversioned" if unversioned else "") + ".")
    return header
