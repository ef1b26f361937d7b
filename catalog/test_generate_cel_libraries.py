"""Unit tests of catalog/generate_cel_libraries.py's Go reading, on snippets written here."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import generate_cel_libraries as g  # noqa: E402

LIB = '''
func (lib *demoLib) CompileOptions() []cel.EnvOption {
	opts := []cel.EnvOption{
		cel.Function("plain",
			cel.MemberOverload("s_plain", []*cel.Type{cel.StringType}, cel.StringType),
			cel.MemberOverload("s_plain_int", []*cel.Type{cel.StringType, cel.IntType}, cel.StringType)),
		cel.Function(namedFunc, cel.Overload("g", []*cel.Type{cel.ListType(cel.IntType), cel.IntType}, cel.IntType)),
	}
	if lib.version >= 2 {
		// cel.Function("commented", ...) is not a declaration
		opts = append(opts, cel.Function("later", cel.Overload("l", []*cel.Type{}, cel.IntType)))
		opts = append(opts, cel.Macros(cel.ReceiverMacro("mac", 3, expand)))
	} else {
		opts = append(opts, cel.Function("older", cel.Overload("o", []*cel.Type{cel.IntType}, cel.IntType)))
	}
	return opts
}
'''


class GoReadingTest(unittest.TestCase):
    def setUp(self):
        self.body = g.method_body(g.strip_comments(LIB), "demoLib", "CompileOptions")
        self.consts = {"namedFunc": "ns.named"}

    def test_functions_with_forms_and_counts(self):
        fns = g.read_functions(self.body, self.consts)
        self.assertEqual(g.shapes_to_json(fns, 0), [
            {"name": "ns.named", "member": False, "args": [2]},
            {"name": "older", "member": False, "args": [1]},
            {"name": "plain", "member": True, "args": [0, 1]},
        ])

    def test_version_guards(self):
        fns = g.read_functions(self.body, self.consts)
        names = [f["name"] for f in g.shapes_to_json(fns, 2)]
        self.assertIn("later", names)
        self.assertNotIn("commented", names)
        self.assertEqual(g.macros_to_json(g.read_macros(self.body, self.consts), 1), [])
        self.assertEqual(g.macros_to_json(g.read_macros(self.body, self.consts), 2),
                         [{"name": "mac", "receiver": True, "args": 3}])

    def test_decl_map_and_appends(self):
        src = '''
var demoDecls = map[string][]cel.FunctionOpt{
	"one": {
		cel.Overload("one", []*cel.Type{cel.StringType}, cel.BoolType),
	},
	"two": {cel.MemberOverload("two", []*cel.Type{T, cel.StringType, cel.IntType}, T)},
}
func f() {
	if lib.version >= 1 {
		demoDecls["one"] = append(demoDecls["one"], cel.Overload("one2", []*cel.Type{cel.StringType, cel.BoolType}, cel.BoolType))
	}
}
'''
        fns = g.read_decl_map(src, "demoDecls")
        self.assertEqual(g.shapes_to_json(fns, 0), [
            {"name": "one", "member": False, "args": [1]},
            {"name": "two", "member": True, "args": [2]},
        ])
        self.assertEqual(g.shapes_to_json(fns, 1)[0]["args"], [1, 2])

    def test_base_entries(self):
        src = '''
var baseOpts = []VersionedOptions{
	{
		IntroducedVersion: version.MajorMinor(1, 0),
		RemovedVersion:    version.MajorMinor(1, 29),
		EnvOptions: []cel.EnvOption{
			ext.Strings(ext.StringsVersion(0)),
		},
	},
	{
		IntroducedVersion: version.MajorMinor(1, 31),
		FeatureEnabled: func() bool { return utilfeature.DefaultFeatureGate.Enabled(genericfeatures.Gate) },
		EnvOptions: []cel.EnvOption{
			UnversionedLib(library.IP),
			cel.CrossTypeNumericComparisons(true),
		},
	},
	StrictCostOpt,
}
'''
        entries = g.read_base(src)
        self.assertEqual([(e["introduced"], e["removed"], e["gate"]) for e in entries],
                         [("1.0", "1.29", None), ("1.31", None, "Gate")])
        self.assertEqual([g.library_of_option(o) for o in entries[1]["options"]],
                         [("kubernetes.IP", None), None])
        self.assertEqual(g.library_of_option(entries[0]["options"][0]), ("ext.Strings", 0))

    def test_versioned_decl_method_with_guarded_assignment(self):
        # lists.go at v0.37.0-beta.0: the map moved into declarations(), and ListsVersion(1)
        # assigns `includes` under `if l.version >= 1`.
        src = '''
func (l *lists) declarations() map[string][]cel.FunctionOpt {
	decls := map[string][]cel.FunctionOpt{
		"indexOf": {
			cel.MemberOverload("list_a_index_of_int", []*cel.Type{cel.ListType(paramA), paramA}, cel.IntType),
		},
	}
	if l.version >= 1 {
		decls["includes"] = []cel.FunctionOpt{
			cel.MemberOverload("list_includes_dyn_dyn", []*cel.Type{cel.DynType, cel.DynType}, cel.BoolType),
		}
	}
	return decls
}
'''
        fns = g.read_decl_map(src, ["listsLibraryDecls", "decls"])
        self.assertEqual([f["name"] for f in g.shapes_to_json(fns, 0)], ["indexOf"])
        self.assertEqual(g.shapes_to_json(fns, 1), [
            {"name": "includes", "member": True, "args": [1]},
            {"name": "indexOf", "member": True, "args": [1]},
        ])

    def test_versioned_kubernetes_libraries(self):
        self.assertEqual(g.library_of_option("library.Lists(library.ListsVersion(1))"),
                         ("kubernetes.Lists", 1))
        self.assertEqual(g.library_of_option("library.Lists(library.ListsVersion(0))"),
                         ("kubernetes.Lists", 0))
        self.assertEqual(g.library_of_option("library.SemverLib(library.SemverVersion(1))"),
                         ("kubernetes.SemverLib", 1))
        self.assertEqual(g.library_of_option("UnversionedLib(library.Lists)"),
                         ("kubernetes.Lists", None))

    def test_cel_epoch(self):
        self.assertEqual(g.cel_epoch("// CEL epoch was actually 1.23, but we artificially set"),
                         "1.23")
        with self.assertRaises(ValueError):
            g.cel_epoch("var baseOpts = []VersionedOptions{}")

    def test_prerelease_tags_are_marked(self):
        self.assertEqual(g.PRERELEASE_TAGS["1.37"], "v0.37.0-beta.0")
        line = {"line": "1.37", "celEpoch": "1.23", "libraries": [],
                "apiserver": {"tag": "v0.37.0-beta.0", "commit": "c"}}
        self.assertTrue(any("prerelease" in p for p in g.check({"lines": [line]})))
        line["apiserver"]["prerelease"] = True
        self.assertFalse(any("prerelease" in p for p in g.check({"lines": [line]})))

    def test_committed_file_is_marked_as_prerelease_for_1_37(self):
        import json
        with open(g.OUTPUT, encoding="utf-8") as f:
            doc = json.load(f)
        by_line = {l["line"]: l for l in doc["lines"]}
        self.assertEqual(by_line["1.37"]["apiserver"]["tag"], "v0.37.0-beta.0")
        self.assertTrue(by_line["1.37"]["apiserver"]["prerelease"])
        self.assertNotIn("prerelease", by_line["1.36"]["apiserver"])

    def test_gate_default_at_the_line(self):
        # pkg/features/kube_features.go: unversioned at v0.31.0, versioned from v0.32.0.
        unversioned = "\tAuthorizeWithSelectors: {Default: false, PreRelease: featuregate.Alpha},\n"
        self.assertFalse(g.gate_default(unversioned, "AuthorizeWithSelectors", "1.31"))
        versioned = '''
\tAuthorizeWithSelectors: {
\t\t{Version: version.MustParse("1.31"), Default: false, PreRelease: featuregate.Alpha},
\t\t{Version: version.MustParse("1.32"), Default: true, PreRelease: featuregate.Beta},
\t},
'''
        self.assertFalse(g.gate_default(versioned, "AuthorizeWithSelectors", "1.31"))
        self.assertTrue(g.gate_default(versioned, "AuthorizeWithSelectors", "1.32"))
        with self.assertRaises(ValueError):
            g.gate_default(versioned, "NoSuchGate", "1.32")

    def test_scoped_options(self):
        # pkg/admission/plugin/cel/compile.go from v0.32.0 (absent at v0.31.0).
        src = '''
var hasPatchTypes = environment.VersionedOptions{
\tIntroducedVersion: version.MajorMinor(1, 0),
\tEnvOptions: []cel.EnvOption{
\t\tcommon.ResolverEnvOption(&mutation.DynamicTypeResolver{}),
\t\tenvironment.UnversionedLib(library.JSONPatch),
\t},
}
'''
        entry = g.read_scoped(src, "hasPatchTypes")
        self.assertEqual(entry["introduced"], "1.0")
        self.assertEqual([g.library_of_option(o) for o in entry["options"]],
                         [None, ("kubernetes.JSONPatch", None)])
        self.assertIsNone(g.read_scoped("package cel", "hasPatchTypes"))

    def test_check_finds_problems(self):
        self.assertIn("lines [], expected", g.check({"lines": []})[0])


if __name__ == "__main__":
    unittest.main()
