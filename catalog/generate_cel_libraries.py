#!/usr/bin/env python3
"""Generates catalog/data/cel_libraries.json: the CEL libraries of each kube-apiserver line.

For every binary line 1.31-1.37, what kube-apiserver's CEL base environment holds
(k8s.io/apiserver pkg/cel/environment/base.go at the line's tag, v0.<minor>.0; for 1.37, whose
release tag is not reachable here, the pre-release tag v0.37.0-beta.0, recorded as such:
`apiserver.prerelease` is true and the tag is kept as it is): each library,
the Kubernetes release at which it entered the NewExpressions environment
(`IntroducedVersion`), the release it left it (`RemovedVersion`), the feature gate that
guards it, the library's version, and its functions, overloads and macros:

  - Kubernetes' own libraries from pkg/cel/library/*.go at the same tag (their
    `map[string][]cel.FunctionOpt` declarations; the Format library's constant formats;
    the versioned libraries' guarded declarations, `if lib.version >= N` around an append
    or an assignment: SemverLib, and Lists from 1.37, where base.go replaces
    `library.Lists(library.ListsVersion(0))` by `ListsVersion(1)`, which adds `includes`);
  - cel-go's from the cel-go version the tag's go.mod pins: ext/strings.go, ext/sets.go,
    ext/lists.go, ext/comprehensions.go (TwoVarComprehensions), cel/library.go (optional
    types), each cut at the library version base.go asks for (`if lib.version >= N`);
  - CEL's standard library (common/stdlib/standard.go; names through common/operators and
    common/overloads) and its macros (parser/macro.go, AllMacros), which every environment
    holds.

A function is listed by name, form (global or member: a member overload's first type is its
receiver) and argument count (the receiver not counted); `args` is null when an overload's
types are not a literal list the generator can count (then any count matches).

A library guarded by a feature gate records the gate's default at the line's binary version
(`gateDefault`, from pkg/features/kube_features.go at the tag): kube-apiserver's
NewExpressions environment holds it exactly when the gate is on, whatever the
min-compatibility version, and StoredExpressions always (environment.go,
filterAndBuildOpts). A library only one kind of expression has (MutatingAdmissionPolicy's
JSONPatch, for its mutations: compile.go's `hasPatchTypes`) records that as `scope`.

Each line also records `celEpoch`, the release base.go's comment names as CEL's real start
("CEL epoch was actually 1.23, but we artificially set it to 1.0"): compatd judges a target
older than its oldest line from that line's history down to the epoch, and none before it.

Usage:
  python3 catalog/generate_cel_libraries.py --apiserver DIR --cel-go DIR
        extract from the two repositories (clones or bare git directories with the tags)
        and write catalog/data/cel_libraries.json.
  python3 catalog/generate_cel_libraries.py --check
        offline: check the committed file's consistency and canonical form; exit 1 if not.

Python 3 standard library only; the output is deterministic (sorted, no dates).
"""

