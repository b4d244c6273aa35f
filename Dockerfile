# The Prill image: the release's prebuilt `prill` on a distroless base, run as a user
# who is not root. No compiler and no build stage: the image holds the very binary the
# release publishes (the same bytes as its checksummed archive), a build takes seconds
# and needs no Rust toolchain, and the arm64 image is a copy, not a compile under
# emulation. Built and run by .ci/container; docs/ci.md shows how CI uses it.
#
# The release (both architectures in one go; a COPY-only build needs no emulation):
#   dist/amd64/prill   the x86_64-unknown-linux-musl binary
#   dist/arm64/prill   the aarch64-unknown-linux-musl binary
#   docker buildx build --platform linux/amd64,linux/arm64 --build-arg VERSION=0.1.0 -t IMAGE .
# One binary of your own: --build-arg PRILL_BINARY=path/to/prill (inside the context).

# Distroless Debian 12, about 3 MB: CA certificates (for the model providers' https),
# time zones, /etc/passwd with `nonroot` (65532), and, in the `debug` variants only,
# busybox's `sh`, which GitLab CI needs to run a job's `script` in the image. No
# package manager, no libc: enough for the static musl binary. `:nonroot` drops busybox
# (no shell at all) for `docker run` and Kubernetes; a glibc build of prill (such as
# `cargo build` on a Linux host) needs `gcr.io/distroless/cc-debian12:debug-nonroot`
# (adds glibc and libgcc).
ARG BASE=gcr.io/distroless/static-debian12:debug-nonroot
FROM ${BASE}

# Set by BuildKit, buildx and buildah for each platform built: amd64, arm64.
ARG TARGETARCH
# The binary to put in the image, a path inside the build context.
ARG PRILL_BINARY=dist/${TARGETARCH}/prill
ARG VERSION=dev

# The image's only layer of its own: the binary, executable by everyone (`--chmod`
# needs BuildKit or buildah, not Docker's legacy builder). /usr/local/bin is on the
# base's PATH, so `prill` works from a CI script as well as as the entrypoint.
COPY --chmod=0755 ${PRILL_BINARY} /usr/local/bin/prill

# Not root: the numeric id of distroless's `nonroot` (numeric, so that Kubernetes'
# runAsNonRoot can check it). Costs nothing. Prill writes its reports and its history
# (.prill/) in the project: a GitLab checkout is writable by any user (the runner's
# umask 0000, or its chown with FF_DISABLE_UMASK_FOR_DOCKER_EXECUTOR); a folder mounted
# with `docker run -v` needs `--user "$(id -u):$(id -g)"` or to be writable by 65532.
USER 65532:65532

# Where `docker run -v "$PWD:/work"` puts a project. CI runners set their own.
WORKDIR /work

# `docker run IMAGE run --demo fixtures/quickstart` runs `prill run ...`. A CI system
# that runs a script in the image (GitLab's `image:`) must clear it: `entrypoint: [""]`.
ENTRYPOINT ["/usr/local/bin/prill"]
CMD ["--help"]

# Registry metadata (OCI annotations): where the source is, what license, which version.
LABEL org.opencontainers.image.title="prill" \
      org.opencontainers.image.description="Tests AI agents and LLM applications from data-driven test files" \
      org.opencontainers.image.source="https://github.com/prill-dev/prill" \
      org.opencontainers.image.licenses="MIT OR Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
