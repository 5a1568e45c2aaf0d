//! TLS to PostgreSQL, as the connection string asks, with libpq's meaning
//! of `sslmode`:
//!
//! - `disable`: plain;
//! - `prefer` (the default) and `allow`: TLS when the server offers it,
//!   its certificate not checked; plain otherwise;
//! - `require`: TLS or no connection, the certificate not checked (checked
//!   against `sslrootcert` as `verify-ca` does when that is given);
//! - `verify-ca`: TLS, the server's certificate signed by a certificate of
//!   `sslrootcert` (default: the system's roots);
//! - `verify-full`: as `verify-ca`, and the certificate names the host
//!   connected to.
//!
//! The parts tokio-postgres does not know (`verify-ca`, `verify-full`,
//! `sslrootcert`) are taken out of the string before it reads the rest.

use std::str::FromStr;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// How the certificate of the server is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Not at all (`prefer`, `allow`, `require` without `sslrootcert`).
    Nothing,
    /// Signed by a root (`verify-ca`, `require` with `sslrootcert`).
    Chain,
    /// Signed by a root, and naming the host (`verify-full`).
    ChainAndName,
}

/// A connection string read: what tokio-postgres takes, and the TLS the
/// connections use.
pub struct Database {
    pub config: tokio_postgres::Config,
    pub tls: MakeRustlsConnect,
}

/// The value of `key` in a keyword/value or URL connection string, and the
/// string without it.
fn take(dsn: &str, key: &str) -> (Option<String>, String) {
    let pat = format!("{key}=");
    let mut start = None;
    for (i, _) in dsn.match_indices(&pat) {
        let before = dsn[..i].chars().last();
        if matches!(before, None | Some(' ' | '\t' | '\n' | '?' | '&')) {
            start = Some(i);
            break;
        }
    }
    let Some(at) = start else {
        return (None, dsn.to_owned());
    };
    let rest = &dsn[at + pat.len()..];
    let (value, used) = if let Some(quoted) = rest.strip_prefix('\'') {
        let end = quoted.find('\'').unwrap_or(quoted.len());
        (quoted[..end].to_owned(), (end + 2).min(rest.len()))
    } else {
        let end = rest.find([' ', '\t', '\n', '&']).unwrap_or(rest.len());
        (rest[..end].to_owned(), end)
    };
    let mut tail = &rest[used..];
    let mut head = dsn[..at].to_owned();
    if tail.starts_with('&') {
        tail = &tail[1..];
    } else if head.ends_with('&') || (head.ends_with('?') && tail.is_empty()) {
        head.pop();
    }
    (Some(value), format!("{head}{tail}"))
}

/// What `dsn` asks of TLS: the rest of the string, the mode tokio-postgres
/// connects with, the check, and `sslrootcert`.
fn asked(dsn: &str) -> Result<(String, SslMode, Check, Option<String>), String> {
    let (mode, rest) = take(dsn, "sslmode");
    let (root, rest) = take(&rest, "sslrootcert");
    let (ssl, check) = match (mode.as_deref(), &root) {
        (Some("disable"), _) => (SslMode::Disable, Check::Nothing),
        (None | Some("prefer" | "allow"), _) => (SslMode::Prefer, Check::Nothing),
        (Some("require"), None) => (SslMode::Require, Check::Nothing),
        (Some("require" | "verify-ca"), _) => (SslMode::Require, Check::Chain),
        (Some("verify-full"), _) => (SslMode::Require, Check::ChainAndName),
        (Some(other), _) => {
            return Err(format!(
                "DATABASE_URL: sslmode={other} is not disable, allow, prefer, require, verify-ca or verify-full"
            ))
        }
    };
    Ok((rest, ssl, check, root))
}

/// Reads `dsn` (libpq keyword/value or URL).
pub fn database(dsn: &str) -> Result<Database, String> {
    let (rest, ssl, check, root) = asked(dsn)?;
    let mut config =
        tokio_postgres::Config::from_str(&rest).map_err(|e| format!("DATABASE_URL: {e}"))?;
    config.ssl_mode(ssl);
    let tls = connector(check, root.as_deref())?;
    Ok(Database { config, tls })
}

