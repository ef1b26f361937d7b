// The measurement harness as it was run (bench/http_choice/README.md).
// clang-format off
// AdmissionReview field extraction benchmark.
// Extracts: request.uid, request.operation, request.kind{group,version,kind},
//           request.object.apiVersion/kind/metadata.name/metadata.namespace,
//           request.object.spec.versions[].name/served/storage, request.object.status.storedVersions
// usage: jsonbench FILE...           (timing + allocation counts)
//        jsonbench --robust          (malformed / duplicate keys / deep nesting behaviour)
#include <dlfcn.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/arena.h>
#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>
#include <simdjson.h>

// ------------------------------------------------------------ allocation counting (glibc interposition)
extern "C" void *__libc_malloc(size_t);
extern "C" void *__libc_calloc(size_t, size_t);
extern "C" void *__libc_realloc(void *, size_t);
extern "C" void *__libc_memalign(size_t, size_t);
extern "C" void __libc_free(void *);
static bool g_count = false;
static size_t g_allocs = 0, g_bytes = 0;
extern "C" void *malloc(size_t n) {
  if (g_count) g_allocs++, g_bytes += n;
  return __libc_malloc(n);
}
extern "C" void *calloc(size_t a, size_t b) {
  if (g_count) g_allocs++, g_bytes += a * b;
  return __libc_calloc(a, b);
}
extern "C" void *realloc(void *p, size_t n) {
  if (g_count) g_allocs++, g_bytes += n;
  return __libc_realloc(p, n);
}
extern "C" void free(void *p) { __libc_free(p); }
extern "C" int posix_memalign(void **r, size_t al, size_t n) {
  if (g_count) g_allocs++, g_bytes += n;
  *r = __libc_memalign(al, n);
  return *r ? 0 : 12;
}
extern "C" void *aligned_alloc(size_t al, size_t n) {
  if (g_count) g_allocs++, g_bytes += n;
  return __libc_memalign(al, n);
}
extern "C" void *memalign(size_t al, size_t n) {
  if (g_count) g_allocs++, g_bytes += n;
  return __libc_memalign(al, n);
}

// ------------------------------------------------------------ result
struct Version {
  std::string name;
  bool served = false, storage = false;
};
struct Out {
  std::string uid, op, kgroup, kversion, kkind, api, okind, name, ns;
  std::vector<Version> versions;
  std::vector<std::string> stored;
  void clear() { *this = Out{}; }
  std::string str() const {
    std::string s = uid + "|" + op + "|" + kgroup + "/" + kversion + "/" + kkind + "|" + api + "|" + okind + "|" + name + "|" + ns;
    for (auto &v : versions) s += "|" + v.name + (v.served ? ",served" : "") + (v.storage ? ",storage" : "");
    for (auto &v : stored) s += "|stored:" + v;
    return s;
  }
};

// ------------------------------------------------------------ (a) simdjson on-demand
namespace od = simdjson::ondemand;
static bool ex_simdjson_od(od::parser &p, const char *buf, size_t len, size_t cap, Out &o, std::string *err = nullptr) {
  try {
    od::document doc = p.iterate(buf, len, cap);
    od::object req = doc["request"].get_object();
    o.uid = std::string_view(req["uid"]);
    {
      od::object k = req["kind"].get_object();
      o.kgroup = std::string_view(k["group"]);
      o.kversion = std::string_view(k["version"]);
      o.kkind = std::string_view(k["kind"]);
    }
    o.op = std::string_view(req["operation"]);
    od::object obj = req["object"].get_object();
    o.api = std::string_view(obj["apiVersion"]);
    o.okind = std::string_view(obj["kind"]);
    {
      od::object md = obj["metadata"].get_object();
      o.name = std::string_view(md["name"]);
      std::string_view ns;
      if (md["namespace"].get(ns) == simdjson::SUCCESS) o.ns = ns;
    }
    if (o.okind == "CustomResourceDefinition") {
      od::object spec = obj["spec"].get_object();
      for (od::object v : spec["versions"].get_array()) {
        Version ver;
        ver.name = std::string_view(v["name"]);
        ver.served = bool(v["served"]);
        ver.storage = bool(v["storage"]);
        o.versions.push_back(std::move(ver));
      }
      od::object status = obj["status"].get_object();
      for (std::string_view sv : status["storedVersions"].get_array()) o.stored.emplace_back(sv);
    }
    return true;
  } catch (simdjson::simdjson_error &e) {
    if (err) *err = e.what();
    return false;
  }
}

