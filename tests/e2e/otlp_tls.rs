//! A throwaway certificate authority for the TLS tests of OTLP export
//! (rcgen, on ring): its certificate as a PEM file, for
//! `OTEL_EXPORTER_OTLP_CERTIFICATE`; server configurations for `127.0.0.1`
//! with a certificate it signed; and client certificates it signed, for
//! mutual TLS.

use std::path::Path;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

pub struct TestCa {
    dir: tempfile::TempDir,
    certificate: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
}

impl TestCa {
    pub fn new() -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "wharf test CA");
        let certificate = params.self_signed(&key).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.pem"), certificate.pem()).unwrap();
        Self {
            dir,
            certificate: certificate.der().clone(),
            issuer: Issuer::new(params, key),
        }
    }

    /// The CA's certificate, a PEM file.
    pub fn ca_file(&self) -> String {
        path(&self.dir.path().join("ca.pem"))
    }

    /// A server for `127.0.0.1` and `localhost` offering `alpn`; with
    /// `clients`, it requires a client certificate this CA signed.
    pub fn server(&self, alpn: &[&[u8]], clients: bool) -> Arc<rustls::ServerConfig> {
        let key = KeyPair::generate().unwrap();
        let certificate = CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
            .unwrap()
            .signed_by(&key, &self.issuer)
            .unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap();
        let builder = if clients {
            let mut roots = rustls::RootCertStore::empty();
            roots.add(self.certificate.clone()).unwrap();
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .unwrap();
            builder.with_client_cert_verifier(verifier)
        } else {
            builder.with_no_client_auth()
        };
        let mut config = builder
            .with_single_cert(
                vec![certificate.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .unwrap();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Arc::new(config)
    }

    /// A client certificate this CA signed and its key, as PEM files.
    pub fn client_files(&self) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let certificate = CertificateParams::new(vec!["wharf".to_string()])
            .unwrap()
            .signed_by(&key, &self.issuer)
            .unwrap();
        let (cert_file, key_file) = (
            self.dir.path().join("client.pem"),
            self.dir.path().join("client.key"),
        );
        std::fs::write(&cert_file, certificate.pem()).unwrap();
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        (path(&cert_file), path(&key_file))
    }
}

fn path(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}
