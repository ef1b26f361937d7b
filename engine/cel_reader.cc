#include "engine/cel_reader.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace compatd::engine {
namespace {

enum class Tok {
  kEnd,
  kIdent,
  kInt,
  kUint,
  kFloat,
  kString,
  kBytes,
  kTrue,
  kFalse,
  kNull,
  kIn,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kDot,
  kComma,
  kColon,
  kQuestion,
  kNot,
  kMinus,
  kPlus,
  kStar,
  kSlash,
  kPercent,
  kLess,
  kLessEq,
  kGreater,
  kGreaterEq,
  kEq,
  kNotEq,
  kAnd,
  kOr,
};

struct Token {
  Tok kind = Tok::kEnd;
  absl::string_view text;
  CelPosition pos;
};

// The language's reserved words (langdef.md, "Syntax"): not usable as
// identifiers.
bool IsReserved(absl::string_view w) {
  static constexpr absl::string_view kReserved[] = {
      "as",        "break",  "const",  "continue", "else", "for",
      "function",  "if",     "import", "let",      "loop", "package",
      "namespace", "return", "var",    "void",     "while"};
  return std::find(std::begin(kReserved), std::end(kReserved), w) !=
         std::end(kReserved);
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool IsIdentStart(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }

// Checks UTF-8 (RFC 3629) and counts code points in one pass.
std::optional<size_t> CountCodePoints(absl::string_view s, size_t* bad_offset) {
  size_t count = 0;
  size_t i = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  while (i < s.size()) {
    unsigned char c = p[i];
    size_t len;
    uint32_t min;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      ++count;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2, min = 0x80, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3, min = 0x800, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4, min = 0x10000, cp = c & 0x07;
    } else {
      *bad_offset = i;
      return std::nullopt;
    }
    if (i + len > s.size()) {
      *bad_offset = i;
      return std::nullopt;
    }
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) {
        *bad_offset = i;
        return std::nullopt;
      }
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      *bad_offset = i;
      return std::nullopt;
    }
    i += len;
    ++count;
  }
  return count;
}

class Lexer {
 public:
  explicit Lexer(absl::string_view src) : src_(src) {}

