#include "fleet/prometheus_client.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/bounded_file.h"

namespace compatd::fleet {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kMaxTokenBytes = 64 << 10;
constexpr size_t kMaxQuotedBody = 200;

bool IsIpLiteral(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// The client's TLS context, its files read now.
absl::StatusOr<std::unique_ptr<asio::ssl::context>> MakeTlsContext(
    const PrometheusClientOptions& options) {
  auto ctx =
      std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  boost::system::error_code ec;
  if (options.insecure_skip_verify) {
    ctx->set_verify_mode(asio::ssl::verify_none);
  } else {
    ctx->set_verify_mode(asio::ssl::verify_peer);
    if (!options.ca_file.empty()) {
      ctx->load_verify_file(options.ca_file, ec);
      if (ec) {
        return absl::FailedPreconditionError(absl::StrCat(
            "--prometheus-ca-file=", options.ca_file,
            ": not a readable PEM CA bundle (", ec.message(), ")"));
      }
    } else {
      ctx->set_default_verify_paths(ec);
      if (ec) {
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot load the system's CA certificates: ", ec.message(),
            "; give --prometheus-ca-file"));
      }
    }
  }
  if (!options.cert_file.empty()) {
    ctx->use_certificate_chain_file(options.cert_file, ec);
    if (ec) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--prometheus-cert-file=", options.cert_file,
          ": not a readable PEM certificate chain (", ec.message(), ")"));
    }
    ctx->use_private_key_file(options.key_file, asio::ssl::context::pem, ec);
    if (ec || SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--prometheus-key-file=", options.key_file,
          ": not a readable PEM key of --prometheus-cert-file",
          ec ? absl::StrCat(" (", ec.message(), ")") : std::string()));
    }
  }
  return ctx;
}

struct Outcome {
  bool done = false;
  beast::error_code ec;
  const char* stage = "resolving";
};

// Resolve, connect, (handshake), write, read: each step bounded by
// `deadline`; `outcome` says how far it got. Lives in Query()'s frame while
// the io_context runs; its handlers are dropped unrun when Query() gives up.
template <typename Stream>
struct Exchange {
  Stream& stream;
  tcp::resolver& resolver;
  const PrometheusUrl& url;
  std::chrono::steady_clock::time_point deadline;
  const bhttp::request<bhttp::empty_body>& request;
  beast::flat_buffer& buffer;
  bhttp::response_parser<bhttp::string_body>& parser;
  Outcome& outcome;
  size_t max_bytes;

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream); }
  void Fail(beast::error_code ec) {
    outcome.ec = ec;
    outcome.done = true;
  }

  void Run() {
    resolver.async_resolve(
        url.host, url.port,
        [this](beast::error_code ec, tcp::resolver::results_type results) {
          if (ec) return Fail(ec);
          outcome.stage = "connecting";
          Lowest().expires_at(deadline);
          Lowest().async_connect(
              results, [this](beast::error_code ec, const tcp::endpoint&) {
                if (ec) return Fail(ec);
                Handshake();
              });
        });
  }

  void Handshake() {
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      Send();
    } else {
      outcome.stage = "in the TLS handshake";
      Lowest().expires_at(deadline);
      stream.async_handshake(asio::ssl::stream_base::client,
                             [this](beast::error_code ec) {
                               if (ec) return Fail(ec);
                               Send();
                             });
    }
  }

  void Send() {
    outcome.stage = "sending the query";
    Lowest().expires_at(deadline);
    bhttp::async_write(stream, request, [this](beast::error_code ec, size_t) {
      if (ec) return Fail(ec);
      outcome.stage = "reading the answer";
      Lowest().expires_at(deadline);
      // The header first: Boost 1.74's eager read of a whole message does
      // not hold a Content-Length to body_limit, so it is checked here.
      bhttp::async_read_header(
          stream, buffer, parser, [this](beast::error_code ec, size_t) {
            if (ec) return Fail(ec);
            const boost::optional<std::uint64_t> length =
                parser.content_length();
            if (length.has_value() && *length > max_bytes) {
              return Fail(bhttp::error::body_limit);
            }
            bhttp::async_read(stream, buffer, parser,
                              [this](beast::error_code ec, size_t) {
                                if (ec) return Fail(ec);
                                outcome.done = true;
                              });
          });
    });
  }
};

}  // namespace

