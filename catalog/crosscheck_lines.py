"""Cross-checks the release lines' gates (data/lines_extract.json) with independent lists.

* data/crosscheck/gates-by-line.json and gates-removed-before-1.36.json: the project's
  shared release-lines data (every gate of every 1.31-1.35 binary, and the 56 gates some
  1.31-1.35 binary has and 1.36 does not), reduced to the facts compared here.
* Kubernetes' generated test/compatibility_lifecycle/reference/versioned_feature_list.yaml
  of 1.33, 1.34 and 1.35 (featureList in the extract, read from the fork copy at the line's
  fork commit; 1.31 and 1.32 have no such file there).

Every difference found must be one of KNOWN (each with its reason, also listed in
catalog/README.md, "Differences kept"); any other fails the check.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CROSSCHECK = os.path.join(HERE, "data", "crosscheck")

# (source, line, gate, what) -> reason. `what`: "component", "specs", "missing", "extra".
KNOWN = {
    ("gates-by-line", "1.31", "MutatingAdmissionPolicy", "component"):
        "defined by k8s.io/apiserver (its const) but registered only through kube's map as "
        "genericfeatures.MutatingAdmissionPolicy; the catalog names the defining component "
        "(kube-apiserver), the JSON the registering file (kube)",
    ("gates-by-line", "1.31", "ContextualLogging", "specs"):
        "the JSON has default null: component-base writes `Default: contextualLoggingDefault`, "
        "a const that is true in the same file",
    ("gates-by-line", "1.32", "ContextualLogging", "specs"):
        "the JSON has default null: component-base writes `Default: contextualLoggingDefault`, "
        "a const that is true in the same file",
}
# Differences from the fork's generated feature list that come from the fork itself (it is
# at a later patch, with OpenShift's carries): reason per gate, any line.
FORK_LIST_KNOWN = {
    "NodeLogQuery": "the fork's carry: default true where upstream has false",
}


def spec_tuple(spec):
    return [spec["version"], spec["default"], spec["lockToDefault"], spec["preRelease"]]


def load(name):
    with open(os.path.join(CROSSCHECK, name), encoding="utf-8") as f:
        return json.load(f)


def compare(extract):
    """[(source, line, gate, what, detail)] of every difference."""
    diffs = []
    by_line = load("gates-by-line.json")["lines"]
    removed = load("gates-removed-before-1.36.json")["gates"]
    ours = {}
    for entry in extract["lines"]:
        line = entry["line"]
        gates = {g["name"]: g for g in entry["gates"]}
        ours[line] = gates
        ref = by_line.get(line)
        if ref is None:
            continue
        for name in sorted(set(gates) | set(ref)):
            if name not in ref:
                diffs.append(("gates-by-line", line, name, "extra", "not in the JSON"))
                continue
            if name not in gates:
                diffs.append(("gates-by-line", line, name, "missing", "only in the JSON"))
                continue
            component, specs = ref[name]
            if component != gates[name]["component"]:
                diffs.append(("gates-by-line", line, name, "component",
                              f"{gates[name]['component']} vs {component}"))
            mine = [spec_tuple(s) for s in gates[name]["specs"]]
            if mine != specs:
                diffs.append(("gates-by-line", line, name, "specs", f"{mine} vs {specs}"))
        feature_list = entry.get("featureList")
        if feature_list is not None:
            versioned = {n: [spec_tuple(s) for s in g["specs"]]
                         for n, g in gates.items() if g["versioned"]}
            go_names = {g["goIdentifier"].split(".")[-1]: n for n, g in gates.items()}
            for listed in sorted(feature_list):
                name = go_names.get(listed, listed)
                if name not in versioned:
                    diffs.append(("feature-list", line, listed, "extra",
                                  "in the generated list, not a versioned gate here"))
                elif versioned[name] != feature_list[listed]:
                    diffs.append(("feature-list", line, name, "specs",
                                  f"{versioned[name]} vs {feature_list[listed]}"))
            listed_names = {go_names.get(n, n) for n in feature_list}
            for name in sorted(set(versioned) - listed_names):
                diffs.append(("feature-list", line, name, "missing",
                              "a versioned gate here, not in the generated list"))
    lines = sorted(ours, key=lambda v: tuple(int(p) for p in v.split(".")))
    for gate in removed:
        having = [line for line in lines if gate["name"] in ours[line]]
        if not having or having[0] != gate["firstLine"] or having[-1] != gate["lastLine"]:
            diffs.append(("gates-removed", "-", gate["name"], "lines",
                          f"{having[:1]}..{having[-1:]} vs {gate['firstLine']}..{gate['lastLine']}"))
            continue
        last = ours[gate["lastLine"]][gate["name"]]
        if [spec_tuple(s) for s in last["specs"]] != gate["specs"]:
            diffs.append(("gates-removed", gate["lastLine"], gate["name"], "specs", ""))
    return diffs


CLIENT_GO_REASON = ("client-go's gates have client-go's own types (known_features.go), which "
                    "hack/update-featuregates.sh does not list; kube-apiserver registers them "
                    "through kube's clientAdapter")


def known_reason(diff, extract):
    source, line, name, what, _ = diff
    if source == "feature-list" and what == "missing":
        entry = next(e for e in extract["lines"] if e["line"] == line)
        gate = next((g for g in entry["gates"] if g["name"] == name), None)
        if gate is not None and gate["component"] == "client-go":
            return CLIENT_GO_REASON
    if (source, line, name, what) in KNOWN:
        return KNOWN[(source, line, name, what)]
    if source == "feature-list" and name in FORK_LIST_KNOWN:
        return FORK_LIST_KNOWN[name]
    return None


def main(extract):
    diffs = compare(extract)
    unknown = 0
    for diff in diffs:
        reason = known_reason(diff, extract)
        tag = "kept" if reason else "UNEXPLAINED"
        unknown += reason is None
        print(f"{tag}: {diff[0]} {diff[1]} {diff[2]} ({diff[3]}): {diff[4]}"
              + (f"\n    why: {reason}" if reason else ""))
    counts = ", ".join(f"{e['line']}: {len(e['gates'])}" for e in extract["lines"])
    print(f"gates per line: {counts}; {len(diffs)} differences, {unknown} unexplained")
    return 1 if unknown else 0