  // The next token; an error for text no token matches.
  absl::StatusOr<Token> Next() {
    while (i_ < src_.size()) {
      char c = src_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        Advance(1);
      } else if (c == '/' && i_ + 1 < src_.size() && src_[i_ + 1] == '/') {
        while (i_ < src_.size() && src_[i_] != '\n' && src_[i_] != '\r')
          Advance(1);
      } else {
        break;
      }
    }
    Token t;
    t.pos = Pos();
    const size_t start = i_;
    if (i_ >= src_.size()) {
      t.kind = Tok::kEnd;
      return t;
    }
    const char c = src_[i_];
    auto two = [&](char second) {
      return i_ + 1 < src_.size() && src_[i_ + 1] == second;
    };
    auto punct = [&](Tok kind, size_t n) {
      Advance(n);
      t.kind = kind;
      t.text = src_.substr(start, n);
      return t;
    };
    switch (c) {
      case '(':
        return punct(Tok::kLParen, 1);
      case ')':
        return punct(Tok::kRParen, 1);
      case '[':
        return punct(Tok::kLBracket, 1);
      case ']':
        return punct(Tok::kRBracket, 1);
      case '{':
        return punct(Tok::kLBrace, 1);
      case '}':
        return punct(Tok::kRBrace, 1);
      case ',':
        return punct(Tok::kComma, 1);
      case ':':
        return punct(Tok::kColon, 1);
      case '?':
        return punct(Tok::kQuestion, 1);
      case '+':
        return punct(Tok::kPlus, 1);
      case '-':
        return punct(Tok::kMinus, 1);
      case '*':
        return punct(Tok::kStar, 1);
      case '/':
        return punct(Tok::kSlash, 1);
      case '%':
        return punct(Tok::kPercent, 1);
      case '!':
        return two('=') ? punct(Tok::kNotEq, 2) : punct(Tok::kNot, 1);
      case '<':
        return two('=') ? punct(Tok::kLessEq, 2) : punct(Tok::kLess, 1);
      case '>':
        return two('=') ? punct(Tok::kGreaterEq, 2) : punct(Tok::kGreater, 1);
      case '=':
        if (two('=')) return punct(Tok::kEq, 2);
        break;
      case '&':
        if (two('&')) return punct(Tok::kAnd, 2);
        break;
      case '|':
        if (two('|')) return punct(Tok::kOr, 2);
        break;
      case '.':
        if (i_ + 1 < src_.size() && IsDigit(src_[i_ + 1])) return Number(t);
        return punct(Tok::kDot, 1);
      case '`':
        // cel-go reads `a-b` only with EnableIdentEscapeSyntax (parser/
        // options.go, v0.23 on), which kube-apiserver never sets; older cel-go
        // has no such token. Either way kube-apiserver refuses it.
        return Error(t.pos,
                     "unsupported syntax '`': kube-apiserver's CEL parser does "
                     "not enable quoted identifiers");
      default:
        break;
    }
    if (IsDigit(c)) return Number(t);
    if (c == '"' || c == '\'') return String(t, /*raw=*/false, /*bytes=*/false);
    if (IsIdentStart(c)) {
      // String prefixes: b, r, br (cel-go's BYTES is 'b' STRING and STRING may
      // start with 'r').
      size_t j = i_;
      bool bytes = false, raw = false;
      if (src_[j] == 'b' || src_[j] == 'B') bytes = true, ++j;
      if (j < src_.size() && (src_[j] == 'r' || src_[j] == 'R'))
        raw = true, ++j;
      if ((bytes || raw) && j < src_.size() &&
          (src_[j] == '"' || src_[j] == '\'')) {
        Advance(j - i_);
        return String(t, raw, bytes);
      }
      size_t e = i_;
      while (e < src_.size() && IsIdentChar(src_[e])) ++e;
      t.text = src_.substr(i_, e - i_);
      Advance(e - i_);
      if (t.text == "true") {
        t.kind = Tok::kTrue;
      } else if (t.text == "false") {
        t.kind = Tok::kFalse;
      } else if (t.text == "null") {
        t.kind = Tok::kNull;
      } else if (t.text == "in") {
        t.kind = Tok::kIn;
      } else {
        t.kind = Tok::kIdent;
      }
      return t;
    }
    return Error(
        t.pos,
        absl::StrFormat(
            "unexpected character %s",
            static_cast<unsigned char>(c) < 0x80 && c >= 0x20
                ? absl::StrCat("'", absl::string_view(&c, 1), "'")
                : absl::StrFormat("0x%02x", static_cast<unsigned char>(c))));
  }

  static absl::Status Error(const CelPosition& pos, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CEL expression %d:%d: %s", pos.line, pos.column, what));
  }

 private:
  CelPosition Pos() const {
    return CelPosition{static_cast<uint32_t>(i_), line_, column_};
  }

  // Moves over n bytes, keeping line and column (code points) current.
  void Advance(size_t n) {
    for (size_t k = 0; k < n && i_ < src_.size(); ++k) {
      const char c = src_[i_];
      if (c == '\n' ||
          (c == '\r' && !(i_ + 1 < src_.size() && src_[i_ + 1] == '\n'))) {
        ++line_;
        column_ = 1;
      } else if (c == '\r') {
        // \r of \r\n: the \n ends the line.
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        ++column_;
      }
      ++i_;
    }
  }

  absl::StatusOr<Token> Number(Token t) {
    const size_t start = i_;
    size_t j = i_;
    bool is_float = false;
    if (src_[j] == '0' && j + 1 < src_.size() &&
        (src_[j + 1] == 'x' || src_[j + 1] == 'X')) {
      j += 2;
      const size_t digits = j;
      while (j < src_.size() && IsHex(src_[j])) ++j;
      if (j == digits)
        return Error(t.pos, "hexadecimal literal without digits");
    } else {
      while (j < src_.size() && IsDigit(src_[j])) ++j;
      if (j + 1 < src_.size() && src_[j] == '.' && IsDigit(src_[j + 1])) {
        is_float = true;
        ++j;
        while (j < src_.size() && IsDigit(src_[j])) ++j;
      }
      if (j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
        size_t k = j + 1;
        if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
        if (k < src_.size() && IsDigit(src_[k])) {
          is_float = true;
          j = k;
          while (j < src_.size() && IsDigit(src_[j])) ++j;
        }
      }
    }
    t.kind = is_float ? Tok::kFloat : Tok::kInt;
    if (!is_float && j < src_.size() && (src_[j] == 'u' || src_[j] == 'U')) {
      t.kind = Tok::kUint;
      ++j;
    }
    t.text = src_.substr(start, j - start);
    Advance(j - start);
    return t;
  }

  // One escape sequence at src_[i_] == '\\' (langdef.md "String and Bytes
  // Values").
  absl::Status Escape(bool bytes) {
    const CelPosition at = Pos();
    if (i_ + 1 >= src_.size()) return Error(at, "unterminated escape sequence");
    const char e = src_[i_ + 1];
    auto hex_run = [&](size_t n) -> absl::Status {
      if (i_ + 2 + n > src_.size())
        return Error(at, "truncated escape sequence");
      uint32_t cp = 0;
      for (size_t k = 0; k < n; ++k) {
        const char h = src_[i_ + 2 + k];
        if (!IsHex(h))
          return Error(at, "escape sequence needs hexadecimal digits");
        cp = cp * 16 + static_cast<uint32_t>(
                           IsDigit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
      }
      if ((e == 'u' || e == 'U') &&
          (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) {
        return Error(at, "escape sequence is not a Unicode scalar value");
      }
      Advance(2 + n);
      return absl::OkStatus();
    };
    switch (e) {
      case 'a':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
      case 'v':
      case '\\':
      case '?':
      case '"':
      case '\'':
      case '`':
        Advance(2);
        return absl::OkStatus();
      case 'x':
      case 'X':
        return hex_run(2);
      case 'u':
      case 'U':
        if (bytes)
          return Error(at,
                       "\\u and \\U escapes are not allowed in bytes literals");
        return hex_run(e == 'u' ? 4 : 8);
      default:
        break;
    }
    if (e >= '0' && e <= '3' && i_ + 3 < src_.size() && src_[i_ + 2] >= '0' &&
        src_[i_ + 2] <= '7' && src_[i_ + 3] >= '0' && src_[i_ + 3] <= '7') {
      Advance(4);
      return absl::OkStatus();
    }
    return Error(at,
                 "invalid escape sequence (accepted: \\a \\b \\f \\n \\r \\t "
                 "\\v \\\\ \\? "
                 "\\\" \\' \\` \\xHH \\uHHHH \\UHHHHHHHH \\ooo)");
  }

  // A string or bytes literal whose quote is at src_[i_] (any prefix already
  // consumed).
  absl::StatusOr<Token> String(Token t, bool raw, bool bytes) {
    const char q = src_[i_];
    const bool triple =
        i_ + 2 < src_.size() && src_[i_ + 1] == q && src_[i_ + 2] == q;
    const size_t body = i_;
    Advance(triple ? 3 : 1);
    for (;;) {
      if (i_ >= src_.size()) return Error(t.pos, "unterminated string literal");
      const char c = src_[i_];
      if (triple) {
        if (c == q && i_ + 2 < src_.size() && src_[i_ + 1] == q &&
            src_[i_ + 2] == q) {
          Advance(3);
          break;
        }
      } else {
        if (c == q) {
          Advance(1);
          break;
        }
        if (c == '\n' || c == '\r') {
          return Error(
              Pos(), "a quoted string may not span lines (use triple quotes)");
        }
      }
      if (c == '\\' && !raw) {
        absl::Status s = Escape(bytes);
        if (!s.ok()) return s;
        continue;
      }
      Advance(1);
    }
    t.kind = bytes ? Tok::kBytes : Tok::kString;
    t.text = src_.substr(body, i_ - body);
    return t;
  }

  absl::string_view src_;
  size_t i_ = 0;
  uint32_t line_ = 1;
  uint32_t column_ = 1;
};

// One expression's shape as far as the caller needs it: its depth in the parse
// tree and, for an identifier chain (`a`, `a.b.c`, `.a.b`), the chain.
struct Node {
  int depth = 1;
  bool ident_chain = false;
  bool select = false;  // a plain `x.f` (has() accepts only that)
  std::string chain;    // for ident_chain
};

class Parser {
 public:
  explicit Parser(absl::string_view src) : lexer_(src) {}

  absl::StatusOr<CelReading> Read() {
    absl::Status s = Fill();
    if (!s.ok()) return s;
    absl::StatusOr<Node> n = Expr(0);
    if (!n.ok()) return n.status();
    if (tok_.kind != Tok::kEnd) return Unexpected("end of expression");
    return std::move(reading_);
  }

 private:
  // tok_ is the current token, next_ the one after it.
  absl::Status Fill() {
    absl::StatusOr<Token> a = lexer_.Next();
    if (!a.ok()) return a.status();
    tok_ = *a;
    absl::StatusOr<Token> b = lexer_.Next();
    if (!b.ok()) return b.status();
    next_ = *b;
    return absl::OkStatus();
  }
  absl::Status Bump() {
    tok_ = next_;
    if (tok_.kind == Tok::kEnd) return absl::OkStatus();
    absl::StatusOr<Token> b = lexer_.Next();
    if (!b.ok()) return b.status();
    next_ = *b;
    return absl::OkStatus();
  }
  absl::Status Unexpected(absl::string_view wanted) const {
    return Lexer::Error(
        tok_.pos,
        tok_.kind == Tok::kEnd
            ? absl::StrCat("expected ", wanted,
                           ", found the end of the expression")
            : absl::StrCat("expected ", wanted, ", found '", tok_.text, "'"));
  }
  absl::Status Expect(Tok kind, absl::string_view what) {
    if (tok_.kind != kind) return Unexpected(what);
    return Bump();
  }
  absl::Status CheckDepth(int depth) const {
    if (depth > kCelMaxRecursionDepth) {
      return Lexer::Error(
          tok_.pos,
          absl::StrCat(
              "expression nests deeper than kube-apiserver's CEL parser "
              "allows (cel-go's recursion limit, ",
              kCelMaxRecursionDepth, ")"));
    }
    return absl::OkStatus();
  }
  // An identifier; `primary` for one that starts an expression, where cel-go
  // refuses the reserved words (VisitIdentOrGlobalCall). After a dot they are
  // field and function names: request.namespace, authorizer...namespace('ns').
  absl::StatusOr<std::string> Ident(absl::string_view what,
                                    bool primary = false) {
    if (tok_.kind != Tok::kIdent) return Unexpected(what);
    if (primary && IsReserved(tok_.text)) {
      return Lexer::Error(
          tok_.pos, absl::StrCat("reserved identifier '", tok_.text, "'"));
    }
    std::string name(tok_.text);
    absl::Status s = Bump();
    if (!s.ok()) return s;
    return name;
  }

#define CEL_TRY(expr)                                \
  do {                                               \
    absl::Status cel_try_status = (expr);            \
    if (!cel_try_status.ok()) return cel_try_status; \
  } while (0)
#define CEL_ASSIGN(lhs, expr)                   \
  auto lhs##_or = (expr);                       \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *std::move(lhs##_or)

  // expr: conditionalOr ('?' conditionalOr ':' expr)?   `nest` counts the Expr
  // frames above.
  absl::StatusOr<Node> Expr(int nest) {
    CEL_TRY(CheckDepth(nest + 1));
    CEL_ASSIGN(cond, Or(nest));
    if (tok_.kind != Tok::kQuestion) return cond;
    CEL_TRY(Bump());
    CEL_ASSIGN(then, Or(nest));
    CEL_TRY(Expect(Tok::kColon, "':' of a conditional"));
    CEL_ASSIGN(otherwise, Expr(nest + 1));
    Node n;
    n.depth = 1 + std::max({cond.depth, then.depth, otherwise.depth});
    CEL_TRY(CheckDepth(n.depth));
    return n;
  }

  // conditionalOr and conditionalAnd are flat lists in the grammar: a chain
  // nests one level.
  absl::StatusOr<Node> Or(int nest) {
    CEL_ASSIGN(first, And(nest));
    if (tok_.kind != Tok::kOr) return first;
    Node n;
    n.depth = first.depth;
    while (tok_.kind == Tok::kOr) {
      CEL_TRY(Bump());
      CEL_ASSIGN(rhs, And(nest));
      n.depth = std::max(n.depth, rhs.depth);
    }
    n.depth += 1;
    CEL_TRY(CheckDepth(n.depth));
    return n;
  }
  absl::StatusOr<Node> And(int nest) {
    CEL_ASSIGN(first, Relation(nest));
    if (tok_.kind != Tok::kAnd) return first;
    Node n;
    n.depth = first.depth;
    while (tok_.kind == Tok::kAnd) {
      CEL_TRY(Bump());
      CEL_ASSIGN(rhs, Relation(nest));
      n.depth = std::max(n.depth, rhs.depth);
    }
    n.depth += 1;
    CEL_TRY(CheckDepth(n.depth));
    return n;
  }

  static bool IsRelation(Tok k) {
    return k == Tok::kLess || k == Tok::kLessEq || k == Tok::kGreater ||
           k == Tok::kGreaterEq || k == Tok::kEq || k == Tok::kNotEq ||
           k == Tok::kIn;
  }
  // relation and calc are left-recursive: each operator nests one level.
  absl::StatusOr<Node> Relation(int nest) {
    CEL_ASSIGN(lhs, Additive(nest));
    while (IsRelation(tok_.kind)) {
      CEL_TRY(Bump());
      CEL_ASSIGN(rhs, Additive(nest));
      Node n;
      n.depth = 1 + std::max(lhs.depth, rhs.depth);
      CEL_TRY(CheckDepth(n.depth));
      lhs = std::move(n);
    }
    return lhs;
  }
  absl::StatusOr<Node> Additive(int nest) {
    CEL_ASSIGN(lhs, Multiplicative(nest));
    while (tok_.kind == Tok::kPlus || tok_.kind == Tok::kMinus) {
      CEL_TRY(Bump());
      CEL_ASSIGN(rhs, Multiplicative(nest));
      Node n;
      n.depth = 1 + std::max(lhs.depth, rhs.depth);
      CEL_TRY(CheckDepth(n.depth));
      lhs = std::move(n);
    }
    return lhs;
  }
  absl::StatusOr<Node> Multiplicative(int nest) {
    CEL_ASSIGN(lhs, Unary(nest));
    while (tok_.kind == Tok::kStar || tok_.kind == Tok::kSlash ||
           tok_.kind == Tok::kPercent) {
      CEL_TRY(Bump());
      CEL_ASSIGN(rhs, Unary(nest));
      Node n;
      n.depth = 1 + std::max(lhs.depth, rhs.depth);
      CEL_TRY(CheckDepth(n.depth));
      lhs = std::move(n);
    }
    return lhs;
  }

  static bool IsNumber(Tok k) { return k == Tok::kInt || k == Tok::kFloat; }

  // unary: member | '!'+ member | '-'+ member. A '-' right before a number is
  // the literal's sign (grammar `literal: '-'? NUM_INT | ...`), so `!-1` reads
  // and `!-x` does not.
  absl::StatusOr<Node> Unary(int nest) {
    if (tok_.kind == Tok::kNot ||
        (tok_.kind == Tok::kMinus && !IsNumber(next_.kind))) {
      const Tok op = tok_.kind;
      while (tok_.kind == op && !(op == Tok::kMinus && IsNumber(next_.kind)))
        CEL_TRY(Bump());
      CEL_ASSIGN(operand, Member(nest));
      Node n;
      n.depth = 1 + operand.depth;
      CEL_TRY(CheckDepth(n.depth));
      return n;
    }
    return Member(nest);
  }

  void AddUse(CelUseKind kind, std::string name, std::string qualified,
              int args, const CelPosition& pos) {
    reading_.uses.push_back(
        CelUse{kind, std::move(name), std::move(qualified), args, pos});
  }

  // Arguments of a call, after '(' up to and including ')'. Returns their count
  // and fills `shapes` with each argument's shape (macros look at them).
  absl::StatusOr<int> Args(int nest, std::vector<Node>* shapes, int* depth) {
    int count = 0;
    if (tok_.kind == Tok::kRParen) {
      CEL_TRY(Bump());
      return count;
    }
    for (;;) {
      CEL_ASSIGN(arg, Expr(nest + 1));
      *depth = std::max(*depth, arg.depth);
      shapes->push_back(std::move(arg));
      ++count;
      if (tok_.kind == Tok::kComma) {
        CEL_TRY(Bump());
        continue;
      }
      CEL_TRY(Expect(Tok::kRParen, "',' or ')' in a call's arguments"));
      return count;
    }
  }

  // The macros CEL and the extensions Kubernetes' environments load define, by
  // name and argument count (cel-go parser/macro.go; ext/comprehensions.go,
  // ext/lists.go, optional types in cel/library.go): a call of that shape is
  // expanded by the parser, not called.
  static bool IsReceiverMacro(absl::string_view name, int args) {
    if (args == 2) {
      return name == "all" || name == "exists" || name == "exists_one" ||
             name == "existsOne" || name == "map" || name == "filter" ||
             name == "sortBy" || name == "optMap" || name == "optFlatMap";
    }
    if (args == 3) {
      return name == "map" || name == "all" || name == "exists" ||
             name == "exists_one" || name == "existsOne" ||
             name == "transformList" || name == "transformMap" ||
             name == "transformMapEntry";
    }
    if (args == 4) {
      return name == "transformList" || name == "transformMap" ||
             name == "transformMapEntry";
    }
    return false;
  }
  // How many leading arguments of a receiver macro are variable names.
  static int MacroVariables(absl::string_view name, int args) {
    if (name == "transformList" || name == "transformMap" ||
        name == "transformMapEntry")
      return 2;
    if (args == 3 && (name == "all" || name == "exists" ||
                      name == "exists_one" || name == "existsOne")) {
      return 2;
    }
    return 1;
  }

  absl::Status CheckMacroVariables(const std::string& name,
                                   const std::vector<Node>& args,
                                   const CelPosition& pos) {
    const int vars = MacroVariables(name, static_cast<int>(args.size()));
    for (int k = 0; k < vars; ++k) {
      const Node& a = args[k];
      if (!a.ident_chain || a.chain.find('.') != std::string::npos) {
        return Lexer::Error(
            pos, absl::StrCat("the ", name,
                              " macro's variable must be a simple name"));
      }
    }
    return absl::OkStatus();
  }

  // member: primary followed by selections, member calls and indexes.
  absl::StatusOr<Node> Member(int nest) {
    CEL_ASSIGN(n, Primary(nest));
    for (;;) {
      if (tok_.kind == Tok::kDot) {
        CEL_TRY(Bump());
        bool optional = false;
        CelPosition q_pos = tok_.pos;
        if (tok_.kind == Tok::kQuestion) {
          optional = true;
          CEL_TRY(Bump());
        }
        const CelPosition name_pos = tok_.pos;
        CEL_ASSIGN(id, Ident("a field or function name after '.'"));
        std::string name = std::move(id);
        if (!optional && tok_.kind == Tok::kLParen) {
          CEL_TRY(Bump());
          std::vector<Node> args;
          int depth = n.depth;
          const size_t use_index = reading_.uses.size();
          // The use is recorded before the arguments' so that uses stay in text
          // order.
          AddUse(
              CelUseKind::kMemberFunction, name,
              n.ident_chain ? absl::StrCat(n.chain, ".", name) : std::string(),
              0, name_pos);
          CEL_ASSIGN(count, Args(nest, &args, &depth));
          CelUse& use = reading_.uses[use_index];
          use.arg_count = count;
          if (IsReceiverMacro(name, count)) {
            CEL_TRY(CheckMacroVariables(name, args, name_pos));
            use.kind = CelUseKind::kMacro;
          }
          Node call;
          call.depth = 1 + depth;
          CEL_TRY(CheckDepth(call.depth));
          n = std::move(call);
          continue;
        }
        if (optional) AddUse(CelUseKind::kOptionalSelect, "?.", "", 0, q_pos);
        Node sel;
        sel.depth = n.depth + 1;
        CEL_TRY(CheckDepth(sel.depth));
        sel.select = !optional;
        if (n.ident_chain && !optional) {
          sel.ident_chain = true;
          sel.chain = std::move(n.chain);
          sel.chain += '.';
          sel.chain += name;
        }
        n = std::move(sel);
        continue;
      }
      if (tok_.kind == Tok::kLBracket) {
        CEL_TRY(Bump());
        if (tok_.kind == Tok::kQuestion) {
          AddUse(CelUseKind::kOptionalIndex, "[?", "", 0, tok_.pos);
          CEL_TRY(Bump());
        }
        CEL_ASSIGN(index, Expr(nest + 1));
        CEL_TRY(Expect(Tok::kRBracket, "']' after an index"));
        Node idx;
        idx.depth = 1 + std::max(n.depth, index.depth);
        CEL_TRY(CheckDepth(idx.depth));
        n = std::move(idx);
        continue;
      }
      if (tok_.kind == Tok::kLBrace && n.ident_chain) {
        CEL_TRY(Bump());
        CEL_ASSIGN(msg, MessageFields(nest));
        n = std::move(msg);
        continue;
      }
      return n;
    }
  }

  // After `Name{`: fieldInitializerList? ','? '}'.
  absl::StatusOr<Node> MessageFields(int nest) {
    Node n;
    int depth = 1;
    while (tok_.kind != Tok::kRBrace) {
      if (tok_.kind == Tok::kQuestion) {
        AddUse(CelUseKind::kOptionalEntry, "{?", "", 0, tok_.pos);
        CEL_TRY(Bump());
      }
      CEL_ASSIGN(field, Ident("a field name in a message literal"));
      (void)field;
      CEL_TRY(Expect(Tok::kColon, "':' after a field name"));
      CEL_ASSIGN(value, Expr(nest + 1));
      depth = std::max(depth, value.depth);
      if (tok_.kind != Tok::kComma) break;
      CEL_TRY(Bump());
    }
    CEL_TRY(Expect(Tok::kRBrace, "',' or '}' in a message literal"));
    n.depth = 1 + depth;
    CEL_TRY(CheckDepth(n.depth));
    return n;
  }

  absl::StatusOr<Node> Primary(int nest) {
    switch (tok_.kind) {
      case Tok::kDot:
      case Tok::kIdent: {
        std::string chain;
        if (tok_.kind == Tok::kDot) {
          chain = ".";
          CEL_TRY(Bump());
        }
        const CelPosition pos = tok_.pos;
        CEL_ASSIGN(name, Ident("an identifier", /*primary=*/true));
        chain += name;
        if (tok_.kind == Tok::kLParen) {
          CEL_TRY(Bump());
          const size_t use_index = reading_.uses.size();
          AddUse(CelUseKind::kFunction, name, "", 0, pos);
          std::vector<Node> args;
          int depth = 0;
          CEL_ASSIGN(count, Args(nest, &args, &depth));
          CelUse& use = reading_.uses[use_index];
          use.arg_count = count;
          if (name == "has" && count == 1) {
            if (!args[0].select) {
              return Lexer::Error(
                  pos,
                  "invalid argument to has() macro: it takes a field "
                  "selection such as has(object.spec.x)");
            }
            use.kind = CelUseKind::kMacro;
          }
          Node call;
          call.depth = 1 + depth;
          CEL_TRY(CheckDepth(call.depth));
          return call;
        }
        Node n;
        n.ident_chain = true;
        n.chain = std::move(chain);
        return n;
      }
      case Tok::kLParen: {
        CEL_TRY(Bump());
        CEL_ASSIGN(inner, Expr(nest + 1));
        CEL_TRY(Expect(Tok::kRParen, "')'"));
        Node n;
        n.depth = inner.depth + 1;
        CEL_TRY(CheckDepth(n.depth));
        return n;
      }
      case Tok::kLBracket: {
        CEL_TRY(Bump());
        int depth = 1;
        while (tok_.kind != Tok::kRBracket) {
          if (tok_.kind == Tok::kQuestion) {
            AddUse(CelUseKind::kOptionalElement, "?", "", 0, tok_.pos);
            CEL_TRY(Bump());
          }
          CEL_ASSIGN(elem, Expr(nest + 1));
          depth = std::max(depth, elem.depth);
          if (tok_.kind != Tok::kComma) break;
          CEL_TRY(Bump());
        }
        CEL_TRY(Expect(Tok::kRBracket, "',' or ']' in a list"));
        Node n;
        n.depth = 1 + depth;
        CEL_TRY(CheckDepth(n.depth));
        return n;
      }
      case Tok::kLBrace: {
        CEL_TRY(Bump());
        int depth = 1;
        while (tok_.kind != Tok::kRBrace) {
          if (tok_.kind == Tok::kQuestion) {
            AddUse(CelUseKind::kOptionalEntry, "{?", "", 0, tok_.pos);
            CEL_TRY(Bump());
          }
          CEL_ASSIGN(key, Expr(nest + 1));
          CEL_TRY(Expect(Tok::kColon, "':' after a map key"));
          CEL_ASSIGN(value, Expr(nest + 1));
          depth = std::max({depth, key.depth, value.depth});
          if (tok_.kind != Tok::kComma) break;
          CEL_TRY(Bump());
        }
        CEL_TRY(Expect(Tok::kRBrace, "',' or '}' in a map"));
        Node n;
        n.depth = 1 + depth;
        CEL_TRY(CheckDepth(n.depth));
        return n;
      }
      case Tok::kMinus:
        if (IsNumber(next_.kind)) {
          CEL_TRY(Bump());
          CEL_TRY(Bump());
          return Node{};
        }
        break;
      case Tok::kInt:
      case Tok::kUint:
      case Tok::kFloat:
      case Tok::kString:
      case Tok::kBytes:
      case Tok::kTrue:
      case Tok::kFalse:
      case Tok::kNull:
        CEL_TRY(Bump());
        return Node{};
      default:
        break;
    }
    return Unexpected("an expression");
  }

#undef CEL_TRY
#undef CEL_ASSIGN

  Lexer lexer_;
  Token tok_;
  Token next_;
  CelReading reading_;
};

}  // namespace