// simdjson DOM (fully validating, reuses its tape)
static bool ex_simdjson_dom(simdjson::dom::parser &p, const char *buf, size_t len, Out &o) {
  simdjson::dom::element doc;
  if (p.parse(buf, len, false).get(doc)) return false;
  auto req = doc["request"];
  o.uid = std::string_view(req["uid"]);
  o.kgroup = std::string_view(req["kind"]["group"]);
  o.kversion = std::string_view(req["kind"]["version"]);
  o.kkind = std::string_view(req["kind"]["kind"]);
  o.op = std::string_view(req["operation"]);
  auto obj = req["object"];
  o.api = std::string_view(obj["apiVersion"]);
  o.okind = std::string_view(obj["kind"]);
  o.name = std::string_view(obj["metadata"]["name"]);
  std::string_view ns;
  if (!obj["metadata"]["namespace"].get(ns)) o.ns = ns;
  if (o.okind == "CustomResourceDefinition") {
    for (auto v : obj["spec"]["versions"].get_array()) {
      o.versions.push_back({std::string(std::string_view(v["name"])), bool(v["served"]), bool(v["storage"])});
    }
    for (auto sv : obj["status"]["storedVersions"].get_array()) o.stored.emplace_back(std::string_view(sv));
  }
  return true;
}

// ------------------------------------------------------------ (b) protobuf Struct
namespace pb = google::protobuf;
static const pb::Value *field(const pb::Struct &s, const char *k) {
  auto it = s.fields().find(k);
  return it == s.fields().end() ? nullptr : &it->second;
}
static bool nav_struct(const pb::Struct &st, Out &o) {
  auto *r = field(st, "request");
  if (!r) return false;
  auto &req = r->struct_value();
  o.uid = field(req, "uid")->string_value();
  o.op = field(req, "operation")->string_value();
  auto &k = field(req, "kind")->struct_value();
  o.kgroup = field(k, "group")->string_value();
  o.kversion = field(k, "version")->string_value();
  o.kkind = field(k, "kind")->string_value();
  auto &obj = field(req, "object")->struct_value();
  o.api = field(obj, "apiVersion")->string_value();
  o.okind = field(obj, "kind")->string_value();
  auto &md = field(obj, "metadata")->struct_value();
  o.name = field(md, "name")->string_value();
  if (auto *ns = field(md, "namespace")) o.ns = ns->string_value();
  if (o.okind == "CustomResourceDefinition") {
    for (auto &v : field(field(obj, "spec")->struct_value(), "versions")->list_value().values()) {
      auto &vs = v.struct_value();
      o.versions.push_back({field(vs, "name")->string_value(), field(vs, "served")->bool_value(),
                            field(vs, "storage")->bool_value()});
    }
    for (auto &v : field(field(obj, "status")->struct_value(), "storedVersions")->list_value().values())
      o.stored.push_back(v.string_value());
  }
  return true;
}
static bool ex_protobuf(const char *buf, size_t len, Out &o, std::string *err = nullptr) {
  pb::Struct st;
  auto s = pb::util::JsonStringToMessage(pb::StringPiece(buf, len), &st);
  if (!s.ok()) {
    if (err) *err = s.ToString();
    return false;
  }
  return nav_struct(st, o);
}
static bool ex_protobuf_arena(const char *buf, size_t len, Out &o) {
  pb::ArenaOptions ao;
  ao.start_block_size = 64 * 1024;
  pb::Arena arena(ao);
  auto *st = pb::Arena::CreateMessage<pb::Struct>(&arena);
  if (!pb::util::JsonStringToMessage(pb::StringPiece(buf, len), st).ok()) return false;
  return nav_struct(*st, o);
}

