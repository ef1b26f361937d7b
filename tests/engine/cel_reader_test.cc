#include "engine/cel_reader.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// "kind name/args@line:column" for each use, qualified names after '=' when
// present.
std::vector<std::string> Uses(absl::string_view expr) {
  absl::StatusOr<CelReading> r = ReadCel(expr);
  EXPECT_TRUE(r.ok()) << expr << ": " << r.status();
  std::vector<std::string> out;
  if (!r.ok()) return out;
  for (const CelUse& u : r->uses) {
    std::string s =
        absl::StrCat(CelUseKindName(u.kind), " ", u.name, "/", u.arg_count, "@",
                     u.position.line, ":", u.position.column);
    if (!u.qualified_name.empty()) absl::StrAppend(&s, "=", u.qualified_name);
    out.push_back(s);
  }
  return out;
}

std::string ErrorOf(absl::string_view expr) {
  absl::StatusOr<CelReading> r = ReadCel(expr);
  EXPECT_FALSE(r.ok()) << expr;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(r.status().message());
}

TEST(CelReaderTest, LiteralsHaveNoUses) {
  for (absl::string_view e : {"1",
                              "-1",
                              "0x1F",
                              "-0x10",
                              "1u",
                              "0xFFu",
                              "1.5",
                              "-2.5e-3",
                              ".5",
                              "1e10",
                              "2E+3",
                              "true",
                              "false",
                              "null",
                              "'a'",
                              "\"a\"",
                              "r'\\d+'",
                              "R\"\\w\"",
                              "'''multi\nline'''",
                              "\"\"\"with \" quote\"\"\"",
                              "b'abc'",
                              "B\"\\x00\\377\"",
                              "br'\\d'",
                              "'\\u00e9\\U0001F600'",
                              "'\\a\\b\\f\\n\\r\\t\\v\\\\\\?\\\"\\'\\`'",
                              "'é ü 😀'",
                              "[]",
                              "{}",
                              "[1, 2, 3,]",
                              "{'a': 1, 'b': 2,}"}) {
    EXPECT_THAT(Uses(e), IsEmpty()) << e;
  }
}

TEST(CelReaderTest, OperatorsAndPrecedence) {
  EXPECT_THAT(Uses("a + b * c - d / e % f < 3 && !x || y in z ? 1 : 2 == 2"),
              IsEmpty());
  EXPECT_THAT(Uses("--x + !!y"), IsEmpty());
  EXPECT_THAT(Uses("a ? (b ? 1 : 2) : c ? 3 : 4"), IsEmpty());
  EXPECT_THAT(Uses("(a || b) && (c <= d) && e >= f && g != h && i > j"),
              IsEmpty());
}

TEST(CelReaderTest, GlobalAndMemberCallsWithPositions) {
  EXPECT_THAT(Uses("size(x) > 0 && x.startsWith('a')"),
              ElementsAre("function size/1@1:1",
                          "member function startsWith/1@1:18=x.startsWith"));
  EXPECT_THAT(
      Uses("object.spec.name.matches('^a')"),
      ElementsAre("member function matches/1@1:18=object.spec.name.matches"));
  EXPECT_THAT(
      Uses("f(g(1), h())"),
      ElementsAre("function f/2@1:1", "function g/1@1:3", "function h/0@1:9"));
  EXPECT_THAT(Uses("x[0].f()"), ElementsAre("member function f/0@1:6"));
  EXPECT_THAT(Uses("'abc'.size()"), ElementsAre("member function size/0@1:7"));
  EXPECT_THAT(Uses(".fn(1)"), ElementsAre("function fn/1@1:2"));
  EXPECT_THAT(Uses(".pkg.fn(1)"),
              ElementsAre("member function fn/1@1:6=.pkg.fn"));
}

TEST(CelReaderTest, NamespacedCallsCarryTheirQualifiedName) {
  EXPECT_THAT(Uses("sets.contains([1], [1])"),
              ElementsAre("member function contains/2@1:6=sets.contains"));
  EXPECT_THAT(
      Uses("format.dns1123Label().validate(x)"),
      ElementsAre("member function dns1123Label/0@1:8=format.dns1123Label",
                  "member function validate/1@1:23"));
  EXPECT_THAT(Uses("x.y.z().w()"), ElementsAre("member function z/0@1:5=x.y.z",
                                               "member function w/0@1:9"));
}