absl::StatusOr<PrometheusUrl> ParsePrometheusUrl(absl::string_view url) {
  auto bad = [url](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--prometheus-url=", url, ": ", why,
                     "; expected http(s)://host[:port][/path-prefix], e.g. "
                     "http://prometheus-operated.monitoring.svc:9090"));
  };
  PrometheusUrl out;
  absl::string_view rest = url;
  const std::string lower = absl::AsciiStrToLower(url.substr(0, 8));
  if (absl::StartsWith(lower, "https://")) {
    out.https = true;
    rest.remove_prefix(8);
  } else if (absl::StartsWith(lower, "http://")) {
    rest.remove_prefix(7);
  } else {
    return bad("the scheme must be http:// or https://");
  }
  if (rest.find_first_of("?#") != absl::string_view::npos) {
    return bad("a query or fragment is not allowed");
  }
  const size_t slash = rest.find('/');
  absl::string_view authority = rest.substr(0, slash);
  absl::string_view path =
      slash == absl::string_view::npos ? "" : rest.substr(slash);
  while (absl::ConsumeSuffix(&path, "/")) {
  }
  for (const char c : path) {
    if (c <= 0x20 || c >= 0x7f) return bad("the path has a space or control");
  }
  out.path_prefix = std::string(path);
  if (authority.find('@') != absl::string_view::npos) {
    return bad(
        "user information is not allowed (use --prometheus-bearer-token-file)");
  }
  absl::string_view port;
  if (absl::ConsumePrefix(&authority, "[")) {
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) return bad("an unclosed [");
    out.host = std::string(authority.substr(0, close));
    authority.remove_prefix(close + 1);
    if (!authority.empty()) {
      if (!absl::ConsumePrefix(&authority, ":")) return bad("junk after ]");
      port = authority;
      if (port.empty()) return bad("an empty port");
    }
  } else {
    const size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != absl::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) return bad("an empty port");
    }
    for (const char c : out.host) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' &&
          c != '.' && c != '_') {
        return bad("the host has a character outside [A-Za-z0-9.-_]");
      }
    }
  }
  if (out.host.empty()) return bad("the host is missing");
  if (!port.empty()) {
    int number = 0;
    if (!absl::SimpleAtoi(port, &number) || number < 1 || number > 65535) {
      return bad("the port must be 1..65535");
    }
    out.port = std::to_string(number);
  } else {
    out.port = out.https ? "443" : "80";
  }
  return out;
}

absl::Status ValidatePrometheusClientOptions(
    const PrometheusClientOptions& options) {
  absl::StatusOr<PrometheusUrl> url = ParsePrometheusUrl(options.url);
  if (!url.ok()) return url.status();
  const bool tls_options =
      !options.ca_file.empty() || !options.cert_file.empty() ||
      !options.key_file.empty() || options.insecure_skip_verify;
  if (tls_options && !url->https) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--prometheus-ca-file, --prometheus-cert-file, --prometheus-key-file "
        "and --prometheus-insecure-skip-verify need an https:// "
        "--prometheus-url, not ",
        options.url));
  }
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--prometheus-cert-file and --prometheus-key-file go together: give "
        "both or neither");
  }
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--prometheus-timeout=", absl::FormatDuration(options.timeout),
        ": must be positive, e.g. 5s"));
  }
  if (url->https) {
    absl::StatusOr<std::unique_ptr<asio::ssl::context>> ctx =
        MakeTlsContext(options);
    if (!ctx.ok()) return absl::InvalidArgumentError(ctx.status().message());
  }
  if (!options.bearer_token_file.empty()) {
    absl::StatusOr<std::string> token = base::ReadBoundedFile(
        options.bearer_token_file,
        {.max_bytes = kMaxTokenBytes, .what = "the bearer token"});
    if (!token.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--prometheus-bearer-token-file: ", token.status().message()));
    }
    if (absl::StripAsciiWhitespace(*token).empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--prometheus-bearer-token-file=", options.bearer_token_file,
          ": the file is empty"));
    }
  }
  return absl::OkStatus();
}

std::string UrlEncode(absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() * 3);
  for (const char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) || c == '-' || c == '_' || c == '.' ||
        c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

PrometheusClient::PrometheusClient(PrometheusClientOptions options)
    : options_(std::move(options)) {
  absl::StatusOr<PrometheusUrl> url = ParsePrometheusUrl(options_.url);
  if (url.ok()) {
    url_ = *std::move(url);
  } else {
    url_status_ = url.status();
  }
}

absl::StatusOr<std::string> PrometheusClient::Token() {
  struct stat st {};
  if (stat(options_.bearer_token_file.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--prometheus-bearer-token-file=", options_.bearer_token_file,
        ": cannot stat it"));
  }
  const int64_t mtime_ns =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (st.st_ino == token_inode_ && st.st_size == token_size_ &&
      mtime_ns == token_mtime_ns_ && !token_.empty()) {
    return token_;
  }
  absl::StatusOr<std::string> token = base::ReadBoundedFile(
      options_.bearer_token_file,
      {.max_bytes = kMaxTokenBytes, .what = "the bearer token"});
  if (!token.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--prometheus-bearer-token-file: ", token.status().message()));
  }
  const absl::string_view stripped = absl::StripAsciiWhitespace(*token);
  if (stripped.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--prometheus-bearer-token-file=", options_.bearer_token_file,
        ": the file is empty"));
  }
  token_ = std::string(stripped);
  token_inode_ = st.st_ino;
  token_size_ = st.st_size;
  token_mtime_ns_ = mtime_ns;
  return token_;
}

