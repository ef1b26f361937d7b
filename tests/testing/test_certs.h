#pragma once

// Certificates made at test time with the openssl CLI (EC P-256, valid for 2
// days), in a temporary directory that removes itself. Header-only.
//
//   TestCerts certs;                       // mkdtemp under $TMPDIR or /tmp
//   ASSERT_TRUE(certs.MakeCa("ca1"));      // ca1.crt, ca1.key
//   ASSERT_TRUE(certs.MakeServer("ca1", "server1"));  // SAN 127.0.0.1
//   ASSERT_TRUE(certs.MakeClient("ca1", "client1"));
//   certs.Path("server1.crt");  certs.Read("ca1.crt");

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace compatd::testing {

class TestCerts {
 public:
  TestCerts() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
        "/compatd-certs-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) dir_ = pattern;
  }
  ~TestCerts() {
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }
  TestCerts(const TestCerts&) = delete;
  TestCerts& operator=(const TestCerts&) = delete;

  const std::string& dir() const { return dir_; }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string Read(const std::string& name) const {
    std::ifstream in(Path(name), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
  }

  // A self-signed CA: <name>.crt, <name>.key.
  bool MakeCa(const std::string& name) const {
    return Run(
        "openssl req -x509 -newkey ec -pkeyopt "
        "ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=" +
        name + " -keyout " + name + ".key -out " + name + ".crt");
  }

  // A server certificate for 127.0.0.1 and localhost signed by `ca`.
  bool MakeServer(const std::string& ca, const std::string& name) const {
    return MakeLeaf(ca, name,
                    "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                    "extendedKeyUsage=serverAuth\n");
  }

  // A client certificate signed by `ca`.
  bool MakeClient(const std::string& ca, const std::string& name) const {
    return MakeLeaf(ca, name, "extendedKeyUsage=clientAuth\n");
  }

  // Copies `from` over `to` the way a Secret volume update does: write a new
  // file, then rename it into place (readers see the old or the new file).
  bool Replace(const std::string& from, const std::string& to) const {
    std::error_code error;
    std::filesystem::copy_file(
        Path(from), Path(to + ".new"),
        std::filesystem::copy_options::overwrite_existing, error);
    if (error) return false;
    std::filesystem::rename(Path(to + ".new"), Path(to), error);
    return !error;
  }

 private:
  bool MakeLeaf(const std::string& ca, const std::string& name,
                const std::string& extensions) const {
    {
      std::ofstream ext(Path(name + ".ext"));
      ext << extensions;
    }
    return Run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
               "-nodes -subj /CN=" +
               name + " -keyout " + name + ".key -out " + name + ".csr") &&
           Run("openssl x509 -req -days 2 -in " + name + ".csr -CA " + ca +
               ".crt -CAkey " + ca + ".key -CAcreateserial -extfile " + name +
               ".ext -out " + name + ".crt");
  }

  bool Run(const std::string& command) const {
    if (dir_.empty()) return false;
    const std::string line =
        "cd '" + dir_ + "' && " + command + " >/dev/null 2>&1";
    return std::system(line.c_str()) == 0;
  }

  std::string dir_;
};

}  // namespace compatd::testing
