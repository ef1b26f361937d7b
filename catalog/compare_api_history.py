#!/usr/bin/env python3
"""Compares catalog/data/api_history.json with Pluto's and kubent's removal tables.

Prints, as Markdown, where FairwindsOps/pluto (versions.yaml) and doitintl/kube-no-trouble
(pkg/rules/rego/deprecated-*.rego) disagree with the history. The history's sources win
(catalog/README.md, "API history"); this only finds the differences to list there.

Usage:
  python3 catalog/compare_api_history.py --pluto-versions PLUTO/versions.yaml \\
      --kubent-rules KUBENT/pkg/rules/rego [--through 1.36]

Python 3 standard library only. Only Kubernetes' own APIs are compared (Pluto's
`component: k8s` entries; kubent's rules other than snapshot.storage.k8s.io).
"""

import argparse
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HISTORY = os.path.join(HERE, "data", "api_history.json")


def parse_pluto(text):
    """[{version, kind, deprecated-in, removed-in, replacement-api, component}] from the
    deprecated-versions list of Pluto's versions.yaml (a flat list of scalar maps)."""
    entries, current, inside = [], None, False
    for line in text.splitlines():
        if line.startswith("deprecated-versions:"):
            inside = True
            continue
        if inside and line and not line.startswith(" "):
            break
        if not inside:
            continue
        match = re.match(r"^\s*-\s+(\S[^:]*):\s*(.*)$", line)
        if match:
            current = {}
            entries.append(current)
        else:
            match = re.match(r"^\s+(\S[^:]*):\s*(.*)$", line)
        if match and current is not None:
            value = match.group(2).strip()
            current[match.group(1).strip()] = value.strip('"')
    return entries


KUBENT_RULE = re.compile(
    r'"(\w+)":\s*\{\s*"old":\s*\[([^\]]*)\],\s*"new":\s*"([^"]*)",\s*"since":\s*"([^"]*)"')


def parse_kubent(directory):
    """[{apiVersion, kind, removed, new, file}]; removed is None for deprecated-future."""
    rules = []
    for path in sorted(glob.glob(os.path.join(directory, "deprecated-*.rego"))):
        name = os.path.basename(path)
        match = re.match(r"deprecated-1-(\d+)\.rego$", name)
        removed = f"1.{match.group(1)}" if match else None
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for kind, old, new, since in KUBENT_RULE.findall(text):
            for api_version in re.findall(r'"([^"]+)"', old):
                rules.append({"apiVersion": api_version, "kind": kind, "removed": removed,
                              "new": new, "since": since, "file": name})
    return rules


def release(text):
    """"v1.16.0" -> "1.16"; "" -> None."""
    if not text:
        return None
    match = re.match(r"^v?(\d+)\.(\d+)", text)
    return f"{match.group(1)}.{match.group(2)}" if match else text


def gv(group, version):
    return f"{group}/{version}" if group else version


def replacement_gv(entry):
    r = entry["replacement"]
    return gv(r["group"], r["version"]) if r else None


def describe(entry):
    parts = []
    for field in ("deprecated", "removed"):
        value = entry[field]
        source = entry["valueSources"].get(field)
        parts.append(f"{field} {value or 'none'}"
                     + (f" ({source})" if value and source != "tag" else ""))
    parts.append(f"replacement {replacement_gv(entry) or 'none'}")
    guide = entry.get("guide")
    if guide and guide.get("replacement"):
        theirs = gv(guide["replacement"]["group"], guide["replacement"]["version"])
        if theirs != replacement_gv(entry):
            parts.append(f"the guide says migrate to {theirs}")
    if entry["typesDeletedIn"]:
        parts.append(f"types deleted in {entry['typesDeletedIn']}")
    return ", ".join(parts)


def version_key(text):
    return tuple(int(part) for part in text.split("."))