// ------------------------------------------------------------ (c) RapidJSON SAX (path-matching state machine)
struct SaxHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, SaxHandler> {
  // Keys are interned to small ids: with a non-insitu Reader the key buffer is only valid
  // during the Key() callback, so string_views must not be kept.
  enum K : uint8_t { OTHER, ROOT, ELEM, REQUEST, KIND, OBJECT, METADATA, SPEC, VERSIONS, STATUS, STORED,
                     UID, OPERATION, GROUP, VERSION, APIVERSION, NAME, NAMESPACE, SERVED, STORAGE };
  Out &o;
  std::vector<K> path;     // one entry per open container: the key (or ELEM) under which it sits
  std::vector<bool> is_arr;
  K key = OTHER;
  explicit SaxHandler(Out &out) : o(out) { path.reserve(64), is_arr.reserve(64); }
  static K intern(std::string_view k) {
    switch (k.size()) {
      case 3: return k == "uid" ? UID : OTHER;
      case 4: return k == "kind" ? KIND : k == "spec" ? SPEC : k == "name" ? NAME : OTHER;
      case 5: return k == "group" ? GROUP : OTHER;
      case 6: return k == "object" ? OBJECT : k == "status" ? STATUS : k == "served" ? SERVED : OTHER;
      case 7: return k == "request" ? REQUEST : k == "version" ? VERSION : k == "storage" ? STORAGE : OTHER;
      case 8: return k == "metadata" ? METADATA : k == "versions" ? VERSIONS : OTHER;
      case 9: return k == "operation" ? OPERATION : k == "namespace" ? NAMESPACE : OTHER;
      case 10: return k == "apiVersion" ? APIVERSION : OTHER;
      case 14: return k == "storedVersions" ? STORED : OTHER;
      default: return OTHER;
    }
  }
  bool under(std::initializer_list<K> p) const {  // exact container path from root
    if (path.size() != p.size()) return false;
    return std::equal(p.begin(), p.end(), path.begin());
  }
  bool Key(const char *s, rapidjson::SizeType n, bool) { return key = intern({s, n}), true; }
  void val_str(std::string_view v) {
    if (is_arr.empty()) return;
    if (is_arr.back()) {
      if (under({ROOT, REQUEST, OBJECT, STATUS, STORED})) o.stored.emplace_back(v);
      return;
    }
    switch (path.size()) {
      case 2:
        if (path[1] == REQUEST) {
          if (key == UID) o.uid = v;
          else if (key == OPERATION) o.op = v;
        }
        break;
      case 3:
        if (under({ROOT, REQUEST, KIND})) {
          if (key == GROUP) o.kgroup = v;
          else if (key == VERSION) o.kversion = v;
          else if (key == KIND) o.kkind = v;
        } else if (under({ROOT, REQUEST, OBJECT})) {
          if (key == APIVERSION) o.api = v;
          else if (key == KIND) o.okind = v;
        }
        break;
      case 4:
        if (under({ROOT, REQUEST, OBJECT, METADATA})) {
          if (key == NAME) o.name = v;
          else if (key == NAMESPACE) o.ns = v;
        }
        break;
      case 6:
        if (key == NAME && under({ROOT, REQUEST, OBJECT, SPEC, VERSIONS, ELEM})) o.versions.back().name = v;
        break;
    }
  }
  void val_bool(bool b) {
    if (path.size() == 6 && !is_arr.back() && under({ROOT, REQUEST, OBJECT, SPEC, VERSIONS, ELEM})) {
      if (key == SERVED) o.versions.back().served = b;
      else if (key == STORAGE) o.versions.back().storage = b;
    }
  }
  void push(bool arr) {
    K k = path.empty() ? ROOT : is_arr.back() ? ELEM : key;
    if (!arr && k == ELEM && under({ROOT, REQUEST, OBJECT, SPEC, VERSIONS})) o.versions.emplace_back();
    path.push_back(k);
    is_arr.push_back(arr);
  }
  bool Null() { return true; }
  bool Bool(bool b) { return val_bool(b), true; }
  bool Int(int) { return true; }
  bool Uint(unsigned) { return true; }
  bool Int64(int64_t) { return true; }
  bool Uint64(uint64_t) { return true; }
  bool Double(double) { return true; }
  bool String(const char *s, rapidjson::SizeType n, bool) { return val_str({s, n}), true; }
  bool StartObject() { return push(false), true; }
  bool EndObject(rapidjson::SizeType) { return path.pop_back(), is_arr.pop_back(), true; }
  bool StartArray() { return push(true), true; }
  bool EndArray(rapidjson::SizeType) { return path.pop_back(), is_arr.pop_back(), true; }
};
// NB: string_views handed to the handler point into the input (in-situ) or into the reader's
// stack buffer (copying mode) -> copied into Out immediately, so both are safe.
static bool ex_rapid_sax(const char *buf, size_t len, Out &o, std::string *err = nullptr) {
  SaxHandler h(o);
  rapidjson::Reader r;
  rapidjson::MemoryStream ms(buf, len);
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> is(ms);
  auto res = r.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag>(is, h);
  if (res.IsError()) {
    if (err) *err = std::string(rapidjson::GetParseError_En(res.Code())) + " at offset " + std::to_string(res.Offset());
    return false;
  }
  return true;
}

