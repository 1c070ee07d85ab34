# etld container image: a static binary on an empty base, run as a
# non-root user. Pipelines are mounted read-only, state lives on a volume.
#
#   docker build -t etld --build-arg VERSION=$(git describe --always) .
#   docker run -d --name etld \
#     -v "$PWD/pipelines:/etc/etld/pipelines:ro" -v etld-state:/var/lib/etld \
#     -e ES_PASSWORD=... etld
#   docker kill -s HUP etld     # reload the pipelines directory
#
# The admin server listens on 127.0.0.1:9464 inside the container (the
# health check and a sidecar in the same pod reach it there); set
# ETLD_ADMIN_ADDRESS=0.0.0.0:9464 and publish the port for a Prometheus
# outside.
#
# Without a golang image to pull, `make image` builds the same image from
# a binary built on the host (Dockerfile.prebuilt); keep this file's final
# stage from USER on equal to that one's.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# No cgo: the binary needs no libc and runs on an empty image.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/etld ./cmd/etld
# The directories the image declares, owned by the runtime user, and the
# CA bundle for TLS to Kafka and Elasticsearch.
RUN mkdir -p /out/etc/etld/pipelines /out/var/lib/etld /out/tmp \
 && chown 65532:65532 /out/var/lib/etld \
 && chmod 1777 /out/tmp \
 && echo 'etld:x:65532:65532:etld:/var/lib/etld:/sbin/nologin' > /out/etc/passwd \
 && echo 'etld:x:65532:' > /out/etc/group

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/ /
USER 65532:65532
# Defaults that match etld's own: pipelines in /etc/etld/pipelines (mount
# it read-only), checkpoints in /var/lib/etld. A mounted
# /etc/etld/etld.yaml is used with: run --config /etc/etld/etld.yaml
VOLUME ["/var/lib/etld"]
EXPOSE 9464
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/etld", "healthcheck"]
# SIGTERM drains and flushes; give `docker stop -t 60` for big batches.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/etld"]
CMD ["run", "--daemon"]