import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "catalog", "data", "cel_libraries.json")
LINES = ["1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]
# Lines whose release tag is not reachable: the pre-release tag read instead. The data says so
# (apiserver.prerelease), and compatd names the tag wherever it names the source.
PRERELEASE_TAGS = {"1.37": "v0.37.0-beta.0"}

# Where each Kubernetes library of base.go declares its functions (pkg/cel/library/): the
# file and the declaration map's name (a list: the first one the file has; 1.37's Lists moved
# its map into a versioned `declarations()` method).
K8S_LIBRARIES = {
    "Authz": ("authz.go", "authzLibraryDecls"),
    "AuthzSelectors": ("authz.go", "authzSelectorsLibraryDecls"),
    "URLs": ("urls.go", "urlLibraryDecls"),
    "Regex": ("regex.go", "regexLibraryDecls"),
    "Lists": ("lists.go", ["listsLibraryDecls", "decls"]),
    "Quantity": ("quantity.go", "quantityLibraryDecls"),
    "IP": ("ip.go", "ipLibraryDecls"),
    "CIDR": ("cidr.go", "cidrLibraryDecls"),
    "Format": ("format.go", "formatLibraryDecls"),
    "SemverLib": ("semverlib.go", "fnOpts"),
    "JSONPatch": ("jsonpatch.go", "jsonPatchLibraryDecls"),
}
# Libraries outside base.go that one kind of expression adds (pkg/admission/plugin/cel/
# compile.go's `hasPatchTypes`, which MutatingAdmissionPolicy's mutations compile with: the
# JSONPatch library), by the scope compatd calls that kind of expression.
SCOPED_OPTIONS = [("mutations", "pkg/admission/plugin/cel/compile.go", "hasPatchTypes")]
# cel-go's libraries: the file and the receiver type of its CompileOptions.
CEL_GO_LIBRARIES = {
    "ext.Strings": ("ext/strings.go", "stringLib"),
    "ext.Sets": ("ext/sets.go", "setsLib"),
    "ext.Lists": ("ext/lists.go", "listsLib"),
    "ext.TwoVarComprehensions": ("ext/comprehensions.go", "compreV2Lib"),
    "cel.OptionalTypes": ("cel/library.go", "optionalLib"),
}


def git_show(repo, tag, path):
    return subprocess.run(["git", "-C", repo, "show", "%s:%s" % (tag, path)], check=True,
                          capture_output=True, text=True).stdout


# ---- a small reader of Go source: strings and comments out of the way, brackets matched.

def strip_comments(src):
    """The source with comments blanked (same length; strings kept)."""
    out = []
    i = 0
    n = len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c in "\"`'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if (src[j] == "\\" and c != "`") else 1
            out.append(src[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching(src, open_index):
    """Index of the bracket closing the one at open_index (strings skipped)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[src[open_index]]]
    i = open_index + 1
    while i < len(src):
        c = src[i]
        if c in "\"`'":
            j = i + 1
            while j < len(src) and src[j] != c:
                j += 2 if (src[j] == "\\" and c != "`") else 1
            i = j + 1
            continue
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if c != stack.pop():
                raise ValueError("unbalanced brackets at %d" % i)
            if not stack:
                return i
        i += 1
    raise ValueError("unclosed bracket at %d" % open_index)


def split_top(src):
    """src split at its top-level commas, empty parts dropped."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(src):
        c = src[i]
        if c in "\"`'":
            j = i + 1
            while j < len(src) and src[j] != c:
                j += 2 if (src[j] == "\\" and c != "`") else 1
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(src[start:i].strip())
            start = i + 1
        i += 1
    parts.append(src[start:].strip())
    return [p for p in parts if p]


def resolve(token, consts):
    """A Go string literal or a constant's name (pkg.Name or Name) as its value, else None."""
    token = token.strip()
    m = re.fullmatch(r'"((?:[^"\\]|\\.)*)"', token)
    if m:
        return m.group(1)
    return consts.get(token) or consts.get(token.split(".")[-1])


def go_consts(src, prefix=""):
    """Every `Name = "value"` of a source file (const blocks and single consts)."""
    out = {}
    for m in re.finditer(r'^\s*(?:const\s+)?([A-Za-z_]\w*)\s*(?:string\s*)?=\s*"([^"]*)"',
                         src, re.M):
        out[prefix + m.group(1)] = m.group(2)
    return out


OVERLOAD = re.compile(r"\b(?:cel\.|decls\.)?(MemberOverload|Overload)\(")
FUNCTION = re.compile(r"(?<!func )\b(?:cel\.)?Function\(|(?<!func )\bfunction\(")
MACRO = re.compile(r"\b(?:cel\.|parser\.)?(ReceiverMacro|GlobalMacro|NewReceiverMacro|NewGlobalMacro)\(")
# `lib.version` in cel-go and most Kubernetes libraries, `l.version` in 1.37's Lists.
GUARD = re.compile(r"\bif\s+[a-z]\w*\.version\s*>=\s*(\d+)\s*\{")


def overload_shape(src, open_paren):
    """(member, args) of the overload call whose '(' is at open_paren; args None if unknown."""
    close = matching(src, open_paren)
    params = split_top(src[open_paren + 1:close])
    kind = "member" if src[:open_paren].endswith("MemberOverload") else "global"
    args = None
    if len(params) >= 2:
        types = params[1]
        m = re.match(r"\[\]\*(?:cel\.|types\.)?Type\{", types)
        if m:
            inner = types[m.end():types.rindex("}")]
            args = len(split_top(inner))
        elif types.startswith("argTypes("):
            args = len(split_top(types[len("argTypes("):types.rindex(")")]))
    if args is not None and kind == "member":
        args -= 1
    return kind == "member", args


def guards_at(src, index):
    """The version guards (`if lib.version >= N {`) enclosing index: their largest N, or 0."""
    best = 0
    for m in GUARD.finditer(src, 0, index):
        close = matching(src, m.end() - 1)
        if close > index:
            best = max(best, int(m.group(1)))
    return best


def read_functions(body, consts, base_offset_src=None):
    """Functions declared with Function(name, overloads...) in body, each with its guard."""
    out = []
    for m in FUNCTION.finditer(body):
        open_paren = m.end() - 1
        close = matching(body, open_paren)
        params = split_top(body[open_paren + 1:close])
        if not params:
            continue
        name = resolve(params[0], consts)
        if name is None:
            raise ValueError("cannot resolve function name %r" % params[0])
        guard = guards_at(body, m.start())
        shapes = []
        for o in OVERLOAD.finditer(body, open_paren, close):
            shapes.append(overload_shape(body, o.end() - 1))
        out.append((name, guard, shapes))
    return out


def read_macros(body, consts):
    out = []
    for m in MACRO.finditer(body):
        open_paren = m.end() - 1
        params = split_top(body[open_paren + 1:matching(body, open_paren)])
        name = resolve(params[0], consts)
        if name is None:
            raise ValueError("cannot resolve macro name %r" % params[0])
        receiver = "Receiver" in m.group(1)
        args = int(params[1]) if len(params) > 1 and params[1].isdigit() else None
        out.append((name, guards_at(body, m.start()), receiver, args))
    return out


def method_body(src, receiver, method):
    m = re.search(r"func \((?:\w+ )?\*?%s\) %s\(\)[^{]*\{" % (re.escape(receiver), method), src)
    if not m:
        raise ValueError("no %s.%s" % (receiver, method))
    return src[m.end() - 1:matching(src, m.end() - 1) + 1]


def read_decl_map(src, var):
    """The functions of a `var := map[string][]cel.FunctionOpt{...}` literal, plus any
    `var["name"] = append(var["name"], ...)` additions and `var["name"] =
    []cel.FunctionOpt{...}` assignments, each with its version guard. `var` may be a list of
    names: the first one src declares is read."""
    for name in ([var] if isinstance(var, str) else var):
        m = re.search(r"\b%s\s*:?=\s*map\[string\]\[\]cel\.FunctionOpt\{" % re.escape(name),
                      src)
        if m:
            var = name
            break
    else:
        raise ValueError("no declaration map %s" % var)
    open_brace = m.end() - 1
    close = matching(src, open_brace)
    body = src[open_brace + 1:close]
    out = []
    for entry in split_top(body):
        km = re.match(r'"([^"]+)"\s*:', entry)
        if not km:
            raise ValueError("unexpected entry in %s: %.60s" % (var, entry))
        shapes = [overload_shape(entry, o.end() - 1) for o in OVERLOAD.finditer(entry)]
        out.append((km.group(1), 0, shapes))
    for am in re.finditer(r'\b%s\["([^"]+)"\]\s*=\s*append\(' % re.escape(var), src):
        close = matching(src, am.end() - 1)
        shapes = [overload_shape(src, o.end() - 1) for o in OVERLOAD.finditer(src, am.end(), close)]
        out.append((am.group(1), guards_at(src, am.start()), shapes))
    for am in re.finditer(r'\b%s\["([^"]+)"\]\s*=\s*\[\]cel\.FunctionOpt\{' % re.escape(var), src):
        close = matching(src, am.end() - 1)
        shapes = [overload_shape(src, o.end() - 1) for o in OVERLOAD.finditer(src, am.end(), close)]
        out.append((am.group(1), guards_at(src, am.start()), shapes))
    return out


def shapes_to_json(functions, version):
    """Merges (name, guard, shapes) at `version` into sorted [{name, member, args}]."""
    merged = {}
    for name, guard, shapes in functions:
        # Operators (_+_, _?._, _[?_]) and internal helpers (@..., cel.@mapInsert) are not
        # names an expression calls; the reader sees optional syntax as syntax.
        if guard > version or not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", name):
            continue
        for member, args in shapes:
            merged.setdefault((name, member), set()).add(-1 if args is None else args)
    out = []
    for (name, member), argset in sorted(merged.items()):
        args = None if -1 in argset else sorted(argset)
        out.append({"name": name, "member": member, "args": args})
    return out


def macros_to_json(macros, version):
    seen = set()
    for name, guard, receiver, args in macros:
        if guard <= version:
            seen.add((name, receiver, args))
    return [{"name": n, "receiver": r, "args": a}
            for n, r, a in sorted(seen, key=lambda t: (t[0], t[1], -1 if t[2] is None else t[2]))]


# ---- base.go

VERSION = re.compile(r"version\.MajorMinor\((\d+),\s*(\d+)\)")


def read_base(src):
    """base.go's baseOpts entries: [{introduced, removed, gate, libraries: [call text]}]."""
    # 1.31 spells it baseOptsWithoutStrictCost (baseOpts appends StrictCostOpt, no library).
    m = re.search(r"var baseOpts(?:WithoutStrictCost)? = \[\]VersionedOptions\{", src)
    body = src[m.end():matching(src, m.end() - 1)]
    return [read_entry(entry) for entry in split_top(body) if entry.startswith("{")]


def read_scoped(src, var):
    """The entry of a `var NAME = environment.VersionedOptions{...}`, or None if absent."""
    m = re.search(r"var %s = environment\.VersionedOptions\{" % re.escape(var), src)
    if not m:
        return None
    return read_entry(src[m.end() - 1:matching(src, m.end() - 1) + 1])


def read_entry(entry):
    """One VersionedOptions literal: {introduced, removed, gate, options: [call text]}."""
    intro = re.search(r"IntroducedVersion:\s*" + VERSION.pattern, entry)
    removed = re.search(r"RemovedVersion:\s*" + VERSION.pattern, entry)
    gate = re.search(r"genericfeatures\.(\w+)", entry)
    libs = []
    env = re.search(r"EnvOptions:\s*\[\]cel\.EnvOption\{", entry)
    if env:
        for opt in split_top(entry[env.end():matching(entry, env.end() - 1)]):
            libs.append(opt)
    return {
        "introduced": "%s.%s" % intro.groups(),
        "removed": "%s.%s" % removed.groups() if removed else None,
        "gate": gate.group(1) if gate else None,
        "options": libs,
    }


def gate_default(src, gate, line):
    """The default of `gate` at binary `line` in pkg/features/kube_features.go: the spec of
    the latest version at or below the line, or the single unversioned spec (1.31)."""
    m = re.search(r"^\s*%s:\s*\{" % re.escape(gate), src, re.M)
    if not m:
        raise ValueError("kube_features.go: no gate %s" % gate)
    body = src[m.end() - 1:matching(src, m.end() - 1) + 1]
    specs = re.findall(r'(?:Version:\s*version\.MustParse\("(\d+)\.(\d+)"\),\s*)?'
                       r'Default:\s*(true|false)', body)
    minor = int(line.split(".")[1])
    best = None
    for major, spec_minor, default in specs:
        if not major or int(spec_minor) <= minor:
            best = default == "true"
    if best is None:
        raise ValueError("kube_features.go: %s has no spec at %s" % (gate, line))
    return best


def library_of_option(option):
    """(library key, version or None) of an EnvOption in base.go, or None for a non-library."""
    o = re.sub(r"\s+", "", option)
    m = re.fullmatch(r"(?:(?:environment\.)?UnversionedLib\()?library\.(\w+)(?:\(\))?\)?", o)
    if m and m.group(1) in K8S_LIBRARIES:
        return ("kubernetes." + m.group(1), None)
    m = re.fullmatch(r"library\.(\w+)\(library\.\w+Version\((\d+)\)\)", o)
    if m and m.group(1) in K8S_LIBRARIES:
        return ("kubernetes." + m.group(1), int(m.group(2)))
    m = re.fullmatch(r"ext\.(\w+)\(ext\.\w+Version\((\d+)\)\)", o)
    if m:
        return ("ext." + m.group(1), int(m.group(2)))
    m = re.fullmatch(r"(?:UnversionedLib\()?ext\.(\w+)(?:\(\))?\)?", o)
    if m:
        return ("ext." + m.group(1), None)
    if o == "cel.OptionalTypes()":
        return ("cel.OptionalTypes", None)
    return None


EPOCH = re.compile(r"CEL epoch was actually (\d+)\.(\d+)")


def cel_epoch(base):
    """The release base.go's comment names as CEL's real start ("1.23")."""
    m = EPOCH.search(base)
    if not m:
        raise ValueError("base.go: no \"CEL epoch was actually\" comment")
    return "%s.%s" % m.groups()


def extract_line(apiserver, celgo, line):
    tag = PRERELEASE_TAGS.get(line, "v0.%s.0" % line.split(".")[1])
    base = git_show(apiserver, tag, "pkg/cel/environment/base.go")
    gomod = git_show(apiserver, tag, "go.mod")
    celgo_version = re.search(r"github\.com/google/cel-go (v[\d.]+)", gomod).group(1)
    commit = subprocess.run(["git", "-C", apiserver, "rev-list", "-n1", tag], check=True,
                            capture_output=True, text=True).stdout.strip()
    celgo_commit = subprocess.run(["git", "-C", celgo, "rev-list", "-n1", celgo_version],
                                  check=True, capture_output=True, text=True).stdout.strip()

    operators = go_consts(git_show(celgo, celgo_version, "common/operators/operators.go"))
    overloads = go_consts(git_show(celgo, celgo_version, "common/overloads/overloads.go"))
    consts = {}
    consts.update(overloads)
    consts.update(operators)

    libraries = []
    # CEL's standard library and macros: in every environment.
    std = strip_comments(git_show(celgo, celgo_version, "common/stdlib/standard.go"))
    std_functions = [f for f in read_functions(std, consts)
                     if re.fullmatch(r"[A-Za-z][\w.]*", f[0])]
    macro_src = strip_comments(git_show(celgo, celgo_version, "parser/macro.go"))
    macro_consts = dict(consts)
    all_macros = re.search(r"AllMacros = \[\]Macro\{([^}]*)\}", macro_src).group(1)
    std_macros = []
    for name in split_top(all_macros):
        d = re.search(r"\b%s = (NewReceiverMacro|NewGlobalMacro)\(([^,]+),\s*(\d+)" % name,
                      macro_src)
        std_macros.append((resolve(d.group(2), macro_consts), 0,
                           d.group(1) == "NewReceiverMacro", int(d.group(3))))
    libraries.append({
        "name": "cel.stdlib", "version": None, "introduced": "1.0", "removed": None,
        "gate": None, "functions": shapes_to_json(std_functions, 0),
        "macros": macros_to_json(std_macros, 0), "syntax": [],
    })

    entries = [(e, None) for e in read_base(strip_comments(base))]
    for scope, path, var in SCOPED_OPTIONS:
        scoped = read_scoped(strip_comments(git_show(apiserver, tag, path)), var)
        if scoped is not None:
            entries.append((scoped, scope))
    features = strip_comments(git_show(apiserver, tag, "pkg/features/kube_features.go"))
    for entry, scope in entries:
        for option in entry["options"]:
            lib = library_of_option(option)
            if lib is None:
                continue
            key, version = lib
            functions, macros, syntax = [], [], []
            if key.startswith("kubernetes."):
                file, var = K8S_LIBRARIES[key.split(".", 1)[1]]
                src = strip_comments(git_show(apiserver, tag, "pkg/cel/library/" + file))
                functions = read_decl_map(src, var)
                if key == "kubernetes.Format":
                    cm = re.search(r"var ConstantFormats[^=]*= map\[string\]\*?[\w.]+\{", src)
                    for part in split_top(src[cm.end():matching(src, cm.end() - 1)]):
                        functions.append(("format." + re.match(r'"([^"]+)"', part).group(1),
                                          0, [(False, 0)]))
            else:
                file, receiver = CEL_GO_LIBRARIES[key]
                src = strip_comments(git_show(celgo, celgo_version, file))
                body = method_body(src, receiver, "CompileOptions")
                pkg_consts = dict(consts)
                pkg_consts.update(go_consts(src))
                functions = read_functions(body, pkg_consts)
                macros = read_macros(body, pkg_consts)
                if re.search(r"EnableOptionalSyntax\(true\)|enableOptionalSyntax\(\)", body):
                    syntax = ["?.", "[?", "?", "{?"]
            effective = 1 << 30 if version is None else version
            libraries.append({
                "name": key, "version": version, "introduced": entry["introduced"],
                "removed": entry["removed"], "gate": entry["gate"], "scope": scope,
                "gateDefault": (gate_default(features, entry["gate"], line)
                                if entry["gate"] else None),
                "functions": [f for f in shapes_to_json(functions, effective)
                              if not f["name"].startswith("@")],
                "macros": macros_to_json(macros, effective), "syntax": syntax,
            })
    return {
        "line": line,
        "apiserver": {"tag": tag, "commit": commit,
                      "prerelease": True if line in PRERELEASE_TAGS else None},
        "celEpoch": cel_epoch(base),
        "celGo": {"version": celgo_version, "commit": celgo_commit},
        "libraries": libraries,
    }


def without_nulls(value):
    """The document with null members left out (absent, as catalog.proto reads them)."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def dump(doc):
    return json.dumps(without_nulls(doc), indent=1, sort_keys=True) + "\n"


def check(doc):
    """Consistency of a cel_libraries.json document; a list of problems."""
    problems = []
    lines = [l["line"] for l in doc.get("lines", [])]
    if lines != LINES:
        problems.append("lines %s, expected %s" % (lines, LINES))
    for l in doc.get("lines", []):
        tag = l.get("apiserver", {}).get("tag", "")
        prerelease = bool(l.get("apiserver", {}).get("prerelease"))
        if prerelease != bool(re.search(r"-(alpha|beta|rc)\.\d+$", tag)):
            problems.append("%s: tag %s and prerelease %s disagree" % (l["line"], tag, prerelease))
        if not re.fullmatch(r"1\.\d+", l.get("celEpoch", "")):
            problems.append("%s: no celEpoch" % l["line"])
        names = [lib["name"] for lib in l["libraries"]]
        if names[:1] != ["cel.stdlib"]:
            problems.append("%s: the standard library is not first" % l["line"])
        for lib in l["libraries"]:
            major, minor = (int(x) for x in lib["introduced"].split("."))
            if major != 1 or minor > int(l["line"].split(".")[1]):
                problems.append("%s: %s introduced at %s, after the line" %
                                (l["line"], lib["name"], lib["introduced"]))
            if not lib["functions"] and not lib["macros"]:
                problems.append("%s: %s declares nothing" % (l["line"], lib["name"]))
            for f in lib["functions"]:
                if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*", f["name"]):
                    problems.append("%s: bad function name %r" % (l["line"], f["name"]))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apiserver", help="kubernetes/apiserver clone or bare git dir")
    parser.add_argument("--cel-go", dest="cel_go", help="google/cel-go clone or bare git dir")
    parser.add_argument("--check", action="store_true",
                        help="check the committed file offline")
    args = parser.parse_args()
    if args.check:
        if args.apiserver or args.cel_go:
            parser.error("--check works offline, from the committed file")
        with open(OUTPUT, encoding="utf-8") as f:
            text = f.read()
        doc = json.loads(text)
        problems = check(doc)
        if dump(doc) != text:
            problems.append("%s is not in canonical form (rerun the generator)" % OUTPUT)
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    if not args.apiserver or not args.cel_go:
        parser.error("--apiserver and --cel-go are needed to generate")
    doc = {
        "comment": "Generated by catalog/generate_cel_libraries.py from kubernetes/apiserver "
                   "pkg/cel (base.go, library/) at each line's tag and google/cel-go at the "
                   "version its go.mod pins. Do not edit.",
        "lines": [extract_line(args.apiserver, args.cel_go, line) for line in LINES],
    }
    problems = check(doc)
    if problems:
        for p in problems:
            print(p, file=sys.stderr)
        return 1
    with open(OUTPUT, "w", encoding="utf-8") as f:
        f.write(dump(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