def missing_lines(tool, history, covered, through):
    """Kinds removed by `through` that the tool does not cover, resources first."""
    missing = [e for e in history["entries"]
               if e["removed"] and version_key(e["removed"]) <= version_key(through)
               and (gv(e["group"], e["version"]), e["kind"]) not in covered]
    resources = [e for e in missing if e["resource"] and not e.get("subresourceOf")]
    others = [e for e in missing if e not in resources]
    def names(entries):
        return ", ".join(f"`{gv(e['group'], e['version'])}` {e['kind']} ({e['removed']})"
                         for e in entries)
    return [f"- resources removed by {through} that {tool} does not list ({len(resources)}): "
            + names(resources),
            f"- other kinds removed by {through} that {tool} does not list ({len(others)}): "
            + names(others)]


def compare(history, pluto, kubent, through):
    by_key = {(gv(e["group"], e["version"]), e["kind"]): e for e in history["entries"]}
    out = []

    out.append("Pluto")
    seen = set()
    for p in pluto:
        if p.get("component") != "k8s":
            continue
        api_version, kind = p["version"], p["kind"]
        base = kind[:-4] if kind.endswith("List") and (api_version, kind[:-4]) in by_key else kind
        key = (api_version, base)
        label = f"`{api_version}` {kind}"
        if (api_version, kind) in seen:
            out.append(f"- {label}: listed twice")
            continue
        seen.add((api_version, kind))
        entry = by_key.get(key)
        if entry is None:
            out.append(f"- {label}: no such kind in any release tag")
            continue
        problems = []
        if base != kind:
            problems.append("a list kind (the history lists its item kind)")
        deprecated, removed = release(p.get("deprecated-in")), release(p.get("removed-in"))
        if deprecated != entry["deprecated"]:
            problems.append(f"deprecated-in {deprecated or 'none'}")
        if removed != entry["removed"]:
            problems.append(f"removed-in {removed or 'none'}")
        replacement = p.get("replacement-api") or None
        if replacement != replacement_gv(entry):
            problems.append(f"replacement-api {replacement or 'none'}")
        if problems:
            out.append(f"- {label}: Pluto {', '.join(problems)}; history {describe(entry)}")
    covered = {(p["version"], p["kind"]) for p in pluto if p.get("component") == "k8s"}
    out.extend(missing_lines("Pluto", history, covered, through))

    out.append("")
    out.append("kubent")
    k8s_rules = [r for r in kubent if not r["apiVersion"].startswith("snapshot.storage.k8s.io/")]
    for r in k8s_rules:
        label = f"`{r['apiVersion']}` {r['kind']} ({r['file']})"
        entry = by_key.get((r["apiVersion"], r["kind"]))
        if entry is None:
            out.append(f"- {label}: no such kind in any release tag")
            continue
        problems = []
        if r["removed"] != entry["removed"]:
            problems.append(f"removed {r['removed'] or 'not yet (future)'}")
        new = None if r["new"] == "<removed>" else r["new"]
        if new != replacement_gv(entry):
            problems.append(f"replacement {new or 'none'}")
        if problems:
            out.append(f"- {label}: kubent {', '.join(problems)}; history {describe(entry)}")
    covered = {(r["apiVersion"], r["kind"]) for r in k8s_rules}
    out.extend(missing_lines("kubent", history, covered, through))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pluto-versions", required=True, metavar="FILE")
    parser.add_argument("--kubent-rules", required=True, metavar="DIR")
    parser.add_argument("--through", default="1.36", metavar="1.N",
                        help="list kinds the tools miss only if removed by this release")
    args = parser.parse_args()
    with open(HISTORY, encoding="utf-8") as f:
        history = json.load(f)
    with open(args.pluto_versions, encoding="utf-8") as f:
        pluto = parse_pluto(f.read())
    kubent = parse_kubent(args.kubent_rules)
    if not pluto or not kubent:
        print("nothing parsed from Pluto or kubent", file=sys.stderr)
        return 1
    print("\n".join(compare(history, pluto, kubent, args.through)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
