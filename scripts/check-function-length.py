#!/usr/bin/env python3
"""Every function body in compatd's production code fits on one screen (at most 80 lines).

Covers every .cc and .h file under the repository's top-level folders except engine/ (the
pure evaluator, whose algorithms follow Kubernetes' own code), tests/, fuzz/ and bench/, and
except build*/ and hidden folders. A function body is the `{...}` that opens at namespace or
class scope after a parameter list (`)`, possibly followed by qualifiers, a trailing return type
or a constructor's initializer list); its length is counted from the line of its `{` to the line
of its `}`, both included. Lambdas and local classes count toward their enclosing function.
Braces inside comments, string literals (raw ones too), character literals and preprocessor
lines are skipped.

  check-function-length.py [--root=DIR] [--max=80] [FILE...]   exit 1 and list every offender
  check-function-length.py --self-test                          the parser's own cases
"""

import argparse
import os
import re
import sys
import tempfile

MAX_LINES = 80
EXCLUDED_FOLDERS = {"engine", "tests", "fuzz", "bench"}
IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
RAW_PREFIX = re.compile(r"(?:u8|u|U|L)?R$")


def strip_code(text):
    """Returns text with comments, literals' contents and preprocessor lines blanked.

    Newlines are kept, so that offsets map to the same line numbers; a string becomes "" and a
    character literal '' so that no brace or parenthesis inside them is seen.
    """
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":
            # A preprocessor line, with its backslash continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
            continue
        if c == '"':
            word = re.search(r"[A-Za-z_0-9]*$", "".join(out[-3:]))
            if word and RAW_PREFIX.search(word.group(0)):
                open_paren = text.find("(", i)
                delim = text[i + 1 : open_paren]
                end = text.find(")" + delim + '"', open_paren)
                end = n if end < 0 else end + len(delim) + 2
            else:
                end = i + 1
                while end < n and text[end] != '"':
                    end += 2 if text[end] == "\\" else 1
                end += 1
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
            continue
        if c == "'":
            run = re.search(r"[A-Za-z_0-9]*$", "".join(out[-40:])).group(0)
            if run and run[0].isdigit():
                i += 1  # a digit separator: 1'000'000
                continue
            end = i + 1
            while end < n and text[end] != "'":
                end += 2 if text[end] == "\\" else 1
            out.append("''")
            i = end + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def without_template_heads(head):
    """Drops every `template <...>` from a declaration's head."""
    while True:
        m = re.search(r"\btemplate\s*<", head)
        if not m:
            return head
        depth, j = 1, m.end()
        while j < len(head) and depth:
            depth += {"<": 1, ">": -1}.get(head[j], 0)
            j += 1
        head = head[: m.start()] + " " + head[j:]


def outside_brackets(text, opening):
    """Yields (offset, char) for each char of `text` outside the brackets in `opening`."""
    closing = {"(": ")", "[": "]", "{": "}"}
    depth = 0
    for k, ch in enumerate(text):
        if ch in opening:
            depth += 1
        elif ch in (closing[o] for o in opening):
            depth -= 1
        elif depth == 0:
            yield k, ch


def classify(head):
    """What a `{` opens at namespace or class scope, from the text since the last ; { or }."""
    head = without_template_heads(head)
    head = re.sub(r"\boperator\s*(\(\)|[^\s(]+)", "operator", head)
    # Access specifiers and labels end a class body's previous declaration.
    head = re.sub(r"\b(public|private|protected)\s*:(?!:)", " ", head)
    words = IDENT.findall(head)
    if "namespace" in words or re.match(r'\s*extern\s*""\s*$', head):
        return "scope"
    paren = head.find("(")
    before_paren = head if paren < 0 else head[:paren]
    if re.search(r"\b(class|struct|union|enum)\b", before_paren) and "=" not in before_paren:
        return "scope"
    if paren < 0:
        return "other"
    for k, ch in outside_brackets(head, "(["):
        if ch == "=":
            prev = head[k - 1] if k else ""
            nxt = head[k + 1] if k + 1 < len(head) else ""
            if prev not in "=!<>" and nxt != "=":
                return "other"  # an initializer: `T x = {...}`, `auto f = [] {...}`
    return "function"


def in_initializer_list(head):
    """True when `head` ends inside a constructor's member initializer list (`) : a_(1), b_`)."""
    for k, ch in outside_brackets(head, "([{"):
        if ch == ":" and head[k - 1 : k] != ":" and head[k + 1 : k + 2] != ":" and ")" in head[:k]:
            return True
    return False


def function_name(head):
    head = without_template_heads(head)
    paren = head.find("(")
    names = re.findall(r"[~A-Za-z_0-9:]+", head[:paren] if paren >= 0 else head)
    return names[-1].strip() if names else "?"


