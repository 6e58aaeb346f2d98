# stormcf in a container, on Debian bookworm (Debian's python3 3.11; the stormpy 2.0 wheel is manylinux_2_34, and it
# needs libatomic.so.1 at run time, which slim images lack). Build and run:
#   docker build -t stormcf . && docker run --rm stormcf demo
#   docker run --rm -v "$PWD:/work" -w /work stormcf check model.prism --prop 'Pmin=? [F "goal"]' --json out.json
# The default image has the core and the extras `solvers,plot,dask` (Gurobi, highspy, matplotlib, Dask): every
# command but the training of set-cover network generators, about 1 GB. With PyTorch's CPU build as well (the `learn`
# extra, about 0.9 GB more; docs/install.md):
#   docker build --build-arg EXTRAS=all --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cpu -t stormcf:learn .
# Layers: the system and the dependencies first, stormcf's own code last, so that a change of the code rebuilds one
# small layer (seconds); a change of setup.py's requirements or of EXTRAS rebuilds the dependencies.
# The entry point (docker/entrypoint.sh) runs stormcf as the owner of the working directory, so that a mounted run
# writes its outputs there (owned by you); without a mount, as the unprivileged user stormcf. `-u UID:GID` works too.
# scripts/container_smoke.sh builds the image, runs it and measures it.
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv libatomic1 graphviz ca-certificates \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 1000 stormcf \
 && python3 -m venv /opt/stormcf
ENV PATH=/opt/stormcf/bin:$PATH MPLBACKEND=Agg
ARG PIP_NO_CACHE_DIR=1
# the extras installed (setup.py: solvers, plot, dask, learn, all); TORCH_INDEX: a package index pip also reads, for
# PyTorch's CPU build when the extras include it (PyPI's Linux wheel of torch is the CUDA build, several GB)
ARG EXTRAS=solvers,plot,dask
ARG TORCH_INDEX=
# the dependencies, from setup.py alone: stormcf's requirements are installed with a placeholder package, which is
# then removed (a README or code change does not reach this layer)
COPY setup.py pyproject.toml /tmp/deps/
RUN cd /tmp/deps && mkdir stormcf prism_models && touch README.md stormcf/__init__.py \
 && pip install ${TORCH_INDEX:+--extra-index-url "$TORCH_INDEX"} ".[$EXTRAS]" \
 && pip uninstall --yes stormcf \
 && cd / && rm -rf /tmp/deps
COPY docker/entrypoint.sh /usr/local/bin/stormcf-entrypoint
COPY . /tmp/src
RUN pip install --no-deps /tmp/src && rm -rf /tmp/src
WORKDIR /home/stormcf
ENTRYPOINT ["stormcf-entrypoint", "stormcf"]
CMD ["--help"]
