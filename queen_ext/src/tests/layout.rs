//! The layout's rules, checked: a folder imports only from the folders
//! below it (docs/architecture.md draws the order), `api/` runs no statement,
//! and the SQL that repeats a constant of the catalogue agrees with it.

use std::path::Path;

/// The folders of `src/`, top first. A folder may use the ones after it;
/// the folders of one level do not use each other.
const LEVELS: &[&[&str]] = &[
    &["api"],
    &["reads"],
    &["maintenance", "streams"],
    &["engine"],
    &["kv", "timers", "ephemeral"],
    &["catalog"],
    &["wire"],
    &["pg"],
];

fn level(folder: &str) -> Option<usize> {
    LEVELS.iter().position(|l| l.contains(&folder))
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn imports_only_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let Some(own) = rel.iter().next().and_then(|f| f.to_str()) else {
            continue;
        };
        let Some(own_level) = level(own) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for (at, _) in line.match_indices("crate::") {
                let used: String = line[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let Some(used_level) = level(&used) else {
                    continue;
                };
                if used != own && used_level <= own_level {
                    wrong.push(format!("{}:{}: {own} uses {used}", rel.display(), n + 1));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports pointing up or sideways:\n{}",
        wrong.join("\n")
    );
}

/// The SQL-callable functions are thin: no statement is run from `api/`.
#[test]
fn the_api_runs_no_statement_of_its_own() {
    let api = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/api");
    let mut files = Vec::new();
    sources(&api, &mut files);
    assert!(!files.is_empty());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for needle in ["exec(", "query!(", "Spi::"] {
            assert!(
                !text.contains(needle),
                "{} runs a statement ({needle})",
                file.display()
            );
        }
    }
}

/// The shard count is `catalog::SHARDS` wherever the SQL spells it: the
/// generated `shard` columns and the sweepers' per-shard scans.
#[test]
fn the_sql_agrees_with_the_shard_count() {
    use crate::catalog::SHARDS;
    let sql = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sql");
    let read = |f: &str| std::fs::read_to_string(sql.join(f)).unwrap();
    for f in ["schema/timers.sql", "schema/kv.sql"] {
        let mask = format!("& {})::smallint) STORED", SHARDS - 1);
        assert!(
            read(f).contains(&mask),
            "{f}: the shard column is not `{mask}`"
        );
    }
    let every = format!("generate_series(0, {})", SHARDS - 1);
    let wrap = format!("% {SHARDS} + {SHARDS}) % {SHARDS})");
    for f in [
        "queries/kv_prune_expire.sql",
        "queries/kv_prune_expired_present.sql",
        "queries/sweeper_drain_claim.sql",
        "queries/sweeper_drain_probe.sql",
    ] {
        let text = read(f);
        assert!(text.contains(&every), "{f}: does not scan {every}");
        if text.contains("$1 + g.i") {
            assert!(text.contains(&wrap), "{f}: does not wrap at {SHARDS}");
        }
    }
}

/// Every file under `sql/queries/` is a statement some `query!` runs, and
/// every `query!` names a file there: no fragment is left behind.
#[test]
fn every_query_file_is_a_statement_in_use() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    let mut used = std::collections::BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (at, _) in text.match_indices("query!(\"") {
            let rest = &text[at + 8..];
            let name = &rest[..rest.find('"').unwrap()];
            // A statement's name, not a mention of the macro in a string.
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '/')
            {
                used.insert(name.to_owned());
            }
        }
    }
    let dir = root.join("../sql/queries");
    let mut have = std::collections::BTreeSet::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "sql") {
                let rel = path.strip_prefix(&dir).unwrap().with_extension("");
                have.insert(rel.to_str().unwrap().to_owned());
            }
        }
    }
    let unused: Vec<_> = have.difference(&used).collect();
    let missing: Vec<_> = used.difference(&have).collect();
    assert!(unused.is_empty(), "statements no query! runs: {unused:?}");
    assert!(
        missing.is_empty(),
        "query! names without a file: {missing:?}"
    );
}