TEST(CelReaderTest, LinesAndColumnsCountCodePointsAndLineEnds) {
  EXPECT_THAT(Uses("'é'.size()"), ElementsAre("member function size/0@1:5"));
  EXPECT_THAT(Uses("a &&\n  f(1)"), ElementsAre("function f/1@2:3"));
  EXPECT_THAT(Uses("a &&\r\n f(1)"), ElementsAre("function f/1@2:2"));
  EXPECT_THAT(Uses("a &&\r f(1)"), ElementsAre("function f/1@2:2"));
  EXPECT_THAT(Uses("'''x\ny''' + f()"), ElementsAre("function f/0@2:8"));
  EXPECT_THAT(Uses("// a comment f()\ng()"), ElementsAre("function g/0@2:1"));
}

TEST(CelReaderTest, Offsets) {
  absl::StatusOr<CelReading> r = ReadCel("'é' + f()");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->uses.size(), 1u);
  EXPECT_EQ(r->uses[0].position, (CelPosition{7, 1, 7}));
}

TEST(CelReaderTest, StandardMacros) {
  EXPECT_THAT(Uses("has(object.spec.x)"), ElementsAre("macro has/1@1:1"));
  EXPECT_THAT(Uses("l.all(x, x > 0)"), ElementsAre("macro all/2@1:3=l.all"));
  EXPECT_THAT(Uses("l.exists(x, f(x))"),
              ElementsAre("macro exists/2@1:3=l.exists", "function f/1@1:13"));
  EXPECT_THAT(Uses("l.exists_one(x, x)"),
              ElementsAre("macro exists_one/2@1:3=l.exists_one"));
  EXPECT_THAT(Uses("l.existsOne(x, x)"),
              ElementsAre("macro existsOne/2@1:3=l.existsOne"));
  EXPECT_THAT(Uses("l.map(x, x * 2)"), ElementsAre("macro map/2@1:3=l.map"));
  EXPECT_THAT(Uses("l.map(x, x > 1, x * 2)"),
              ElementsAre("macro map/3@1:3=l.map"));
  EXPECT_THAT(Uses("l.filter(x, x > 1)"),
              ElementsAre("macro filter/2@1:3=l.filter"));
  // Not macro shapes: a call of another arity is a member function.
  EXPECT_THAT(Uses("l.filter(x)"),
              ElementsAre("member function filter/1@1:3=l.filter"));
  EXPECT_THAT(Uses("has(a, b)"), ElementsAre("function has/2@1:1"));
}

TEST(CelReaderTest, TwoVariableComprehensions) {
  EXPECT_THAT(Uses("m.all(k, v, v > 0)"), ElementsAre("macro all/3@1:3=m.all"));
  EXPECT_THAT(Uses("m.exists(k, v, k == 'a')"),
              ElementsAre("macro exists/3@1:3=m.exists"));
  EXPECT_THAT(Uses("l.existsOne(i, v, v == 1)"),
              ElementsAre("macro existsOne/3@1:3=l.existsOne"));
  EXPECT_THAT(Uses("l.exists_one(i, v, v == 1)"),
              ElementsAre("macro exists_one/3@1:3=l.exists_one"));
  EXPECT_THAT(Uses("l.transformList(i, v, v * i)"),
              ElementsAre("macro transformList/3@1:3=l.transformList"));
  EXPECT_THAT(Uses("l.transformList(i, v, i > 0, v)"),
              ElementsAre("macro transformList/4@1:3=l.transformList"));
  EXPECT_THAT(Uses("m.transformMap(k, v, v + 1)"),
              ElementsAre("macro transformMap/3@1:3=m.transformMap"));
  EXPECT_THAT(Uses("m.transformMap(k, v, k != 'x', v)"),
              ElementsAre("macro transformMap/4@1:3=m.transformMap"));
  EXPECT_THAT(Uses("m.transformMapEntry(k, v, {v: k})"),
              ElementsAre("macro transformMapEntry/3@1:3=m.transformMapEntry"));
}

TEST(CelReaderTest, ExtensionMacros) {
  EXPECT_THAT(Uses("l.sortBy(e, e.name)"),
              ElementsAre("macro sortBy/2@1:3=l.sortBy"));
  EXPECT_THAT(Uses("o.optMap(v, v + 1)"),
              ElementsAre("macro optMap/2@1:3=o.optMap"));
  EXPECT_THAT(Uses("o.optFlatMap(v, optional.of(v))"),
              ElementsAre("macro optFlatMap/2@1:3=o.optFlatMap",
                          "member function of/1@1:26=optional.of"));
}

