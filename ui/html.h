#pragma once

// HTML escaping for the status page (ui/status_page.h). Every string that
// comes from a catalog, a client (User-Agents are attacker-controlled) or a
// request goes through one of these before it reaches a page; the page's own
// markup is written as literals.
//
// One escape serves both contexts the page uses: text between tags and
// attribute values, which the page always quotes with '"'. It replaces
// & < > " ' (so neither a tag nor a quoted attribute can be closed) and
// writes bytes that are not valid UTF-8 as \xNN (base::ValidUtf8), so a page
// is always valid UTF-8. Other contexts (script, style, unquoted attributes,
// URLs in href) are never filled from data, except paths built by
// AppendPathSegment.

#include <string>

#include "absl/strings/string_view.h"

namespace compatd::ui {

// `text` escaped for HTML text or a double-quoted attribute value.
std::string Escape(absl::string_view text);
void AppendEscaped(std::string* out, absl::string_view text);

// `segment` as one URL path segment (RFC 3986 unreserved characters kept,
// every other byte %XX), then HTML-escaped: safe inside href="...".
void AppendPathSegment(std::string* out, absl::string_view segment);

// `text` with %XX escapes decoded (malformed ones kept as they are) and,
// with `plus_as_space` (query strings), '+' as ' '.
std::string PercentDecode(absl::string_view text, bool plus_as_space);

// `text` with bytes outside [A-Za-z0-9_-] replaced by '_': an HTML id or a
// CSS-safe class suffix ("gate-WatchList").
std::string IdToken(absl::string_view text);

}  // namespace compatd::ui
