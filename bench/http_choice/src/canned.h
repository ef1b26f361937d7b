// The measurement harness as it was run (bench/http_choice/README.md).
// clang-format off
#pragma once
static const char kCanned[] = R"JSON({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true,"status":{"code":200,"message":"compatd: object is compatible with all served API versions..........................................................."},"warnings":[]}})JSON";
static const unsigned kCannedLen = sizeof(kCanned) - 1;
