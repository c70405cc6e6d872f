//! TLS to the collector, the same for both wire protocols: rustls on ring
//! with the Mozilla roots of `webpki-roots` (as every other outgoing
//! connection of Wharf: trust is the same on every machine), plus the
//! private CA of `OTEL_EXPORTER_OTLP_CERTIFICATE` and the client certificate
//! of `OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE` / `OTEL_EXPORTER_OTLP_CLIENT_KEY`
//! (mutual TLS), each also per signal (`OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE`
//! ...), the signal's own variable first, as the OTLP exporter specification
//! says. The SDK crate reads none of these, so they are read here, and every
//! file is checked at start: a wrong path stops the server with the variable
//! that named it rather than failing each export later.
//!
//! The configuration applies to `https://` endpoints only; an `http://` one
//! is plain TCP whatever is set here.

use std::sync::Arc;

use opentelemetry_otlp::tonic_types::transport::{Certificate, ClientTlsConfig, Identity};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::TelemetryError;

/// One signal's TLS variables, each pair the signal's own name first.
pub struct TlsVariables {
    pub certificate: [&'static str; 2],
    pub client_certificate: [&'static str; 2],
    pub client_key: [&'static str; 2],
}

/// What the exporter of one signal trusts and presents, checked.
pub struct ClientTls {
    /// For the http/protobuf client (reqwest).
    rustls: rustls::ClientConfig,
    /// For the gRPC channel (tonic), which builds its own rustls configuration.
    tonic: ClientTlsConfig,
}

/// A file named by a variable: the variable and the path.
struct Named {
    variable: &'static str,
    path: String,
    bytes: Vec<u8>,
}

impl ClientTls {
    /// Reads and checks the files the variables name.
    pub fn read(
        variables: &TlsVariables,
        getenv: &impl Fn(&str) -> Option<String>,
    ) -> Result<Self, TelemetryError> {
        let ca = read(&variables.certificate, getenv)?;
        let cert = read(&variables.client_certificate, getenv)?;
        let key = read(&variables.client_key, getenv)?;
        let extra_roots = match &ca {
            Some(ca) => certificates(ca)?,
            None => Vec::new(),
        };
        let identity = match (cert, key) {
            (None, None) => None,
            (Some(cert), None) => {
                return Err(TelemetryError::ClientKeyPair {
                    set: cert.variable,
                    missing: variables.client_key[1],
                });
            }
            (None, Some(key)) => {
                return Err(TelemetryError::ClientKeyPair {
                    set: key.variable,
                    missing: variables.client_certificate[1],
                });
            }
            (Some(cert), Some(key)) => {
                let chain = certificates(&cert)?;
                let private = PrivateKeyDer::from_pem_slice(&key.bytes).map_err(|error| {
                    tls_file(&key, format!("no PEM private key in it ({error})"))
                })?;
                Some((cert, chain, key, private))
            }
        };

        let mut roots =
            rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        for (index, root) in extra_roots.into_iter().enumerate() {
            let ca = ca.as_ref().expect("roots come from the CA file");
            roots.add(root).map_err(|error| {
                // rustls words this for a peer's certificate; say what it found.
                let reason = match error {
                    rustls::Error::InvalidCertificate(error) => format!("{error:?}"),
                    other => other.to_string(),
                };
                tls_file(
                    ca,
                    format!("certificate {} is no trust anchor ({reason})", index + 1),
                )
            })?;
        }
        let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(roots);

        let mut tonic = ClientTlsConfig::new().with_webpki_roots();
        if let Some(ca) = &ca {
            tonic = tonic.ca_certificate(Certificate::from_pem(&ca.bytes));
        }
        let rustls = match identity {
            None => builder.with_no_client_auth(),
            Some((cert, chain, key, private)) => {
                tonic = tonic.identity(Identity::from_pem(&cert.bytes, &key.bytes));
                builder
                    .with_client_auth_cert(chain, private)
                    .map_err(|error| {
                        tls_file(&key, format!("not usable with the certificate ({error})"))
                    })?
            }
        };
        Ok(Self { rustls, tonic })
    }

    /// The configuration of the http/protobuf client.
    pub fn rustls(&self) -> rustls::ClientConfig {
        self.rustls.clone()
    }

    /// The configuration of the gRPC channel.
    pub fn tonic(&self) -> ClientTlsConfig {
        self.tonic.clone()
    }
}

/// The file the first set variable of `pair` names, read.
fn read(
    pair: &[&'static str; 2],
    getenv: &impl Fn(&str) -> Option<String>,
) -> Result<Option<Named>, TelemetryError> {
    let Some((variable, path)) = pair.iter().find_map(|variable| {
        getenv(variable)
            .filter(|path| !path.trim().is_empty())
            .map(|path| (*variable, path))
    }) else {
        return Ok(None);
    };
    let bytes = std::fs::read(&path).map_err(|error| TelemetryError::TlsFile {
        variable,
        path: path.clone(),
        reason: format!("cannot read it ({error})"),
    })?;
    Ok(Some(Named {
        variable,
        path,
        bytes,
    }))
}

/// The PEM certificates of a file: one at least.
fn certificates(file: &Named) -> Result<Vec<CertificateDer<'static>>, TelemetryError> {
    let certificates = CertificateDer::pem_slice_iter(&file.bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| tls_file(file, format!("not a PEM file ({error})")))?;
    if certificates.is_empty() {
        return Err(tls_file(file, "no PEM certificate in it".into()));
    }
    Ok(certificates)
}

fn tls_file(file: &Named, reason: String) -> TelemetryError {
    TelemetryError::TlsFile {
        variable: file.variable,
        path: file.path.clone(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::telemetry::exporters::Signal;

    fn variables() -> TlsVariables {
        TlsVariables {
            certificate: [
                "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
                "OTEL_EXPORTER_OTLP_CERTIFICATE",
            ],
            client_certificate: [
                "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE",
                "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
            ],
            client_key: [
                "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
                "OTEL_EXPORTER_OTLP_CLIENT_KEY",
            ],
        }
    }

    fn read_env(env: &[(&str, &str)]) -> Result<ClientTls, String> {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ClientTls::read(&variables(), &|name| env.get(name).cloned()).map_err(|e| e.to_string())
    }

    /// A CA certificate, and a client certificate and key it signed.
    fn files(dir: &std::path::Path) -> (String, String, String) {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = params.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(params, ca_key);
        let client_key = rcgen::KeyPair::generate().unwrap();
        let client = rcgen::CertificateParams::new(vec!["client".to_string()])
            .unwrap()
            .signed_by(&client_key, &issuer)
            .unwrap();
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path.to_str().unwrap().to_string()
        };
        (
            write("ca.pem", ca.pem()),
            write("client.pem", client.pem()),
            write("client.key", client_key.serialize_pem()),
        )
    }

    #[test]
    fn a_private_ca_and_a_client_certificate_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let (ca, cert, key) = files(dir.path());
        assert!(read_env(&[]).is_ok());
        assert!(read_env(&[("OTEL_EXPORTER_OTLP_CERTIFICATE", &ca)]).is_ok());
        assert!(
            read_env(&[
                ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", &ca),
                ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &cert),
                ("OTEL_EXPORTER_OTLP_CLIENT_KEY", &key),
            ])
            .is_ok()
        );
    }

    #[test]
    fn the_signals_own_variable_comes_first() {
        let dir = tempfile::tempdir().unwrap();
        let (ca, _, _) = files(dir.path());
        let missing = dir.path().join("missing.pem");
        let missing = missing.to_str().unwrap();
        assert!(
            read_env(&[
                ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", &ca),
                ("OTEL_EXPORTER_OTLP_CERTIFICATE", missing),
            ])
            .is_ok()
        );
        let refused = read_env(&[
            ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", missing),
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", &ca),
        ])
        .err()
        .unwrap();
        assert_eq!(
            refused,
            format!(
                "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE={missing}: cannot read it (No such file or directory (os error 2))"
            )
        );
    }

    #[test]
    fn bad_files_are_refused_with_the_variable_that_named_them() {
        let dir = tempfile::tempdir().unwrap();
        let (ca, cert, key) = files(dir.path());
        let text = dir.path().join("text.pem");
        std::fs::write(&text, "not a certificate\n").unwrap();
        let text = text.to_str().unwrap();
        assert_eq!(
            read_env(&[("OTEL_EXPORTER_OTLP_CERTIFICATE", text)])
                .err()
                .unwrap(),
            format!("OTEL_EXPORTER_OTLP_CERTIFICATE={text}: no PEM certificate in it")
        );
        // A key where the CA should be holds no certificate either.
        assert_eq!(
            read_env(&[("OTEL_EXPORTER_OTLP_CERTIFICATE", &key)])
                .err()
                .unwrap(),
            format!("OTEL_EXPORTER_OTLP_CERTIFICATE={key}: no PEM certificate in it")
        );
        assert_eq!(
            read_env(&[
                ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &cert),
                ("OTEL_EXPORTER_OTLP_CLIENT_KEY", &ca),
            ])
            .err()
            .unwrap(),
            format!(
                "OTEL_EXPORTER_OTLP_CLIENT_KEY={ca}: no PEM private key in it (no items found)"
            )
        );
    }

    #[test]
    fn broken_certificates_and_a_key_of_another_certificate_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (_, cert, _) = files(dir.path());
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path.to_str().unwrap().to_string()
        };
        let not_der = write(
            "not-der.pem",
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        );
        assert_eq!(
            read_env(&[("OTEL_EXPORTER_OTLP_CERTIFICATE", &not_der)])
                .err()
                .unwrap(),
            format!(
                "OTEL_EXPORTER_OTLP_CERTIFICATE={not_der}: certificate 1 is no trust anchor (BadEncoding)"
            )
        );
        let not_base64 = write(
            "not-base64.pem",
            "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
        );
        assert_eq!(
            read_env(&[("OTEL_EXPORTER_OTLP_CERTIFICATE", &not_base64)])
                .err()
                .unwrap(),
            format!(
                "OTEL_EXPORTER_OTLP_CERTIFICATE={not_base64}: not a PEM file (base64 decode error: InvalidCharacter(33))"
            )
        );
        let other_key = write(
            "other.key",
            &rcgen::KeyPair::generate().unwrap().serialize_pem(),
        );
        assert_eq!(
            read_env(&[
                ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &cert),
                ("OTEL_EXPORTER_OTLP_CLIENT_KEY", &other_key),
            ])
            .err()
            .unwrap(),
            format!(
                "OTEL_EXPORTER_OTLP_CLIENT_KEY={other_key}: not usable with the certificate (keys may not be consistent: KeyMismatch)"
            )
        );
    }

    #[test]
    fn a_client_certificate_needs_its_key_and_the_other_way_round() {
        let dir = tempfile::tempdir().unwrap();
        let (_, cert, key) = files(dir.path());
        assert_eq!(
            read_env(&[("OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", &cert)])
                .err()
                .unwrap(),
            "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE is set but OTEL_EXPORTER_OTLP_CLIENT_KEY is not: a client certificate needs its key"
        );
        assert_eq!(
            read_env(&[("OTEL_EXPORTER_OTLP_CLIENT_KEY", &key)])
                .err()
                .unwrap(),
            "OTEL_EXPORTER_OTLP_CLIENT_KEY is set but OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is not: a client certificate needs its key"
        );
    }

    #[test]
    fn the_signals_name_their_variables() {
        let names = |signal: &Signal| signal.tls_variables().certificate;
        assert_eq!(
            names(&crate::telemetry::exporters::METRICS),
            [
                "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE",
                "OTEL_EXPORTER_OTLP_CERTIFICATE"
            ]
        );
    }
}