def functions(text):
    """Yields (name, first_line, last_line) for every function body in text."""
    code = strip_code(text)
    line_of = []
    line = 1
    for ch in code:
        line_of.append(line)
        if ch == "\n":
            line += 1
    # The scope stack: one entry per open brace, "scope" (namespace, class), "function",
    # "other" (initializers, enums) and "inner" (anything inside a function).
    stack = []
    head_start = 0
    open_functions = []
    i = 0
    while i < len(code):
        ch = code[i]
        top = stack[-1] if stack else "scope"
        if ch == "{":
            if top == "scope":
                head = code[head_start:i]
                kind = classify(head)
                if kind == "function" and in_initializer_list(head):
                    before = head.rstrip()
                    if before and (before[-1].isalnum() or before[-1] in "_>"):
                        kind = "member-init"  # `b_{x}` in an initializer list
                if kind == "function":
                    open_functions.append((function_name(head), line_of[i], len(stack)))
                stack.append(kind)
            else:
                stack.append("inner" if top in ("function", "inner") else top)
            if stack[-1] != "member-init":
                head_start = i + 1
        elif ch == "}":
            if not stack:
                raise ValueError(f"line {line_of[i]}: a '}}' closes nothing")
            kind = stack.pop()
            if kind == "function":
                name, first, _ = open_functions.pop()
                yield name, first, line_of[i]
            if kind != "member-init":
                head_start = i + 1
        elif ch == ";" and top == "scope":
            head_start = i + 1
        i += 1
    if stack:
        raise ValueError(f"{len(stack)} '{{' never closed")


def covered_files(root):
    for folder in sorted(os.listdir(root)):
        path = os.path.join(root, folder)
        if (not os.path.isdir(path) or folder in EXCLUDED_FOLDERS or folder.startswith(".")
                or folder.startswith("build")):
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if name.endswith((".cc", ".h")):
                    yield os.path.join(dirpath, name)


def offenders(paths, root, max_lines):
    found = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            for name, first, last in functions(text):
                length = last - first + 1
                if length > max_lines:
                    found.append((os.path.relpath(path, root), first, name, length))
        except ValueError as e:
            # Braces this parser cannot balance: the file is not checked, so
            # it fails rather than passes.
            found.append((os.path.relpath(path, root), 0, f"unbalanced braces ({e})", 0))
    return found


SELF_TEST_SOURCE = r'''
#include <string>
#define BRACE {
namespace a::b {
namespace {
// a comment with a brace {
/* and a block
   comment } */
const char* kText = R"json({"a": "}"})json";
const char kOpen = '{';
constexpr int kBig = 1'000'000;
struct Table { int x{0}; const char* name = "}"; };
}  // namespace
class Widget : public Base {
 public:
  Widget(int a) : a_(a), b_{a} {
    int y = 1;
  }
  int Get() const override { return a_; }
  bool operator==(const Widget& o) const {
    return a_ == o.a_;
  }
 private:
  int a_;
  int b_;
};
template <typename T = int>
auto Long(T t) -> std::string {
  auto lambda = [&] {
    return std::string("{");
  };
  struct Local { void F() {} };
  return lambda();
}
}  // namespace a::b
extern "C" {
int CFunction(void) { return '}'; }
}
'''


def self_test():
    got = [(name, first, last) for name, first, last in functions(SELF_TEST_SOURCE)]
    want = [("Widget", 16, 18), ("Get", 19, 19), ("operator", 20, 22), ("Long", 28, 34),
            ("CFunction", 37, 37)]
    if got != want:
        print(f"self-test: functions found {got}, want {want}")
        return 1
    # A function one line over the limit fails the check; one at the limit passes.
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "ui"))
        os.makedirs(os.path.join(root, "engine"))
        body = "".join(f"  int v{k} = {k};\n" for k in range(MAX_LINES - 2))
        with open(os.path.join(root, "ui", "ok.cc"), "w") as f:
            f.write("void Fits() {\n" + body + "}\n")
        with open(os.path.join(root, "ui", "long.cc"), "w") as f:
            f.write('void TooLong() {\n  const char* s = "}";\n' + body + "}\n")
        with open(os.path.join(root, "engine", "long.cc"), "w") as f:
            f.write("void Exempt() {\n  int x;\n" + body + "}\n")
        found = offenders(covered_files(root), root, MAX_LINES)
        if found != [(os.path.join("ui", "long.cc"), 1, "TooLong", MAX_LINES + 1)]:
            print(f"self-test: offenders {found}")
            return 1
        with open(os.path.join(root, "ui", "unbalanced.cc"), "w") as f:
            f.write("void F() {\n  if (x) {\n}\n")
        found = offenders(covered_files(root), root, MAX_LINES)
        if len(found) != 2 or found[1][0] != os.path.join("ui", "unbalanced.cc"):
            print(f"self-test: offenders {found}")
            return 1
    print("self-test: 1 passed, 0 failed")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--max", type=int, default=MAX_LINES)
    parser.add_argument("--self-test", action="store_true")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    paths = args.files or list(covered_files(args.root))
    found = offenders(paths, args.root, args.max)
    for path, line, name, length in sorted(found, key=lambda o: -o[3]):
        if length == 0:
            print(f"{path}: cannot be checked: {name}")
        else:
            print(f"{path}:{line}: {name}: {length} lines (at most {args.max})")
    print(f"function length: {len(paths)} files, {len(found)} functions over {args.max} lines")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