TEST(CelReaderTest, MacroVariablesMustBeSimpleNames) {
  EXPECT_THAT(ErrorOf("l.all(1, true)"), HasSubstr("simple name"));
  EXPECT_THAT(ErrorOf("l.all(a.b, true)"), HasSubstr("simple name"));
  EXPECT_THAT(ErrorOf("m.transformMap(k, 'v', v)"), HasSubstr("simple name"));
  EXPECT_THAT(ErrorOf("has(x)"), HasSubstr("has()"));
  EXPECT_THAT(ErrorOf("has(x[0])"), HasSubstr("has()"));
}

TEST(CelReaderTest, OptionalSyntax) {
  EXPECT_THAT(
      Uses("object.?spec.?x.orValue(1)"),
      ElementsAre("optional select ?./0@1:8", "optional select ?./0@1:14",
                  "member function orValue/1@1:17"));
  EXPECT_THAT(
      Uses("m[?'k'].hasValue()"),
      ElementsAre("optional index [?/0@1:3", "member function hasValue/0@1:9"));
  EXPECT_THAT(Uses("[1, ?x, 3]"), ElementsAre("optional list element ?/0@1:5"));
  EXPECT_THAT(Uses("{?'k': optional.none()}"),
              ElementsAre("optional entry {?/0@1:2",
                          "member function none/0@1:17=optional.none"));
  EXPECT_THAT(Uses("Msg{?f: x}"), ElementsAre("optional entry {?/0@1:5"));
}

TEST(CelReaderTest, MessageConstruction) {
  EXPECT_THAT(Uses("google.protobuf.Duration{seconds: f(1)}.seconds"),
              ElementsAre("function f/1@1:35"));
  EXPECT_THAT(Uses(".a.B{x: 1, y: 2,}"), IsEmpty());
  EXPECT_THAT(Uses("Object{spec: Object.spec{replicas: 1}}"), IsEmpty());
}

// cel-go parses `a-b` only with parser.EnableIdentEscapeSyntax (v0.23 on;
// absent from v0.20.1 and v0.22.0), which k8s.io/apiserver pkg/cel/environment
// never sets (v0.31.0-v0.37.0-beta.0): kube-apiserver refuses it.
TEST(CelReaderTest, BacktickIdentifiersAreRefused) {
  EXPECT_THAT(ErrorOf("self.`x-kubernetes.io/y z` == 1"),
              HasSubstr("1:6: unsupported syntax '`'"));
  EXPECT_THAT(ErrorOf(".a.B{x: 1, `y-z`: 2,}"), HasSubstr("'`'"));
}

TEST(CelReaderTest, SyntaxErrorsNameTheirPosition) {
  EXPECT_THAT(ErrorOf("1 +"),
              HasSubstr("1:4: expected an expression, found the end"));
  EXPECT_THAT(ErrorOf("f(1,)"), HasSubstr("1:5"));
  EXPECT_THAT(ErrorOf("(a"), HasSubstr("expected ')'"));
  EXPECT_THAT(ErrorOf("a b"),
              HasSubstr("1:3: expected end of expression, found 'b'"));
  EXPECT_THAT(ErrorOf("a = b"), HasSubstr("unexpected character '='"));
  EXPECT_THAT(ErrorOf("a & b"), HasSubstr("'&'"));
  EXPECT_THAT(ErrorOf("!-x"), HasSubstr("expected an expression, found '-'"));
  EXPECT_THAT(ErrorOf("x.?f()"),
              HasSubstr("expected end of expression, found '('"));
  EXPECT_THAT(ErrorOf("a ? b"), HasSubstr("':' of a conditional"));
  EXPECT_THAT(ErrorOf("[1 2]"), HasSubstr("',' or ']'"));
  EXPECT_THAT(ErrorOf("{1 2}"), HasSubstr("':' after a map key"));
  EXPECT_THAT(ErrorOf("x.1"), HasSubstr("found '.1'"));
  EXPECT_THAT(ErrorOf("x.+"), HasSubstr("field or function name"));
  // The grammar's then-branch is a conditionalOr: a nested conditional needs
  // parentheses.
  EXPECT_THAT(ErrorOf("a ? b ? 1 : 2 : 3"), HasSubstr("':' of a conditional"));
  EXPECT_THAT(ErrorOf("é"), HasSubstr("0xc3"));
}

TEST(CelReaderTest, ReservedWordsAreNotIdentifiers) {
  EXPECT_THAT(ErrorOf("if"), HasSubstr("reserved identifier 'if'"));
  EXPECT_THAT(ErrorOf(".while"), HasSubstr("reserved identifier 'while'"));
  // After a dot they are field and function names (cel-go checks identifiers
  // only).
  EXPECT_THAT(Uses("request.namespace == 'a' && a.as.if"), IsEmpty());
  EXPECT_THAT(Uses("r.namespace('ns')"),
              ElementsAre("member function namespace/1@1:3=r.namespace"));
  EXPECT_THAT(ErrorOf("package(1)"),
              HasSubstr("reserved identifier 'package'"));
  EXPECT_THAT(Uses("ifx + as_ + while2"), IsEmpty());
}

