# stormcf in a container: `docker build -t stormcf . && docker run --rm -v "$PWD:/work" -w /work stormcf demo`
# The stormpy 2.0 wheel is manylinux_2_34 (glibc >= 2.34): Debian bookworm images qualify.
FROM python:3.11-slim-bookworm
COPY . /src
RUN pip install --no-cache-dir "/src[all]" && rm -rf /src
ENTRYPOINT ["stormcf"]
CMD ["--help"]
