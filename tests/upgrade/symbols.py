"""Every C symbol keeps one meaning: the checks the upgrade tests run.

A database at an older version calls the new library through the symbols
its install and update scripts named (`AS 'MODULE_PATHNAME', 'x_wrapper'`)
until it is updated (docs/upgrades.md). So every symbol any script of the
extension ever declared must still be in the library, and where the current
version declares it too, with the same argument types: a function whose
arguments change gets a new symbol.
"""

import glob
import re

CREATE = re.compile(
    r"CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+[\w.\"]+\s*\((?P<args>[^;]*?)\)\s*RETURNS\b"
    r"(?P<rest>[^;]*?)AS\s+'MODULE_PATHNAME'\s*,\s*'(?P<symbol>\w+)'",
    re.S | re.I,
)
COMMENT = re.compile(r"/\*.*?\*/|--[^\n]*", re.S)
TYPE_WORDS = {"int", "integer", "bigint", "smallint", "text", "json", "jsonb", "bool", "boolean",
              "bytea", "timestamp", "timestamptz", "double", "real", "uuid", "numeric",
              "interval", "oid", "name"}
SPELLINGS = {"int": "integer", "int4": "integer", "int8": "bigint", "bool": "boolean",
             "timestamptz": "timestamp with time zone", "float8": "double precision"}


def split_top(text):
    """`text` split at the commas outside quotes and parentheses."""
    parts, depth, quote, cur = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def normal(type_text):
    """A type as pg_catalog.oidvectortypes spells it."""
    t = " ".join(type_text.lower().split())
    array = t.endswith("[]")
    base = t[:-2].strip() if array else t
    base = SPELLINGS.get(base, base)
    return base + ("[]" if array else "")


def arg_type(arg):
    """The type of one declared argument (`"name" TYPE DEFAULT ...`)."""
    arg = re.split(r"\s+DEFAULT\s+|\s*=\s*", arg.strip(), maxsplit=1, flags=re.I)[0]
    words = arg.split()
    if words and words[0].upper() in ("IN", "VARIADIC"):
        words = words[1:]
    if len(words) > 1 and (words[0].startswith('"') or words[0].lower() not in TYPE_WORDS):
        words = words[1:]
    return normal(" ".join(words))


def declared(patterns):
    """Each symbol the scripts matching `patterns` declare, with every
    argument-type list it was declared with, and where."""
    out = {}
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            text = COMMENT.sub("", open(path).read())
            for m in CREATE.finditer(text):
                types = tuple(arg_type(a) for a in split_top(m["args"]))
                out.setdefault(m["symbol"], {}).setdefault(types, path)
    return out


def problems(conn, patterns, library):
    """What breaks the rule, as sentences; [] when nothing does."""
    current = {}
    for symbol, types in conn.execute(
            "SELECT p.prosrc, pg_catalog.oidvectortypes(p.proargtypes)"
            "  FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language l ON l.oid = p.prolang"
            " WHERE l.lanname = 'c' AND p.probin = %s", (library,)).fetchall():
        current[symbol] = tuple(normal(t) for t in split_top(types))
    found = []
    for symbol, seen in sorted(declared(patterns).items()):
        if len(seen) > 1:
            found.append(f"symbol {symbol} is declared with different arguments: "
                         + "; ".join(f"({', '.join(t)}) in {p}" for t, p in seen.items()))
        for types, path in seen.items():
            if symbol in current and current[symbol] != types:
                found.append(f"symbol {symbol}: {path} declares ({', '.join(types)}), "
                             f"the current version ({', '.join(current[symbol])})")
        if symbol not in current:
            try:
                conn.execute(f"CREATE FUNCTION pg_temp.symbol_probe() RETURNS void"
                             f" AS '{library}', '{symbol}' LANGUAGE c")
                conn.execute("DROP FUNCTION pg_temp.symbol_probe()")
            except Exception as e:  # noqa: BLE001 - the server's refusal is the finding
                found.append(f"symbol {symbol} ({list(seen.values())[0]}) is not in {library}: "
                             f"{str(e).splitlines()[0]}")
    return found