fn roots(file: Option<&str>) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match file {
        Some(path) => {
            let pem = std::fs::read(path).map_err(|e| format!("sslrootcert {path}: {e}"))?;
            let mut found = 0;
            for cert in rustls_pemfile::certs(&mut pem.as_slice()) {
                let cert = cert.map_err(|e| format!("sslrootcert {path}: {e}"))?;
                store
                    .add(cert)
                    .map_err(|e| format!("sslrootcert {path}: {e}"))?;
                found += 1;
            }
            if found == 0 {
                return Err(format!("sslrootcert {path}: no certificate in it"));
            }
        }
        None => {
            let native = rustls_native_certs::load_native_certs();
            for cert in native.certs {
                let _ = store.add(cert);
            }
        }
    }
    Ok(store)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn connector(check: Check, root: Option<&str>) -> Result<MakeRustlsConnect, String> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let config = match check {
        Check::ChainAndName => builder
            .with_root_certificates(roots(root)?)
            .with_no_client_auth(),
        Check::Chain => {
            let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots(root)?),
                provider(),
            )
            .build()
            .map_err(|e| format!("TLS: {e}"))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly(inner)))
                .with_no_client_auth()
        }
        Check::Nothing => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(provider())))
            .with_no_client_auth(),
    };
    Ok(MakeRustlsConnect::new(config))
}

/// `verify-ca`: the chain is checked, the name is not (libpq's meaning).
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName))
            | Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `prefer`, `allow`, `require`: encrypted, the certificate taken as it is
/// (its signatures are still checked, so the key exchange is the
/// certificate's).
#[derive(Debug)]
struct Unchecked(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_tokio_postgres_does_not_know_are_taken_out() {
        let (v, rest) = take(
            "host=db sslmode=verify-full sslrootcert=/etc/ca.pem dbname=q",
            "sslmode",
        );
        assert_eq!(v.as_deref(), Some("verify-full"));
        let (r, rest) = take(&rest, "sslrootcert");
        assert_eq!(r.as_deref(), Some("/etc/ca.pem"));
        assert_eq!(
            rest.split_whitespace().collect::<Vec<_>>(),
            ["host=db", "dbname=q"]
        );
        let (v, rest) = take(
            "postgres://u@db/q?sslmode=verify-ca&sslrootcert=/ca.pem&application_name=x",
            "sslmode",
        );
        assert_eq!(v.as_deref(), Some("verify-ca"));
        let (r, rest) = take(&rest, "sslrootcert");
        assert_eq!(r.as_deref(), Some("/ca.pem"));
        assert_eq!(rest, "postgres://u@db/q?application_name=x");
        let (v, rest) = take("postgres://u@db/q?sslmode=require", "sslmode");
        assert_eq!(
            (v.as_deref(), rest.as_str()),
            (Some("require"), "postgres://u@db/q")
        );
        let (v, rest) = take("host=db sslrootcert='/a b/ca.pem' user=u", "sslrootcert");
        assert_eq!(v.as_deref(), Some("/a b/ca.pem"));
        assert_eq!(
            rest.split_whitespace().collect::<Vec<_>>(),
            ["host=db", "user=u"]
        );
        // A key that only ends like one is not it.
        let (v, _) = take("host=db xsslmode=require", "sslmode");
        assert_eq!(v, None);
    }

    #[test]
    fn each_sslmode_means_what_it_means_to_libpq() {
        let check = |dsn: &str| asked(dsn).map(|(_, mode, check, _)| (mode, check));
        assert_eq!(check("host=db").unwrap(), (SslMode::Prefer, Check::Nothing));
        assert_eq!(
            check("host=db sslmode=disable").unwrap(),
            (SslMode::Disable, Check::Nothing)
        );
        assert_eq!(
            check("host=db sslmode=require").unwrap(),
            (SslMode::Require, Check::Nothing)
        );
        assert_eq!(
            check("host=db sslmode=verify-full").unwrap(),
            (SslMode::Require, Check::ChainAndName)
        );
        assert!(check("host=db sslmode=sometimes")
            .unwrap_err()
            .contains("sslmode=sometimes"));
        assert_eq!(
            check("host=db sslmode=require sslrootcert=/etc/ca.pem").unwrap(),
            (SslMode::Require, Check::Chain)
        );
        assert!(
            database("host=db sslmode=verify-ca sslrootcert=/nonexistent/ca.pem")
                .err()
                .unwrap()
                .contains("/nonexistent/ca.pem")
        );
        assert!(database("host=db sslmode=verify-full").is_ok());
    }
}