// RapidJSON DOM (MemoryPoolAllocator)
static bool ex_rapid_dom(const char *buf, size_t len, Out &o) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseIterativeFlag>(buf, len);
  if (d.HasParseError()) return false;
  auto &req = d["request"];
  auto S = [](const rapidjson::Value &v) { return std::string(v.GetString(), v.GetStringLength()); };
  o.uid = S(req["uid"]);
  o.op = S(req["operation"]);
  o.kgroup = S(req["kind"]["group"]);
  o.kversion = S(req["kind"]["version"]);
  o.kkind = S(req["kind"]["kind"]);
  auto &obj = req["object"];
  o.api = S(obj["apiVersion"]);
  o.okind = S(obj["kind"]);
  o.name = S(obj["metadata"]["name"]);
  if (obj["metadata"].HasMember("namespace")) o.ns = S(obj["metadata"]["namespace"]);
  if (o.okind == "CustomResourceDefinition") {
    for (auto &v : obj["spec"]["versions"].GetArray()) o.versions.push_back({S(v["name"]), v["served"].GetBool(), v["storage"].GetBool()});
    for (auto &v : obj["status"]["storedVersions"].GetArray()) o.stored.push_back(S(v));
  }
  return true;
}

// ------------------------------------------------------------ (d) nlohmann DOM
static bool ex_nlohmann(const char *buf, size_t len, Out &o, std::string *err = nullptr) {
  try {
    auto j = nlohmann::json::parse(buf, buf + len);
    auto &req = j.at("request");
    o.uid = req.at("uid").get<std::string>();
    o.op = req.at("operation").get<std::string>();
    o.kgroup = req.at("kind").at("group").get<std::string>();
    o.kversion = req.at("kind").at("version").get<std::string>();
    o.kkind = req.at("kind").at("kind").get<std::string>();
    auto &obj = req.at("object");
    o.api = obj.at("apiVersion").get<std::string>();
    o.okind = obj.at("kind").get<std::string>();
    o.name = obj.at("metadata").at("name").get<std::string>();
    if (obj["metadata"].contains("namespace")) o.ns = obj["metadata"]["namespace"].get<std::string>();
    if (o.okind == "CustomResourceDefinition") {
      for (auto &v : obj.at("spec").at("versions"))
        o.versions.push_back({v.at("name").get<std::string>(), v.at("served").get<bool>(), v.at("storage").get<bool>()});
      for (auto &v : obj.at("status").at("storedVersions")) o.stored.push_back(v.get<std::string>());
    }
    return true;
  } catch (std::exception &e) {
    if (err) *err = e.what();
    return false;
  }
}

