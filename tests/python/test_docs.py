"""The docs against what they describe: docs/configuration.md's settings
table lists every `queen.*` setting the extension registers, each once, with
the default, range and context pg_settings shows; its table of the
front-end's environment names the variables queen_front reads; and neither
README.md nor any file under docs/ carries a dated line."""

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DSN = os.environ.get("QUEEN_TEST_DSN", "host=127.0.0.1 port=6533 user=postgres dbname=queen")
CONFIGURATION = ROOT / "docs" / "configuration.md"
FRONT_CONFIG = ROOT / "queen_front" / "src" / "config.rs"

# Who may set a setting, as the table says it, for each pg_settings.context.
WHO = {"postmaster": "server start", "superuser": "superuser", "user": "any role"}
INT_MAX = "2147483647"


def sql_rows(query: str) -> list[list[str]]:
    """The rows of a query through psql, their values split on tabs."""
    out = subprocess.run(
        ["psql", DSN, "-XAtq", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", query],
        check=True,
        capture_output=True,
        text=True,
    )
    return [line.split("\t") for line in out.stdout.strip("\n").splitlines()]


def registered() -> dict[str, dict[str, str]]:
    """Every queen.* setting of the test database (which preloads queen)."""
    rows = sql_rows(
        "SELECT name, boot_val, context, vartype, coalesce(min_val, ''), coalesce(max_val, '') "
        "FROM pg_settings WHERE name LIKE 'queen.%' ORDER BY name"
    )
    return {
        name: {"boot_val": boot, "context": ctx, "vartype": vtype, "min": lo, "max": hi}
        for name, boot, ctx, vtype, lo, hi in rows
    }


def documented_rows() -> list[list[str]]:
    """The cells of each row of docs/configuration.md whose first cell is a
    `queen.*` setting (the proxy's `queen_proxy.*` ones are not)."""
    rows = []
    for line in CONFIGURATION.read_text().splitlines():
        if line.startswith("| `queen."):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            assert len(cells) == 6, f"not six cells (setting, default, range, who, meaning, see): {line}"
            rows.append(cells)
    return rows


def code(cell: str) -> str:
    """The first `code span` of a cell: a setting's name or its default."""
    m = re.search(r"`([^`]*)`", cell)
    assert m, f"no `value` in {cell!r}"
    return m.group(1)


def test_settings_table_lists_every_registered_setting_once():
    names = [code(cells[0]) for cells in documented_rows()]
    twice = sorted({n for n in names if names.count(n) > 1})
    assert not twice, f"listed more than once in docs/configuration.md: {twice}"
    in_db = set(registered())
    assert set(names) == in_db, (
        f"registered but not in docs/configuration.md: {sorted(in_db - set(names))}; "
        f"in docs/configuration.md but not registered: {sorted(set(names) - in_db)}"
    )


def test_documented_defaults_are_the_boot_values():
    settings = registered()
    wrong = [
        f"{name}: documented {code(cells[1])!r}, boot_val {settings[name]['boot_val']!r}"
        for cells in documented_rows()
        if (name := code(cells[0])) in settings and code(cells[1]) != settings[name]["boot_val"]
    ]
    assert not wrong, "defaults in docs/configuration.md differ:\n" + "\n".join(wrong)


def test_documented_ranges_and_who_may_set_them():
    settings = registered()
    wrong = []
    for cells in documented_rows():
        name = code(cells[0])
        s = settings.get(name)
        if s is None:
            continue
        if cells[3] != WHO[s["context"]]:
            wrong.append(f"{name}: who may set it {cells[3]!r}, context {s['context']!r}")
        if s["vartype"] == "integer":
            want = f"at least {s['min']}" if s["max"] == INT_MAX else f"{s['min']} to {s['max']}"
            if cells[2] != want:
                wrong.append(f"{name}: range {cells[2]!r}, pg_settings {want!r}")
        elif s["vartype"] == "bool" and cells[2] != "on, off":
            wrong.append(f"{name}: range {cells[2]!r} of a bool")
    assert not wrong, "docs/configuration.md differs from pg_settings:\n" + "\n".join(wrong)


def test_front_end_environment_is_documented():
    """Every variable queen_front's configuration reads is named in the
    environment section, and the section names no variable it does not
    read (but RUST_LOG, which its log filter reads)."""
    text = CONFIGURATION.read_text()
    section = text[text.index("## The front-end's environment") :]
    read = set(re.findall(r'"([A-Z][A-Z0-9_]{2,})"', FRONT_CONFIG.read_text()))
    assert read, "no variable names found in queen_front/src/config.rs"
    mentioned = set(re.findall(r"`([A-Z][A-Z0-9_]{2,})`", section))
    assert read <= mentioned, f"not in docs/configuration.md: {sorted(read - mentioned)}"
    listed = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            listed |= set(re.findall(r"`([A-Z][A-Z0-9_]{2,})`", line.split("|")[1]))
    assert listed - read <= {"RUST_LOG"}, f"listed but not read: {sorted(listed - read - {'RUST_LOG'})}"


# An ISO date (2026-12-01). Code (fenced blocks, `spans`) is left out: a
# timestamp in an example request is a value, not the date of the text.
DATE = re.compile(r"(?<![0-9])(?:19|20)[0-9]{2}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])(?![0-9])")


def dated_lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return []  # an image
    lines = text.splitlines()
    prose, fenced = [], False
    for line in lines:
        if line.lstrip().startswith("```"):
            fenced = not fenced
            prose.append("")
        else:
            prose.append("" if fenced else line)
    # Code spans may run over a line break; each keeps its line breaks, so
    # that the lines keep their numbers.
    spans_out = re.sub(r"`[^`]*`", lambda m: "\n" * m.group(0).count("\n"), "\n".join(prose))
    return [
        f"{path.relative_to(ROOT)}:{number}: {lines[number - 1].strip()}"
        for number, line in enumerate(spans_out.split("\n"), 1)
        if DATE.search(line)
    ]


def test_no_dated_lines_in_readme_or_docs():
    files = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*") if p.is_file())
    found = [hit for path in files for hit in dated_lines(path)]
    assert not found, f"{len(found)} dated lines:\n" + "\n".join(found)
