# Sets COMPATD_REVISION, the revision compatd reports (compatd_build_info, --version):
#   - as given (-DCOMPATD_REVISION=0123456789ab), e.g. by the Dockerfile from its REVISION build
#     argument, since the image's build context has no .git;
#   - else `git rev-parse --short=12 HEAD` in COMPATD_REVISION_SOURCE_DIR;
#   - else "unknown".
# Also runs as a script, printing the result (tests/deploy/dockerfile_test.cc):
#   cmake -DCOMPATD_REVISION_SOURCE_DIR=DIR [-DCOMPATD_REVISION=R] -P cmake/compatd_revision.cmake
if(NOT COMPATD_REVISION)
  execute_process(COMMAND git rev-parse --short=12 HEAD
                  WORKING_DIRECTORY ${COMPATD_REVISION_SOURCE_DIR}
                  OUTPUT_VARIABLE COMPATD_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
if(NOT COMPATD_REVISION)
  set(COMPATD_REVISION "unknown")
endif()
if(CMAKE_SCRIPT_MODE_FILE)
  message("${COMPATD_REVISION}")
endif()
