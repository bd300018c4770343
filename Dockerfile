# kivi-lint with everything it runs: spin, a C compiler for the generated verifiers, git (for
# --changed-since) and kustomize. Build: docker build -t kivi-lint .
# Run:   docker run --rm -v "$PWD:/repo" -w /repo kivi-lint .

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY templates ./templates
RUN cargo build --release --locked && strip target/release/kivi-lint

# kustomize from source at a pinned version; Go's checksum database verifies the modules.
FROM golang:1.24-bookworm AS kustomize
RUN GOBIN=/out CGO_ENABLED=0 go install sigs.k8s.io/kustomize/kustomize/v5@v5.4.3

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends spin gcc libc6-dev git ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=kustomize /out/kustomize /usr/local/bin/kustomize
COPY --from=build /src/target/release/kivi-lint /usr/local/bin/kivi-lint
# Not root; compiled verifiers are cached under the user's home (mount a volume to keep them).
RUN useradd --create-home --uid 10001 kivi
USER kivi
ENV KIVI_LINT_CACHE_DIR=/home/kivi/.cache/kivi-lint
WORKDIR /repo
ENTRYPOINT ["kivi-lint"]
CMD ["."]