absl::string_view CelUseKindName(CelUseKind kind) {
  switch (kind) {
    case CelUseKind::kFunction:
      return "function";
    case CelUseKind::kMemberFunction:
      return "member function";
    case CelUseKind::kMacro:
      return "macro";
    case CelUseKind::kOptionalSelect:
      return "optional select";
    case CelUseKind::kOptionalIndex:
      return "optional index";
    case CelUseKind::kOptionalElement:
      return "optional list element";
    case CelUseKind::kOptionalEntry:
      return "optional entry";
  }
  return "use";
}

absl::StatusOr<CelReading> ReadCel(absl::string_view expression) {
  // The size bound first: it is checked on the code points, as cel-go does,
  // before parsing.
  if (expression.size() > static_cast<size_t>(kCelMaxCodePoints) * 4) {
    return absl::InvalidArgumentError(
        absl::StrFormat("CEL expression of %d bytes is longer than "
                        "kube-apiserver's CEL parser allows (%d code "
                        "points)",
                        expression.size(), kCelMaxCodePoints));
  }
  size_t bad = 0;
  std::optional<size_t> points = CountCodePoints(expression, &bad);
  if (!points.has_value()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CEL expression is not valid UTF-8 (byte offset %d)", bad));
  }
  if (*points > static_cast<size_t>(kCelMaxCodePoints)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("CEL expression of %d code points is longer than "
                        "kube-apiserver's CEL parser allows (%d)",
                        *points, kCelMaxCodePoints));
  }
  Parser parser(expression);
  return parser.Read();
}

}  // namespace compatd::engine
