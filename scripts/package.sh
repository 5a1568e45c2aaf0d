#!/usr/bin/env bash
# make package: what an operator copies onto a database server, for the
# PostgreSQL of the pg_config used (QUEEN_PG_MAJOR=15, the default, 16, 17 or 18):
# target/package/queen-<version>-pg<major>-<arch>.tar.gz, holding
#   lib/queen.so                 the extension's library
#   extension/                   its control file, install and update scripts
#   bin/queen_front              the HTTP front-end
#   share/front_role.sql         the front-end's role
#   install.sh                   copies lib/ and extension/ where pg_config
#                                says (PG_CONFIG, default pg_config on PATH)
# docs/operations.md says how to install and configure it.
#
#   QUEEN_PACKAGE_PREBUILT=1   skip set-up (cargo-pgrx is installed)
source "$(dirname "$0")/common.sh"

cd "$ROOT"
if [ "${QUEEN_PACKAGE_PREBUILT:-0}" != 1 ]; then
    "$ROOT/scripts/setup.sh"
fi
[ "$PG_MAJOR" = 18 ] && pg18_install
[ "$PG_MAJOR" = 16 ] && pg16_install
[ "$PG_MAJOR" = 17 ] && pg17_install
VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
NAME="queen-$VERSION-pg$PG_MAJOR-$(dpkg --print-architecture 2>/dev/null || uname -m)"
OUT="$ROOT/target/package"
STAGE="$OUT/$NAME"
TREE="$OUT/pgrx-pg$PG_MAJOR"

say "packaging queen $VERSION for PostgreSQL $PG_MAJOR"
rm -rf "$STAGE" "$TREE"
mkdir -p "$STAGE/lib" "$STAGE/extension" "$STAGE/bin" "$STAGE/share"
(cd queen_ext && cargo pgrx package --pg-config "$PG_CONFIG" --out-dir "$TREE" >/dev/null)
cargo build -q --release -p queen_front
cp "$TREE$("$PG_CONFIG" --pkglibdir)/queen.so" "$STAGE/lib/"
cp "$TREE$("$PG_CONFIG" --sharedir)/extension/"queen* "$STAGE/extension/"
cp target/release/queen_front "$STAGE/bin/"
cp scripts/front_role.sql "$STAGE/share/"
cp LICENSE "$STAGE/"
cat > "$STAGE/install.sh" <<'SH'
#!/bin/sh
# Copies queen's library and SQL files into the PostgreSQL that pg_config
# describes (PG_CONFIG, default the pg_config on PATH). Run as root, or as
# the owner of that PostgreSQL's files.
set -eu
PG_CONFIG="${PG_CONFIG:-pg_config}"
here="$(cd "$(dirname "$0")" && pwd)"
libdir="$("$PG_CONFIG" --pkglibdir)"
extdir="$("$PG_CONFIG" --sharedir)/extension"
# The library is put in place by a rename: a running server keeps the
# file it loaded until its restart.
install -m 755 "$here/lib/queen.so" "$libdir/queen.so.new"
mv -f "$libdir/queen.so.new" "$libdir/queen.so"
install -m 644 "$here"/extension/* "$extdir/"
echo "queen installed into $libdir and $extdir"
SH
chmod 755 "$STAGE/install.sh"
tar -C "$OUT" -czf "$OUT/$NAME.tar.gz" "$NAME"
rm -rf "$TREE"
say "target/package/$NAME.tar.gz"
