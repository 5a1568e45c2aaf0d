//! The front-end's floors, checked: a module imports only from the modules
//! below it (docs/architecture.md draws the order), so no import goes round
//! in a circle.

use std::path::Path;

/// The modules of `src/` (a file, or the folder `routes/` as one), top
/// first. A module may use the ones after it; the modules of one level do
/// not use each other.
const LEVELS: &[&[&str]] = &[
    &["main"],
    &["server"],
    &["startup", "routes"],
    &["dashboard"],
    &["access", "body"],
    &["state"],
    &["metrics", "report"],
    &["fusion", "longpoll"],
    &["db", "auth", "runtime"],
    &["config", "query"],
    &["cors", "tls"],
    &["error"],
];

fn level(module: &str) -> Option<usize> {
    LEVELS.iter().position(|l| l.contains(&module))
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
fn every_module_has_a_floor_and_imports_only_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel.iter().next().and_then(|f| f.to_str()).unwrap();
        let own = first.trim_end_matches(".rs");
        if own == "tests" {
            continue;
        }
        let Some(own_level) = level(own) else {
            wrong.push(format!(
                "{}: module {own} has no floor in LEVELS",
                rel.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for (at, _) in line.match_indices("crate::") {
                let used: String = line[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if used.is_empty() {
                    wrong.push(format!(
                        "{}:{}: name each module of crate:: on a line of its own, so its floor is checked",
                        rel.display(),
                        n + 1
                    ));
                    continue;
                }
                if used == own || used == "tests" {
                    continue;
                }
                match level(&used) {
                    Some(l) if l > own_level => {}
                    Some(_) => {
                        wrong.push(format!("{}:{}: {own} uses {used}", rel.display(), n + 1))
                    }
                    None => wrong.push(format!("{}:{}: {used} has no floor", rel.display(), n + 1)),
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
