#pragma once

// `compatd scan -o sarif`: a scan as a SARIF 2.1.0 log (OASIS Static
// Analysis Results Interchange Format), the form GitHub code scanning and
// other CI tools take to show findings inline. One run; the tool "compatd"
// with one rule per kind of finding (compatd/deprecated, compatd/removed,
// compatd/not-served, compatd/not-yet-introduced, compatd/unknown,
// compatd/crd-violation) and compatd/bad-document for documents that could
// not be read. Each result names its rule (ruleId, ruleIndex), its level
// (warning for deprecated, error otherwise), its file as a URI relative to
// the checkout (%SRCROOT%) and its line, and carries the target release and
// the object in its properties; partialFingerprints identify an object
// across runs whatever lines move.

#include <ostream>

#include "compatd/v1/compatd.pb.h"

namespace compatd::api {

void PrintScanSarif(const v1::ScanObjectsResponse& response, std::ostream& out);

}  // namespace compatd::api
