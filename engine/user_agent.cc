#include "engine/user_agent.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "engine/version.h"

namespace compatd::engine {
namespace {

bool IsComponentChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
         c == '_' || c == '+' || c == '@' || c == ':' || c == '~' || c == '-';
}

bool IsPrintable(char c) { return c > 0x20 && c < 0x7f; }

bool ValidComponent(absl::string_view component) {
  if (component.empty() || component.size() > kMaxClientFieldBytes) {
    return false;
  }
  for (char c : component) {
    if (!IsComponentChar(c)) return false;
  }
  return true;
}

bool ValidVersion(absl::string_view version) {
  if (version.empty() || version.size() > kMaxClientFieldBytes) return false;
  for (char c : version) {
    if (!IsPrintable(c)) return false;
  }
  return true;
}

// basename(argv[0]) of a Windows binary ends in ".exe".
absl::string_view NormalizeComponent(absl::string_view component) {
  if (component.size() > 4 && absl::EndsWithIgnoreCase(component, ".exe")) {
    component.remove_suffix(4);
  }
  return component;
}

// Fills major/minor from a generic-parsed version; `require_v` for the
// User-Agent form.
void FillMajorMinor(absl::string_view version, bool require_v,
                    ClientIdentity* identity) {
  if (require_v && !absl::StartsWith(version, "v")) return;
  uint64_t major = 0;
  uint64_t minor = 0;
  if (!Version::ParseMajorMinorNoAlloc(version, &major, &minor)) return;
  if (major == 0 && minor == 0) return;  // client-go's v0.0.0 placeholder
  identity->major = major;
  identity->minor = minor;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
         c == '\v';
}

// Splits off the next whitespace-separated token of *rest.
absl::string_view NextToken(absl::string_view* rest) {
  size_t start = 0;
  while (start < rest->size() && IsSpace((*rest)[start])) ++start;
  size_t end = start;
  while (end < rest->size() && !IsSpace((*rest)[end])) ++end;
  absl::string_view token = rest->substr(start, end - start);
  rest->remove_prefix(end);
  return token;
}

struct Product {
  absl::string_view component;
  absl::string_view version;
  absl::string_view commit;
  absl::string_view suffix;
  bool kubernetes_form = false;
};

}  // namespace

ClientIdentity ParseUserAgent(absl::string_view user_agent) {
  absl::string_view rest = user_agent.substr(0, kMaxUserAgentBytes);
  std::optional<Product> first;       // the first product token
  std::optional<Product> kubernetes;  // the first Kubernetes-form one
  std::optional<Product> current;     // the product a kubernetes/ may follow
  int comment_depth = 0;
  while (true) {
    absl::string_view token = NextToken(&rest);
    if (token.empty()) break;
    if (comment_depth > 0 || token.front() == '(') {
      // A comment such as "(linux/amd64)" or "(linux; chttp2)"; it may span
      // tokens. It does not end the current product.
      for (char c : token) {
        if (c == '(') ++comment_depth;
        if (c == ')' && comment_depth > 0) --comment_depth;
      }
      continue;
    }
    const size_t slash = token.find('/');
    if (slash == absl::string_view::npos || slash == 0 ||
        slash + 1 == token.size()) {
      current.reset();
      continue;
    }
    const absl::string_view name = token.substr(0, slash);
    const absl::string_view value = token.substr(slash + 1);
    if (name == "kubernetes") {
      if (current.has_value() && !kubernetes.has_value()) {
        const size_t commit_end = value.find('/');
        current->commit = value.substr(0, commit_end);
        if (commit_end != absl::string_view::npos) {
          current->suffix = value.substr(commit_end + 1);
        }
        current->kubernetes_form = true;
        kubernetes = current;
      }
      current.reset();
      continue;
    }
    if (absl::StartsWithIgnoreCase(name, "grpc-") ||
        !ValidComponent(NormalizeComponent(name)) || !ValidVersion(value)) {
      current.reset();
      continue;
    }
    current = Product{NormalizeComponent(name), value, {}, {}, false};
    if (!first.has_value()) first = current;
  }

  ClientIdentity identity;
  const std::optional<Product>& chosen = kubernetes ? kubernetes : first;
  if (!chosen.has_value()) return identity;
  identity.source = ClientIdentity::Source::kUserAgent;
  identity.component = chosen->component;
  identity.version = chosen->version;
  identity.commit = chosen->commit;
  identity.suffix = chosen->suffix;
  FillMajorMinor(identity.version, /*require_v=*/true, &identity);
  return identity;
}

ClientIdentity IdentifyClient(absl::string_view component_metadata,
                              absl::string_view version_metadata,
                              absl::string_view user_agent) {
  absl::string_view component = absl::StripAsciiWhitespace(component_metadata);
  component = NormalizeComponent(component);
  absl::string_view version = absl::StripAsciiWhitespace(version_metadata);
  const bool has_component = ValidComponent(component);
  const bool has_version = ValidVersion(version);
  if (!has_component && !has_version) return ParseUserAgent(user_agent);

  ClientIdentity identity;
  identity.source = ClientIdentity::Source::kMetadata;
  if (has_component) identity.component = component;
  if (has_version) {
    identity.version = version;
    FillMajorMinor(version, /*require_v=*/false, &identity);
  }
  if (!has_component || !has_version) {
    const ClientIdentity from_agent = ParseUserAgent(user_agent);
    if (!has_component) {
      if (from_agent.source == ClientIdentity::Source::kUserAgent) {
        identity.component = from_agent.component;
      }
    } else if (from_agent.source == ClientIdentity::Source::kUserAgent &&
               from_agent.component == identity.component) {
      identity.version = from_agent.version;
      identity.major = from_agent.major;
      identity.minor = from_agent.minor;
      identity.commit = from_agent.commit;
      identity.suffix = from_agent.suffix;
    }
  }
  return identity;
}

}  // namespace compatd::engine
