# benchtrail-server image. Not exercised by CI (no Docker engine there); kept plain on purpose.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release -p benchtrail-server -p benchtrail-runner

FROM debian:bookworm-slim
RUN useradd --system --home /var/lib/benchtrail benchtrail && mkdir -p /var/lib/benchtrail && chown benchtrail /var/lib/benchtrail
COPY --from=build /src/target/release/benchtrail-server /src/target/release/benchtrail /usr/local/bin/
USER benchtrail
WORKDIR /var/lib/benchtrail
ENV BENCHTRAIL_BIND=0.0.0.0:8080
EXPOSE 8080
CMD ["benchtrail-server"]
