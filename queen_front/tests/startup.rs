//! The front-end refuses to start on a configuration it can not serve
//! safely: it exits with status 2 and says why, before binding anything.

use std::process::Command;

fn start(vars: &[(&str, &str)]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_queen_front"))
        .env_clear()
        .envs(vars.iter().copied())
        .output()
        .expect("the binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_open_front_end_on_a_public_address_does_not_start() {
    for host in ["0.0.0.0", "::", "192.0.2.10", "example.com"] {
        let (status, stderr) = start(&[("HOST", host), ("PORT", "0")]);
        assert_eq!(status, Some(2), "HOST={host}: {stderr}");
        assert!(stderr.contains("QUEEN_ALLOW_UNAUTHENTICATED=1"), "{stderr}");
        assert!(stderr.contains("JWT_SECRET"), "{stderr}");
    }
}

#[test]
fn a_configuration_error_is_status_2_with_its_reason() {
    let (status, stderr) = start(&[("QUEEN_CORS_ORIGINS", "*")]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("QUEEN_CORS_ORIGINS"), "{stderr}");
    let (status, stderr) = start(&[("HOST", "0.0.0.0"), ("JWT_PUBLIC_KEY", "not a key")]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("public key"), "{stderr}");
}
