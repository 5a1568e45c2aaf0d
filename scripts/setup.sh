#!/usr/bin/env bash
# Installs what the project needs and is missing: Debian packages, cargo-pgrx
# pinned to the pgrx version of the workspace, pgrx's PostgreSQL 15 config
# (in the checkout's own PGRX_HOME, common.sh),
# and the dashboard's npm packages (its bundler and libraries, as
# dashboard/package-lock.json pins them).
source "$(dirname "$0")/common.sh"

packages=(postgresql-15 postgresql-server-dev-15 postgresql-15-plproxy libclang-dev clang sudo pkg-config python3-venv curl xz-utils)
# What one caller needs beyond these (the fusion bench: wrk).
read -r -a extra <<< "${QUEEN_SETUP_EXTRA:-}"
packages+=("${extra[@]}")
# Node.js and npm build the dashboard; a Node.js already installed (say
# from its vendor's packages) is used as it is.
command -v npm >/dev/null || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    if ! is_root && ! command -v sudo >/dev/null; then
        echo "need root or sudo to install: ${missing[*]}" >&2
        exit 1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! cargo pgrx --version 2>/dev/null | grep -q "$PGRX_VERSION"; then
    say "installing cargo-pgrx $PGRX_VERSION (a few minutes, once)"
    cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
fi

PG15_CONFIG=/usr/lib/postgresql/15/bin/pg_config
if ! grep -qF "pg15 = \"$PG15_CONFIG\"" "$PGRX_HOME/config.toml" 2>/dev/null; then
    say "pointing pgrx at the system PostgreSQL 15"
    cargo pgrx init --pg15 "$PG15_CONFIG" >/dev/null
fi

# The dashboard's packages, again whenever its lock file changed.
dashboard="$ROOT/dashboard"
if ! cmp -s "$dashboard/package-lock.json" "$dashboard/node_modules/.queen-installed-lock"; then
    say "installing the dashboard's npm packages"
    (cd "$dashboard" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
    cp "$dashboard/package-lock.json" "$dashboard/node_modules/.queen-installed-lock"
fi
