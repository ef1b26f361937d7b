// CatalogSet: one catalog per kube-apiserver release line, picked by the
// request's binary version (DESIGN.md, "Every release line").

#include "engine/catalog_set.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/count_allocations.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::HasSubstr;

std::shared_ptr<const Catalog> Line(absl::string_view binary,
                                    absl::string_view source) {
  auto catalog = std::make_shared<Catalog>();
  catalog->binary_version = Version::Parse(binary).value();
  catalog->source = std::string(source);
  return catalog;
}

std::vector<std::shared_ptr<const Catalog>> ThreeLines() {
  return {Line("1.36.0", "c36"), Line("1.33.3", "c33"), Line("1.34.7", "c34")};
}

TEST(CatalogSetTest, SortsLinesAndDefaultsToTheNewest) {
  auto set = CatalogSet::Make(ThreeLines()).value();
  EXPECT_EQ(set->line_names(), "1.33, 1.34, 1.36");
  EXPECT_EQ(set->default_catalog().source, "c36");
  EXPECT_EQ(set->lines().front()->source, "c33");
}

TEST(CatalogSetTest, ResolvesAnyPatchOfALineToItsCatalog) {
  auto set = CatalogSet::Make(ThreeLines()).value();
  EXPECT_EQ(set->Resolve("").value()->source, "c36");
  EXPECT_EQ(set->Resolve("1.34").value()->source, "c34");
  EXPECT_EQ(set->Resolve("v1.34.1").value()->source, "c34");
  EXPECT_EQ(set->Resolve("1.33.0-alpha.1").value()->source, "c33");
}

TEST(CatalogSetTest, ABinaryWithoutACatalogIsInvalidArgumentNamingTheLines) {
  auto set = CatalogSet::Make(ThreeLines()).value();
  EXPECT_THAT(set->Resolve("1.35"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("versions.binaryVersion \"1.35\": no catalog "
                                 "describes kube-apiserver 1.35")));
  EXPECT_THAT(
      set->Resolve("1.37.0"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("the release lines it has are 1.33, 1.34, 1.36")));
  EXPECT_THAT(
      set->Resolve("banana", "from.binaryVersion"),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          HasSubstr("from.binaryVersion \"banana\" is not a kube-apiserver "
                    "version: accepted forms are MAJOR.MINOR")));
}

TEST(CatalogSetTest, DefaultLineIsChosenOrRefused) {
  auto set = CatalogSet::Make(ThreeLines(), Version::Parse("1.34").value());
  ASSERT_TRUE(set.ok());
  EXPECT_EQ((*set)->default_catalog().source, "c34");
  EXPECT_EQ((*set)->Resolve("").value()->source, "c34");
  EXPECT_THAT(CatalogSet::Make(ThreeLines(), Version::Parse("1.32").value()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("no catalog describes that release line")));
}

TEST(CatalogSetTest, TwoCatalogsOfOneLineAreRefused) {
  EXPECT_THAT(
      CatalogSet::Make({Line("1.34.1", "a.yaml"), Line("1.34.7", "b.yaml")}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("two catalogs describe kube-apiserver 1.34: a.yaml")));
  EXPECT_THAT(CatalogSet::Make({}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("needs at least one catalog")));
}

TEST(CatalogSetTest, ResolvingALineAllocatesNothing) {
  auto set = CatalogSet::Make(ThreeLines()).value();
  size_t found = 0;
  const long before = ::compatd::testing::Allocations();
  for (int i = 0; i < 1000; ++i) {
    for (absl::string_view binary :
         {"", "1.33", "v1.34.1", "1.36.0-alpha.1", " 1.34.7+build"}) {
      absl::StatusOr<size_t> index = set->ResolveIndex(binary);
      if (index.ok()) found += *index;
    }
  }
  EXPECT_EQ(::compatd::testing::Allocations() - before, 0);
  EXPECT_EQ(found, 1000u * (2 + 0 + 1 + 2 + 1));
}

TEST(CatalogSetTest, ResolveIndexAgreesWithResolve) {
  auto set = CatalogSet::Make(ThreeLines()).value();
  for (absl::string_view binary :
       {"", "1.33", "v1.34.1", "1.36.0", "1.35", "1.2a.3", "x", "01.33"}) {
    absl::StatusOr<size_t> index = set->ResolveIndex(binary);
    absl::StatusOr<const Catalog*> catalog = set->Resolve(binary);
    ASSERT_EQ(index.ok(), catalog.ok()) << binary;
    if (index.ok()) {
      EXPECT_EQ(set->lines()[*index].get(), *catalog) << binary;
    } else {
      EXPECT_EQ(index.status(), catalog.status()) << binary;
    }
  }
}

TEST(CatalogSetTest, SingleHoldsOneLine) {
  auto set = CatalogSet::Single(Line("1.34.2", "mine.yaml"));
  EXPECT_EQ(set->line_names(), "1.34");
  EXPECT_EQ(set->Resolve("1.34.9").value()->source, "mine.yaml");
  EXPECT_FALSE(set->Resolve("1.36").ok());
}

}  // namespace
}  // namespace compatd::engine
