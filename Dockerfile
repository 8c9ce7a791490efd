# fluss-sidecar image: a static binary on an empty base, run as a non-root
# user. Build: make image (needs a Docker daemon), or
#   docker build -t fluss-sidecar .
# Without Docker: make image-buildah (scripts/build-image.sh builds the same
# final stage with buildah; go test ./deploy/image/ keeps the two in step).
# Run: mount a Fluss-style server.yaml at /etc/fluss-sidecar/server.yaml.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Stamped as make build does (fluss-sidecar version, build_info); make image
# passes them.
ARG VERSION=dev
ARG COMMIT=unknown
ARG BUILD_TIME=unknown
# Static: no cgo, so the binary needs no libc in the image.
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags="-s -w -X github.com/fluss-sidecar/fluss-sidecar/buildinfo.version=${VERSION} -X github.com/fluss-sidecar/fluss-sidecar/buildinfo.commit=${COMMIT} -X github.com/fluss-sidecar/fluss-sidecar/buildinfo.buildTime=${BUILD_TIME}" \
      -o /out/fluss-sidecar ./cmd/fluss-sidecar \
 && mkdir -p /out/etc/fluss-sidecar /out/var/lib/fluss-sidecar

FROM scratch
# CA roots for https to S3, GCS and Azure.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/fluss-sidecar /fluss-sidecar
COPY --from=build --chown=65532:65532 /out/etc/fluss-sidecar /etc/fluss-sidecar
# For a local remote.data.dir (file://); object stores need no volume.
COPY --from=build --chown=65532:65532 /out/var/lib/fluss-sidecar /var/lib/fluss-sidecar
USER 65532:65532
# 9123: Fluss RPC (bind.listeners). 9124: its tablet-server endpoint
# (sidecar.tablet-server.listeners). 9249: /metrics, /healthz, /readyz
# (metrics.reporter.prometheus.port).
EXPOSE 9123 9124 9249
ENTRYPOINT ["/fluss-sidecar"]
CMD ["serve", "--config", "/etc/fluss-sidecar/server.yaml"]
