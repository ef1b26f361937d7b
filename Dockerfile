# compatd container image, built on Debian 12 from Debian's own packages only
# (docs/deployment.md, "Container image").
#
#   docker build -t compatd:0.1.0 --build-arg VERSION=0.1.0 \
#     --build-arg REVISION=$(git rev-parse --short=12 HEAD) .
#   docker run --rm --read-only -p 127.0.0.1:50051:50051 -p 127.0.0.1:9464:9464 compatd:0.1.0
#   docker run ... -v $PWD/catalogs:/catalogs:ro compatd:0.1.0 --catalog=/catalogs/my.yaml
#
# Build arguments: DEBIAN_IMAGE (the base of both stages, default debian:12: a
# mirror or a pinned digest of it), VERSION (what compatd --version and
# compatd_build_info report, and the image's version label: one value for
# both), REVISION (the revision they report, and the revision label).
#
# Invariants checked by tests/deploy/dockerfile_test.cc, without a container
# engine (the machines that run the tests have none):
#  * the build stage installs exactly scripts/install-deps.sh's BUILD_PACKAGES
#    (install-deps.sh --build-only), so the two lists cannot drift, and a
#    -DBUILD_TESTING=OFF configure needs none of its DEV_PACKAGES;
#  * the REVISION build argument reaches the compile (compatd_build_info,
#    --version): the build context has no .git to ask; VERSION reaches the
#    compile and the label, and its default is the project's version;
#  * each stage's apt-get cleans up after itself in the same RUN;
#  * the runtime stage installs a Debian package for every shared library the
#    built binary needs (ldd + dpkg -S), and nothing else;
#  * a numeric non-root user; the listen flags (all interfaces of the
#    container's network namespace, ports 50051 and 9464) in the ENTRYPOINT
#    and an empty CMD, so that arguments given to `docker run` are added to
#    them instead of replacing them (a later --listen still wins); OCI
#    labels.

ARG DEBIAN_IMAGE=debian:12
# The version compatd reports and the image is labelled with; the default is
# CMakeLists.txt's project(VERSION).
ARG VERSION=0.1.0

FROM ${DEBIAN_IMAGE} AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
# What building compatd needs, and no test, benchmark or tool package.
RUN apt-get update \
 && bash scripts/install-deps.sh --build-only \
 && rm -rf /var/lib/apt/lists/*
COPY . .
# The version and revision compatd reports (compatd_build_info, --version); the
# context has no .git for CMake to ask.
ARG VERSION
ARG REVISION=unknown
# Release, no tests (they run in CI on the source tree, not in the image).
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
      -DCOMPATD_VERSION="${VERSION}" -DCOMPATD_REVISION="${REVISION}" \
 && cmake --build /build -j"$(nproc)" --target compatd \
 && install -D -m 0755 -s /build/service/compatd /out/usr/local/bin/compatd

FROM ${DEBIAN_IMAGE} AS runtime
# The shared libraries of `ldd compatd`, by Debian package (dpkg -S).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libabsl20220623 \
      libc-ares2 \
      libc6 \
      libgcc-s1 \
      libgrpc++1.51 \
      libgrpc29 \
      libprometheus-cpp-core1.0 \
      libprotobuf32 \
      libre2-9 \
      libsimdjson14 \
      libssl3 \
      libstdc++6 \
      libyaml-0-2 \
      zlib1g \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/usr/local/bin/compatd /usr/local/bin/compatd

ARG DEBIAN_IMAGE
ARG VERSION
ARG REVISION=unknown
LABEL org.opencontainers.image.title="compatd" \
      org.opencontainers.image.description="Kubernetes compatibility-version answers (KEP-4330) over gRPC" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="${DEBIAN_IMAGE}"

# compatd writes nothing to disk (logs go to stderr, the catalog is read
# only), so the root filesystem can be mounted read-only; TMPDIR points at
# the one place a tmp volume may be mounted.
ENV TMPDIR=/tmp
# Numeric, so that Kubernetes' runAsNonRoot can verify it without /etc/passwd.
USER 65532:65532
EXPOSE 50051 9464
# The listen addresses are defaults of the image, not of a command line: in the
# ENTRYPOINT, arguments given to `docker run` (or a pod's `args`) come after
# them, and a later --listen or --metrics-listen overrides them. CMD is empty
# (not debian:12's "bash").
ENTRYPOINT ["compatd", "--listen=0.0.0.0:50051", "--metrics-listen=0.0.0.0:9464"]
CMD []