TEST(CelReaderTest, BadLiterals) {
  EXPECT_THAT(ErrorOf("'abc"), HasSubstr("unterminated string"));
  EXPECT_THAT(ErrorOf("'a\nb'"), HasSubstr("may not span lines"));
  EXPECT_THAT(ErrorOf("r'a\nb'"), HasSubstr("may not span lines"));
  EXPECT_THAT(ErrorOf("'''abc''"), HasSubstr("unterminated string"));
  EXPECT_THAT(ErrorOf("'\\q'"), HasSubstr("invalid escape"));
  EXPECT_THAT(ErrorOf("'\\400'"), HasSubstr("invalid escape"));
  EXPECT_THAT(ErrorOf("'\\x4'"), HasSubstr("hexadecimal digits"));
  EXPECT_THAT(ErrorOf("'\\uD800'"), HasSubstr("Unicode scalar"));
  EXPECT_THAT(ErrorOf("b'\\u0041'"), HasSubstr("not allowed in bytes"));
  EXPECT_THAT(ErrorOf("0x"), HasSubstr("without digits"));
  EXPECT_THAT(ErrorOf(std::string("'\xff'")),
              HasSubstr("not valid UTF-8 (byte offset 1)"));
  // A raw string keeps its backslashes: no escape is checked.
  EXPECT_THAT(Uses("r'\\q\\'"), IsEmpty());
}

TEST(CelReaderTest, LengthBoundIsCelGosCodePointLimit) {
  std::string ok = "'" + std::string(kCelMaxCodePoints - 2, 'a') + "'";
  EXPECT_THAT(Uses(ok), IsEmpty());
  std::string too_long = "'" + std::string(kCelMaxCodePoints - 1, 'a') + "'";
  EXPECT_THAT(ErrorOf(too_long), HasSubstr("100001 code points"));
  // Counted in code points, not bytes: 99,998 two-byte characters fit.
  std::string wide = "'";
  for (int i = 0; i < kCelMaxCodePoints - 2; ++i) wide += "é";
  wide += "'";
  EXPECT_THAT(Uses(wide), IsEmpty());
}

TEST(CelReaderTest, NestingBoundIsCelGosRecursionLimit) {
  auto nested = [](int n) {
    return std::string(n, '(') + "1" + std::string(n, ')');
  };
  EXPECT_THAT(Uses(nested(200)), IsEmpty());
  EXPECT_THAT(ErrorOf(nested(300)), HasSubstr("recursion limit, 250"));
  std::string list = std::string(300, '[') + std::string(300, ']');
  EXPECT_THAT(ErrorOf(list), HasSubstr("recursion limit"));
  // Operator chains nest too (cel-go's parser tests: 34 additions exceed a
  // limit of 32).
  std::vector<std::string> terms(300, "1");
  EXPECT_THAT(ErrorOf(absl::StrJoin(terms, " + ")),
              HasSubstr("recursion limit"));
  std::vector<std::string> few(100, "1");
  EXPECT_THAT(Uses(absl::StrJoin(few, " + ")), IsEmpty());
  // ... but || and && are flat lists in the grammar.
  std::vector<std::string> ors(5000, "a");
  EXPECT_THAT(Uses(absl::StrJoin(ors, " || ")), IsEmpty());
}

TEST(CelReaderTest, HostileInputsStayLinear) {
  // Long inputs of every shape end quickly: each is one pass, refused or read.
  for (const std::string& s : {std::string(kCelMaxCodePoints, '('),
                               std::string(kCelMaxCodePoints, '['),
                               std::string(kCelMaxCodePoints, '!'),
                               std::string(kCelMaxCodePoints, '-'),
                               std::string(kCelMaxCodePoints, '\''),
                               std::string(kCelMaxCodePoints, '"'),
                               "'''" + std::string(kCelMaxCodePoints - 3, '\''),
                               std::string(kCelMaxCodePoints / 2, 'a') +
                                   std::string(kCelMaxCodePoints / 2, '.')}) {
    (void)ReadCel(s);
  }
  std::string calls = "[";
  for (int i = 0; i < 10000; ++i) absl::StrAppend(&calls, "f(", i, "),");
  calls += "]";
  absl::StatusOr<CelReading> r = ReadCel(calls);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->uses.size(), 10000u);
}

}  // namespace
}  // namespace compatd::engine
