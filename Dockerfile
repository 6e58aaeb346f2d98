# stormcf in a container, on Debian bookworm (Debian's python3 3.11; the stormpy 2.0 wheel is manylinux_2_34, and it
# needs libatomic.so.1 at run time, which slim images lack). Build and run:
#   docker build -t stormcf . && docker run --rm stormcf demo
#   docker run --rm -v "$PWD:/work" -w /work stormcf check model.prism --prop 'Pmax=? [F "goal"]' --json out.json
# The entry point (docker/entrypoint.sh) runs stormcf as the owner of the working directory, so that a mounted run
# writes its outputs there (owned by you); without a mount, as the unprivileged user stormcf. `-u UID:GID` works too.
# On machines without a registry: scripts/container_smoke.sh (podman, a locally bootstrapped debian:bookworm-slim).
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv libatomic1 graphviz ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY . /src
RUN python3 -m venv /opt/stormcf \
 && /opt/stormcf/bin/pip install --no-cache-dir "/src[all]" \
 && install -m 0755 /src/docker/entrypoint.sh /usr/local/bin/stormcf-entrypoint \
 && rm -rf /src \
 && useradd --create-home --uid 1000 stormcf
ENV PATH=/opt/stormcf/bin:$PATH MPLBACKEND=Agg
WORKDIR /home/stormcf
ENTRYPOINT ["stormcf-entrypoint", "stormcf"]
CMD ["--help"]
