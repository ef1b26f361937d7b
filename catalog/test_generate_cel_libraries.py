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

    def test_check_finds_problems(self):
        self.assertIn("lines [], expected", g.check({"lines": []})[0])


if __name__ == "__main__":
    unittest.main()
