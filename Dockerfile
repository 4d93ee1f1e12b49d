# rxgem serve: the OpenAI-compatible gateway in front of Gemini, as a container.
#
#   docker build -t rxgem .
#   docker run -p 8000:8000 -e GEMINI_API_KEY -e RXGEM_CLIENT_TOKENS=my-token rxgem
#
# Configuration is the environment, read by `rxgem serve` (see settings_from_env):
#   GEMINI_API_KEY (or RXGEM_API_KEY)   the server's Gemini key: give it at run time, never here
#   RXGEM_CLIENT_TOKENS                 the bearer tokens clients send, comma-separated
#   RXGEM_PASS_THROUGH_AUTH=1           or: each client's bearer token is its own Gemini key
#   RXGEM_CORS_ORIGINS                  browser origins allowed to call the API, comma-separated
#   RXGEM_UPSTREAM, RXGEM_ACCESS_TOKEN  another Gemini base URL (Vertex AI and its token)
#   RXGEM_LOG_LEVEL, RXGEM_METRICS, and every limit and timeout (RXGEM_MAX_*, RXGEM_*_TIMEOUT)
# Arguments after the image name go to `rxgem serve` (e.g. --workers 4).
#
# Open requests get RXGEM_SHUTDOWN_GRACE seconds (30) after SIGTERM; `docker stop` kills after
# 10 unless given more (docker run --stop-timeout 40).

ARG PYTHON_VERSION=3.12

# The build: a wheel with the hot modules compiled by mypyc (setup.py). Without a working
# compiler the build falls back to the pure-Python package, which does the same, slower.
FROM python:${PYTHON_VERSION}-slim-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md LICENSE ./
COPY rxgem ./rxgem
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

# The image: the wheel with the server extra, no compiler and no dev tools.
FROM python:${PYTHON_VERSION}-slim-bookworm
ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=build /wheels/ /tmp/wheels/
RUN wheel=$(ls /tmp/wheels/rxgem-*.whl) \
    && pip install "${wheel}[server]" \
    && rm -rf /tmp/wheels \
    && groupadd --system --gid 10001 rxgem \
    && useradd --system --uid 10001 --gid rxgem --create-home --shell /usr/sbin/nologin rxgem

USER 10001:10001
WORKDIR /home/rxgem

# Read only by the HEALTHCHECK below: change it with the port (or publish another one: -p 9000:8000).
ENV RXGEM_HEALTHCHECK_URL=http://127.0.0.1:8000/healthz
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(os.environ['RXGEM_HEALTHCHECK_URL'], timeout=4)"]

EXPOSE 8000
ENTRYPOINT ["rxgem", "serve", "--host", "0.0.0.0"]
CMD ["--port", "8000"]
