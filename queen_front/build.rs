//! Builds the dashboard (`../dashboard`) into the binary: esbuild bundles
//! its sources into one script and one stylesheet under `OUT_DIR`, each
//! named after a hash of its bytes (so a browser may keep it for good), and
//! `dashboard_assets.rs` lists them with the page that loads them.
//! esbuild comes from the dashboard's npm packages, which
//! `scripts/setup.sh` installs.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo's manifest dir"));
    let dashboard = manifest.parent().expect("the workspace").join("dashboard");
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo's OUT_DIR")).join("dashboard");
    println!("cargo:rerun-if-changed={}", dashboard.join("src").display());
    println!(
        "cargo:rerun-if-changed={}",
        dashboard.join("package-lock.json").display()
    );
    bundle(&dashboard, &out);
    let assets = name_by_hash(&dashboard, &out);
    write_list(&out, &assets);
}

/// Bundles the dashboard's sources into `out` with esbuild (`app.js`,
/// `app.css`).
fn bundle(dashboard: &Path, out: &Path) {
    let esbuild = dashboard.join("node_modules/.bin/esbuild");
    if !esbuild.exists() {
        panic!(
            "the dashboard's bundler is missing ({}): `make setup` (scripts/setup.sh) installs it",
            esbuild.display()
        );
    }
    let _ = std::fs::remove_dir_all(out);
    let status = Command::new(&esbuild)
        .current_dir(dashboard)
        .args([
            "src/main.jsx",
            "--bundle",
            "--minify",
            "--target=es2020",
            "--jsx=automatic",
            "--jsx-import-source=preact",
            "--legal-comments=none",
            "--log-level=warning",
            "--entry-names=app",
        ])
        .arg(format!("--outdir={}", out.display()))
        .status()
        .unwrap_or_else(|e| panic!("running {}: {e}", esbuild.display()));
    assert!(status.success(), "esbuild failed to bundle the dashboard");
}

/// Copies each bundled asset under a name with its hash and writes the
/// page that loads them by those names; the assets' names and content
/// types.
fn name_by_hash(dashboard: &Path, out: &Path) -> Vec<(String, &'static str)> {
    let mut assets = Vec::new();
    let mut page = read(&dashboard.join("src/index.html"));
    for (file, kind) in [("app.js", "text/javascript"), ("app.css", "text/css")] {
        let bytes = std::fs::read(out.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut hasher = DefaultHasher::new();
        bytes.hash(&mut hasher);
        let (stem, ext) = file.split_once('.').expect("a file name with an extension");
        let named = format!("{stem}-{:016x}.{ext}", hasher.finish());
        std::fs::write(out.join(&named), &bytes).expect("writing a hashed asset");
        let placeholder = format!("{{{{{file}}}}}");
        assert!(
            page.contains(&placeholder),
            "index.html must refer to {placeholder}"
        );
        page = page.replace(&placeholder, &named);
        assets.push((named, kind));
    }
    std::fs::write(out.join("index.html"), page).expect("writing index.html");
    assets
}

/// Writes `dashboard_assets.rs`, which includes the page and the assets.
fn write_list(out: &Path, assets: &[(String, &str)]) {
    let mut list =
        String::from("/// The dashboard's page.\npub const INDEX_HTML: &[u8] = include_bytes!(");
    list.push_str(&format!(
        "{:?});\n",
        out.join("index.html").display().to_string()
    ));
    list.push_str("/// The dashboard's assets: name, content type, bytes.\npub const ASSETS: &[(&str, &str, &[u8])] = &[\n");
    for (name, kind) in assets {
        let path = out.join(name).display().to_string();
        list.push_str(&format!(
            "    ({name:?}, {kind:?}, include_bytes!({path:?})),\n"
        ));
    }
    list.push_str("];\n");
    std::fs::write(out.join("dashboard_assets.rs"), list).expect("writing dashboard_assets.rs");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