// ------------------------------------------------------------ harness
static std::string slurp(const char *p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Case {
  const char *name;
  std::function<bool(const char *, size_t, size_t, Out &)> fn;
};

static void bench(const char *file) {
  std::string raw = slurp(file);
  size_t len = raw.size(), cap = len + simdjson::SIMDJSON_PADDING;
  // the "network buffer": allocated with padding capacity, as a server would
  std::vector<char> buf(cap, ' ');
  std::memcpy(buf.data(), raw.data(), len);
  static od::parser odp;  // one parser per worker thread in a server: reused across documents
  static simdjson::dom::parser domp;
  std::vector<Case> cases = {
      {"simdjson-ondemand", [&](const char *b, size_t l, size_t c, Out &o) { return ex_simdjson_od(odp, b, l, c, o); }},
      {"simdjson-ondemand+copy(padded_string)",
       [&](const char *b, size_t l, size_t, Out &o) {
         simdjson::padded_string ps(b, l);
         return ex_simdjson_od(odp, ps.data(), ps.size(), ps.size() + simdjson::SIMDJSON_PADDING, o);
       }},
      {"simdjson-dom(validating)", [&](const char *b, size_t l, size_t, Out &o) { return ex_simdjson_dom(domp, b, l, o); }},
      {"rapidjson-sax(iterative)", [&](const char *b, size_t l, size_t, Out &o) { return ex_rapid_sax(b, l, o); }},
      {"rapidjson-dom", [&](const char *b, size_t l, size_t, Out &o) { return ex_rapid_dom(b, l, o); }},
      {"protobuf-Struct", [&](const char *b, size_t l, size_t, Out &o) { return ex_protobuf(b, l, o); }},
      {"protobuf-Struct(arena)", [&](const char *b, size_t l, size_t, Out &o) { return ex_protobuf_arena(b, l, o); }},
      {"nlohmann-dom", [&](const char *b, size_t l, size_t, Out &o) { return ex_nlohmann(b, l, o); }},
  };
  std::string ref;
  std::printf("\n## %s (%zu bytes)\n", file, len);
  std::printf("%-40s %10s %10s %10s %10s %12s %12s  %s\n", "parser", "us/doc", "min_us", "MB/s", "allocs", "alloc_bytes", "cold_bytes", "ok");
  for (auto &c : cases) {
    Out o;
    // cold allocation (first call on a fresh parser object is only meaningful for simdjson)
    g_allocs = g_bytes = 0;
    g_count = true;
    bool first_ok = c.fn(buf.data(), len, cap, o);
    g_count = false;
    size_t cold_allocs = g_allocs, cold_bytes = g_bytes;
    if (!first_ok) {
      std::printf("%-40s FAILED\n", c.name);
      continue;
    }
    std::string got = o.str();
    if (ref.empty()) ref = got;
    // steady-state allocations for one document
    o.clear();
    Out o2;
    g_allocs = g_bytes = 0;
    g_count = true;
    c.fn(buf.data(), len, cap, o2);
    g_count = false;
    size_t allocs = g_allocs, bytes = g_bytes;
    // timing: batches of >= 50 ms, 9 batches, report median and min
    int iters = 1;
    for (;;) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; i++) {
        Out x;
        c.fn(buf.data(), len, cap, x);
      }
      double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (dt > 0.05) break;
      iters *= 2;
    }
    std::vector<double> per;
    for (int b = 0; b < 9; b++) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; i++) {
        Out x;
        c.fn(buf.data(), len, cap, x);
      }
      per.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters);
    }
    std::sort(per.begin(), per.end());
    std::printf("%-40s %10.2f %10.2f %10.0f %10zu %12zu %12zu  %s\n", c.name, per[4], per[0], len / per[4], allocs, bytes, cold_bytes,
                got == ref ? "same-result" : ("DIFF: " + got).c_str());
  }
  std::printf("extracted: %s\n", ref.c_str());
}