namespace {

// GET <prefix>/api/v1/query?query=<promql>, one request a connection.
bhttp::request<bhttp::empty_body> QueryRequest(const PrometheusUrl& url,
                                               absl::string_view promql) {
  bhttp::request<bhttp::empty_body> request;
  request.method(bhttp::verb::get);
  request.version(11);
  request.target(
      absl::StrCat(url.path_prefix, "/api/v1/query?query=", UrlEncode(promql)));
  const bool default_port = url.port == (url.https ? "443" : "80");
  const std::string host_header = url.host.find(':') != std::string::npos
                                      ? absl::StrCat("[", url.host, "]")
                                      : url.host;
  request.set(
      bhttp::field::host,
      default_port ? host_header : absl::StrCat(host_header, ":", url.port));
  request.set(bhttp::field::user_agent, "compatd-fleet");
  request.set(bhttp::field::accept, "application/json");
  request.set(bhttp::field::connection, "close");
  return request;
}

// The exchange's outcome as the answer's body (200, or Prometheus' own JSON
// error), or why there is none.
absl::StatusOr<std::string> Answer(
    const Outcome& outcome, bhttp::response_parser<bhttp::string_body>& parser,
    const PrometheusClientOptions& options, const std::string& where) {
  if (outcome.ec) {
    if (outcome.ec == beast::error::timeout) {
      return absl::DeadlineExceededError(absl::StrCat(
          where, " did not answer within ",
          absl::FormatDuration(options.timeout), " (", outcome.stage, ")"));
    }
    if (outcome.ec == bhttp::error::body_limit) {
      return absl::ResourceExhaustedError(absl::StrCat(
          where, " answered more than ", options.max_answer_bytes, " bytes"));
    }
    return absl::UnavailableError(absl::StrCat(
        where, ": failed ", outcome.stage, ": ", outcome.ec.message()));
  }
  bhttp::response<bhttp::string_body> response = parser.release();
  if (response.body().size() > options.max_answer_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        where, " answered more than ", options.max_answer_bytes, " bytes"));
  }
  if (response.result_int() == 200) return std::move(response.body());
  const absl::string_view body = response.body();
  const auto content_type = response[bhttp::field::content_type];
  const absl::string_view type(content_type.data(), content_type.size());
  if (absl::StartsWith(type, "application/json") &&
      absl::StartsWith(absl::StripLeadingAsciiWhitespace(body), "{")) {
    return std::move(response.body());  // Prometheus' own error JSON
  }
  return absl::InternalError(
      absl::StrCat(where, " answered HTTP ", response.result_int(), ": ",
                   absl::CEscape(body.substr(0, kMaxQuotedBody))));
}

}  // namespace

absl::StatusOr<std::string> PrometheusClient::Query(absl::string_view promql) {
  if (!url_status_.ok()) return url_status_;
  bhttp::request<bhttp::empty_body> request = QueryRequest(url_, promql);
  if (!options_.bearer_token_file.empty()) {
    absl::StatusOr<std::string> token = Token();
    if (!token.ok()) return token.status();
    request.set(bhttp::field::authorization, absl::StrCat("Bearer ", *token));
  }

  const auto timeout = absl::ToChronoMilliseconds(options_.timeout);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  asio::io_context ioc(1);
  std::unique_ptr<asio::ssl::context> tls;
  if (url_.https) {
    absl::StatusOr<std::unique_ptr<asio::ssl::context>> made =
        MakeTlsContext(options_);
    if (!made.ok()) return made.status();
    tls = *std::move(made);
  }
  tcp::resolver resolver(ioc);
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.header_limit(64 << 10);
  parser.body_limit(options_.max_answer_bytes);
  Outcome outcome;

  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  if (url_.https) {
    secure.emplace(ioc, *tls);
    SSL* ssl = secure->native_handle();
    if (IsIpLiteral(url_.host)) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), url_.host.c_str());
    } else {
      SSL_set_tlsext_host_name(ssl, url_.host.c_str());
      SSL_set1_host(ssl, url_.host.c_str());
    }
  } else {
    plain.emplace(ioc);
  }
  std::optional<Exchange<beast::tcp_stream>> plain_exchange;
  std::optional<Exchange<beast::ssl_stream<beast::tcp_stream>>> secure_exchange;
  if (secure) {
    secure_exchange.emplace(Exchange<beast::ssl_stream<beast::tcp_stream>>{
        *secure, resolver, url_, deadline, request, buffer, parser, outcome,
        options_.max_answer_bytes});
    secure_exchange->Run();
  } else {
    plain_exchange.emplace(Exchange<beast::tcp_stream>{
        *plain, resolver, url_, deadline, request, buffer, parser, outcome,
        options_.max_answer_bytes});
    plain_exchange->Run();
  }
  ioc.run_for(timeout);
  const std::string where = absl::StrCat("Prometheus at ", options_.url);
  if (!outcome.done) {
    // Name resolution runs on Asio's own thread and cannot be interrupted:
    // the handlers are dropped with the io_context instead.
    resolver.cancel();
    if (plain) plain->close();
    if (secure) beast::get_lowest_layer(*secure).close();
    ioc.stop();
    return absl::DeadlineExceededError(absl::StrCat(
        where, " did not answer within ",
        absl::FormatDuration(options_.timeout), " (", outcome.stage, ")"));
  }
  return Answer(outcome, parser, options_, where);
}

}  // namespace compatd::fleet
