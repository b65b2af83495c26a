# shardbench in a small image: the static binary, the shipped scenarios and designs, and
# nothing else (no shell, no package manager), running as a non-root user.
#
#   docker build -t shardbench:$(git describe --always --dirty) --build-arg VERSION=$(git describe --always --dirty) .
#   docker run --rm shardbench:... run scenarios/smoke.yaml --backend null --quiet
#
# Every shard of a distributed run must run the same build (merge refuses shards written by
# different versions): tag images by commit, not :latest. docker/kubernetes/ runs it as
# an Indexed Job; docker/distributed/ runs it as containers beside the compose clusters.

# ---- build: Go, the module cache, a static binary (profile-guided, as `make build`) ----
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
COPY reports ./reports
COPY workloads ./workloads
ARG VERSION=dev
# CGO off: a static binary for a distroless base; cmd/shardbench/default.pgo is applied
# by go build itself (the main package's default profile).
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/shardbench ./cmd/shardbench

# ---- run: distroless static, uid 65532 ----
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/shardbench /usr/local/bin/shardbench
COPY --chown=65532:65532 scenarios /opt/shardbench/scenarios
WORKDIR /opt/shardbench
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/shardbench"]
CMD ["--help"]