// ------------------------------------------------------------ robustness
#include <sys/wait.h>
#include <unistd.h>
// run fn in a forked child (crash/hang isolation), 20 s limit, prints elapsed ms and fate
static void isolated(const char *what, const std::function<void()> &fn) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    auto t0 = std::chrono::steady_clock::now();
    fn();
    std::printf("      (%s took %.2f ms)\n", what,
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    std::fflush(stdout);
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (WIFSIGNALED(st))
    std::printf("  %-18s: KILLED by signal %d (%s)\n", what, WTERMSIG(st),
                WTERMSIG(st) == SIGALRM ? "timeout 20 s" : WTERMSIG(st) == SIGSEGV ? "stack overflow / crash" : "?");
}

static void robust() {
  auto show = [](const char *label, std::string s) {
    std::printf("\n### %s\n  input(%zu B): %.90s%s\n", label, s.size(), s.c_str(), s.size() > 90 ? "..." : "");
    Out o;
    std::string err;
    // simdjson ondemand
    od::parser p;
    simdjson::padded_string ps(s);
    bool ok = ex_simdjson_od(p, ps.data(), ps.size(), ps.size() + simdjson::SIMDJSON_PADDING, o, &err);
    std::printf("  simdjson-ondemand : %s %s\n", ok ? "OK " : "ERR", ok ? o.str().c_str() : err.c_str());
    // error position for ondemand: re-iterate and walk the whole document to get current_location()
    {
      od::parser p2;
      od::document doc;
      if (auto ie = p2.iterate(ps).get(doc)) {
        std::printf("    iterate() error: %s\n", simdjson::error_message(ie));
      } else {
        // full traversal to force validation of the whole document
        int lvl = 0;
        std::function<simdjson::error_code(od::value)> walk = [&](od::value v) -> simdjson::error_code {
          struct Guard { int &l; Guard(int &x) : l(x) { ++l; } ~Guard() { --l; } } g(lvl);
          if (lvl > 3000) return simdjson::UNEXPECTED_ERROR;  // our own recursion guard (walker, not simdjson)
          od::json_type t;
          if (auto e = v.type().get(t)) return e;
          if (t == od::json_type::object) {
            od::object ob;
            if (auto e = v.get_object().get(ob)) return e;
            for (auto f : ob) {
              od::value fv;
              if (auto e = f.value().get(fv)) return e;
              if (auto e = walk(fv)) return e;
            }
          } else if (t == od::json_type::array) {
            od::array a;
            if (auto e = v.get_array().get(a)) return e;
            for (auto el : a) {
              od::value ev;
              if (auto e = el.get(ev)) return e;
              if (auto e = walk(ev)) return e;
            }
          } else {
            if (t == od::json_type::string) { std::string_view sv; return v.get_string().get(sv); }
            if (t == od::json_type::number) { double d; return v.get_double().get(d); }
            if (t == od::json_type::boolean) { bool b; return v.get_bool().get(b); }
            if (t == od::json_type::null) { bool n; return v.is_null().get(n); }
          }
          return simdjson::SUCCESS;
        };
        od::value root;
        simdjson::error_code e = doc.get_value().get(root);
        if (!e) e = walk(root);
        const char *loc = nullptr;
        auto le = doc.current_location().get(loc);
        std::printf("    full-walk: %s; current_location(): %s\n", e ? simdjson::error_message(e) : "valid",
                    le ? simdjson::error_message(le) : ("offset " + std::to_string(loc - ps.data())).c_str());
      }
    }
    {
      simdjson::dom::parser dp;
      simdjson::dom::element el;
      auto e = dp.parse(ps).get(el);
      std::printf("  simdjson-dom      : %s\n", e ? simdjson::error_message(e) : "valid");
    }
    isolated("protobuf-Struct", [&] {
      Out o; std::string err;
      bool ok = ex_protobuf(s.data(), s.size(), o, &err);
      std::printf("  protobuf-Struct   : %s %s\n", ok ? "OK " : "ERR", ok ? o.str().c_str() : err.substr(0, 150).c_str());
    });
    isolated("rapidjson-sax", [&] {
      Out o; std::string err;
      bool ok = ex_rapid_sax(s.data(), s.size(), o, &err);
      std::printf("  rapidjson-sax     : %s %s\n", ok ? "OK " : "ERR", ok ? o.str().c_str() : err.c_str());
    });
    isolated("rapidjson-dom(recursive default)", [&] {
      rapidjson::Document d;
      d.Parse(s.data(), s.size());
      std::printf("  rapidjson-dom-rec : %s\n", d.HasParseError() ? rapidjson::GetParseError_En(d.GetParseError()) : "parsed");
    });
    isolated("nlohmann", [&] {
      Out o; std::string err;
      bool ok = ex_nlohmann(s.data(), s.size(), o, &err);
      std::printf("  nlohmann          : %s %s\n", ok ? "OK " : "ERR", ok ? o.str().c_str() : err.substr(0, 150).c_str());
    });
  };
  std::string good = slurp("deploy_10kib.json");
  show("valid deployment", good);
  show("truncated (last 100 bytes cut)", good.substr(0, good.size() - 100));
  {
    std::string s = good;
    auto pos = s.find("\"replicas\":3");
    s.replace(pos, 12, "\"replicas\":3x");  // bad token in the part the extractor never reads
    show("bad token inside object.spec (never read by extractor)", s);
  }
  {
    std::string s = good;
    auto pos = s.find("\"uid\":\"705ab4f5");
    s.replace(pos, 6, "\"uid\":");  // no-op
    s.insert(s.find("\"operation\""), "\"operation\":\"DELETE\",");  // duplicate key: first DELETE then CREATE
    show("duplicate key request.operation (DELETE first, CREATE second)", s);
  }
  {
    std::string s = good;
    s.insert(s.find("\"dryRun\""), "\"uid\":\"evil-second-uid\",");  // duplicate uid late in the request object
    show("duplicate key request.uid (second one after object)", s);
  }
  {
    std::string s = good;
    s += " garbage";
    show("trailing garbage", s);
  }
  {
    std::string s = good;
    auto pos = s.find("team-b");
    s[pos] = '\xff';
    show("invalid UTF-8 in metadata.namespace", s);
  }
  for (int depth : {200, 1100, 100000}) {
    std::string s = "{\"request\":{\"uid\":\"u\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"X\"},\"operation\":\"CREATE\","
                    "\"object\":{\"apiVersion\":\"v1\",\"kind\":\"X\",\"metadata\":{\"name\":\"n\"},\"deep\":";
    s += std::string(depth, '[') + std::string(depth, ']') + "}}}";
    show(("deep nesting " + std::to_string(depth) + " arrays after the extracted fields").c_str(), s);
    std::string s2 = "{\"request\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
    show(("deep nesting " + std::to_string(depth) + " arrays at request").c_str(), s2);
  }
}

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc > 1 && std::string(argv[1]) == "--robust") {
    robust();
    return 0;
  }
  std::printf("simdjson: runtime-dispatched (DOM) implementation: %s; compile-time builtin (On-Demand): %s\n",
              simdjson::get_active_implementation()->name().c_str(), simdjson::builtin_implementation()->name().c_str());
  for (int i = 1; i < argc; i++) bench(argv[i]);
}
