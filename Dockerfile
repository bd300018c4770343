# kivi-lint with everything it runs: spin, a C compiler for the generated verifiers, git (for
# --changed-since), kustomize and Helm.
#
# Build: docker build -t kivi-lint .
# Run, as the owner of the workspace so that reports can be written to it:
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD:/repo" kivi-lint .
#
# Every base image is pinned by digest and every download by checksum; Dependabot
# (.github/dependabot.yml) proposes updates. The last stage (the default) compiles the binary
# from this checkout; the release workflow builds `--target prebuilt`, from the static
# binaries it publishes. Docker BuildKit and buildah/podman build it alike: stages are chosen
# by name (no stage named by an ARG, which buildah skips as unused), images are named in
# full (no registry search list needed), the target architecture defaults to the build
# machine's, and downloads are checked with sha256sum (buildah 1.28 has no ADD --checksum).

# The binary, compiled from this checkout.
FROM docker.io/library/rust:1.95-bookworm@sha256:6258907abe69656e41cd992e0b705cdcfabcbbe3db374f92ed2d47121282d4a1 AS source
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY templates ./templates
RUN cargo build --release --locked \
    && strip target/release/kivi-lint \
    && cp target/release/kivi-lint /kivi-lint

# kustomize from source at a pinned version, cross-compiled on the build machine; Go's
# checksum database verifies every module.
FROM --platform=$BUILDPLATFORM docker.io/library/golang:1.24-bookworm@sha256:1a6d4452c65dea36aac2e2d606b01b4a029ec90cc1ae53890540ce6173ea77ac AS kustomize
ARG TARGETOS
ARG TARGETARCH
# (`go install` puts a cross-compiled binary under bin/<os>_<arch>/, a native one in bin/.)
# Without TARGETARCH (buildah without --platform) the target is the build machine.
RUN os="${TARGETOS:-linux}" && arch="${TARGETARCH:-$(go env GOARCH)}" \
    && GOOS="$os" GOARCH="$arch" CGO_ENABLED=0 \
    go install sigs.k8s.io/kustomize/kustomize/v5@v5.4.3 \
    && mkdir /out \
    && bin="$(go env GOPATH)/bin" \
    && if [ -f "$bin/${os}_${arch}/kustomize" ]; then bin="$bin/${os}_${arch}"; fi \
    && cp "$bin/kustomize" /out/kustomize

# Helm, the version scripts/install-helm pins (v4.1.4), a release archive checked against the
# SHA-256 its release notes publish for each architecture (the checksums pin the version).
FROM docker.io/library/debian:bookworm-slim@sha256:3783cc01769c7b2b1b83a5c5ad96c815348e28ed7da68e2e3687004faa906251 AS helm
ARG TARGETARCH
ADD https://get.helm.sh/helm-v4.1.4-linux-amd64.tar.gz /tmp/helm-amd64.tar.gz
ADD https://get.helm.sh/helm-v4.1.4-linux-arm64.tar.gz /tmp/helm-arm64.tar.gz
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN printf '%s  %s\n' \
        70b2c30a19da4db264dfd68c8a3664e05093a361cefd89572ffb36f8abfa3d09 /tmp/helm-amd64.tar.gz \
        13d03672be289045d2ff00e4e345d61de1c6f21c1257a45955a30e8ae036d8f1 /tmp/helm-arm64.tar.gz \
        | sha256sum -c - \
    && arch="${TARGETARCH:-$(dpkg --print-architecture)}" \
    && tar -xzf "/tmp/helm-${arch}.tar.gz" -C /tmp "linux-${arch}/helm" \
    && mv "/tmp/linux-${arch}/helm" /helm

# Everything the image runs but the binary.
FROM docker.io/library/debian:bookworm-slim@sha256:3783cc01769c7b2b1b83a5c5ad96c815348e28ed7da68e2e3687004faa906251 AS runtime
# spin, gcc and tcc are pinned: the verifiers they build decide the verdicts, and bookworm
# keeps these versions (tcc builds the quick verifiers most units need, gcc the long ones). git, the C library headers and the CA certificates take bookworm's
# security updates, so they are not pinned to a version the archive would drop.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        spin=6.5.2+dfsg-1 gcc=4:12.2.0-3 tcc=0.9.27+git20200814.62c30a4a-1 libc6-dev git ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY docker/gitconfig /etc/gitconfig
COPY --from=kustomize /out/kustomize /usr/local/bin/kustomize
COPY --from=helm /helm /usr/local/bin/helm
COPY LICENSE /usr/share/doc/kivi-lint/LICENSE
# Any uid can run the image (`--user "$(id -u):$(id -g)"`, pre-commit's docker hooks,
# GitLab runners): HOME may not exist for it, so the verifier cache defaults to a directory
# every user may create files in. Mount a volume or pass --cache-dir to keep it between runs.
RUN mkdir -m 1777 /cache
ENV KIVI_LINT_CACHE_DIR=/cache
# Not root by default, and numeric so that Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
WORKDIR /repo
ENTRYPOINT ["kivi-lint"]
CMD ["."]

# The image from the release workflow's static binary for the target architecture
# (`--target prebuilt`, with dist/linux-<arch>/kivi-lint in the context).
FROM runtime AS prebuilt
ARG TARGETARCH
COPY dist/linux-${TARGETARCH:-amd64}/kivi-lint /usr/local/bin/kivi-lint

# The default: the binary compiled from this checkout.
FROM runtime AS image
COPY --from=source /kivi-lint /usr/local/bin/kivi-lint
