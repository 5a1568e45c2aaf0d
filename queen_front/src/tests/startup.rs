//! What the front-end accepts to listen on without authentication.

use crate::config::{is_loopback, Config};

fn from(vars: &[(&str, &str)]) -> Result<Config, String> {
    Config::from_lookup(&|name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    })
}

#[test]
fn loopback_hosts_are_told_apart_from_the_rest() {
    for host in [
        "127.0.0.1",
        "127.8.9.10",
        "::1",
        "[::1]",
        "localhost",
        "LocalHost",
        "::ffff:127.0.0.1",
    ] {
        assert!(is_loopback(host), "{host}");
    }
    for host in [
        "0.0.0.0",
        "::",
        "[::]",
        "10.0.0.1",
        "192.0.2.10",
        "example.com",
        "127.0.0.1.nip.io",
        "localhost.example",
        "",
    ] {
        assert!(!is_loopback(host), "{host}");
    }
}

#[test]
fn a_public_address_needs_authentication_or_the_explicit_opt_out() {
    let err = from(&[("HOST", "0.0.0.0")]).unwrap_err();
    assert!(
        err.contains("HOST=0.0.0.0") && err.contains("QUEEN_ALLOW_UNAUTHENTICATED=1"),
        "{err}"
    );
    assert!(from(&[("HOST", "0.0.0.0"), ("QUEEN_ALLOW_UNAUTHENTICATED", "1")]).is_ok());
    assert!(from(&[("HOST", "0.0.0.0"), ("QUEEN_ALLOW_UNAUTHENTICATED", "0")]).is_err());
    assert!(from(&[("HOST", "0.0.0.0"), ("JWT_SECRET", "s")]).is_ok());
    assert!(from(&[("HOST", "127.0.0.1")]).is_ok());
    assert!(from(&[]).is_ok(), "the default HOST is loopback");
    let err = from(&[("QUEEN_ALLOW_UNAUTHENTICATED", "yes")]).unwrap_err();
    assert!(err.contains("QUEEN_ALLOW_UNAUTHENTICATED"), "{err}");
}

#[test]
fn the_dashboard_is_on_unless_turned_off() {
    assert!(from(&[]).unwrap().dashboard);
    assert!(from(&[("QUEEN_DASHBOARD", "on")]).unwrap().dashboard);
    assert!(!from(&[("QUEEN_DASHBOARD", "off")]).unwrap().dashboard);
    let err = from(&[("QUEEN_DASHBOARD", "maybe")]).unwrap_err();
    assert!(err.contains("QUEEN_DASHBOARD=\"maybe\""), "{err}");
}
