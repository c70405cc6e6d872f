use super::*;

#[test]
fn a_generated_key_round_trips_through_pem_and_verifies() {
    let (key, private_pem) = SigningKey::generate();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.pem");
    std::fs::write(&path, &private_pem).unwrap();
    let again = SigningKey::from_file(&path).unwrap();
    let public = PublicKey::from_pem("k.pub", &key.public_key().to_pem()).unwrap();
    let signature = again.sign(b"payload");
    assert!(public.verifies(b"payload", &signature));
    assert!(!public.verifies(b"payloaD", &signature));
    let (other, _) = SigningKey::generate();
    assert!(!other.public_key().verifies(b"payload", &signature));
}

#[test]
fn a_key_and_signature_made_by_openssl_verify() {
    // `openssl ecparam -genkey -name prime256v1`, `openssl ec -pubout` (the
    // SubjectPublicKeyInfo PEM cosign writes), then
    // `openssl dgst -sha256 -sign key msg | base64`: an independent
    // implementation of both the key format and ECDSA.
    let pem = "-----BEGIN PUBLIC KEY-----\n\
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEiEIOrmijrziKtrkix/mEez/VOheg\n\
        LO3JShZh+/6c8cGuBooe4TJDObeipA3QuxFXRQYCBXrs2N6T1O7MXDcAAQ==\n\
        -----END PUBLIC KEY-----\n";
    let signature = "MEYCIQCDMIlMMyChCrxWOOSVOB6RLj0wgpRqqCr59UTmIq9rQgIhAJObei9pzd00/bi6iDW1Ps97sWCkrXl08QepXujzmxvO";
    let key = PublicKey::from_pem("ossl.pub", pem).unwrap();
    assert_eq!(key.to_pem(), pem);
    let policy = TrustPolicy::keys(vec![key]);
    assert_eq!(
        policy.verify_blob(b"signed by openssl", signature),
        Ok("ossl.pub")
    );
    assert!(
        policy
            .verify_blob(b"signed by openssl!", signature)
            .is_err()
    );
}

#[test]
fn bad_keys_say_why() {
    assert_eq!(
        PublicKey::from_pem("k", "hello").unwrap_err().to_string(),
        "k: no `-----BEGIN PUBLIC KEY-----` block"
    );
    assert_eq!(
        PublicKey::from_pem(
            "k",
            "-----BEGIN PUBLIC KEY-----\n!!\n-----END PUBLIC KEY-----"
        )
        .unwrap_err()
        .to_string(),
        "k: the PEM block is not valid base64"
    );
    assert_eq!(
        PublicKey::from_pem("k", &pem("PUBLIC KEY", b"not a key"))
            .unwrap_err()
            .to_string(),
        "k: not an ECDSA P-256 public key (SubjectPublicKeyInfo); cosign keys are P-256"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.pem");
    std::fs::write(&path, pem("PRIVATE KEY", b"junk")).unwrap();
    assert_eq!(
        SigningKey::from_file(&path).err().unwrap().to_string(),
        format!(
            "{}: not an unencrypted ECDSA P-256 PKCS#8 private key",
            path.display()
        )
    );
    assert_eq!(
        PublicKey::from_file(&dir.path().join("none"))
            .unwrap_err()
            .to_string(),
        format!(
            "cannot read the key file {}: No such file or directory (os error 2)",
            dir.path().join("none").display()
        )
    );
}

#[test]
fn a_payload_names_its_digest() {
    let r = Reference::parse("oci://h:1/a/b:v1").unwrap();
    let d = Digest::of(b"m");
    let p = payload(&r, &d);
    assert_eq!(payload_digest(&p).unwrap(), d);
    let text = String::from_utf8(p).unwrap();
    assert!(text.contains(r#""docker-reference":"h:1/a/b""#), "{text}");
    assert_eq!(
        payload_digest(br#"{"critical":{"image":{"docker-manifest-digest":"x"},"type":"other"}}"#)
            .unwrap_err(),
        "the payload's type is `other`"
    );
    assert_eq!(
        signature_reference(&r, &d).to_string(),
        format!("oci://h:1/a/b:sha256-{}.sig", d.hex())
    );
}

#[test]
fn a_detached_signature_of_a_file_is_checked() {
    let (key, _) = SigningKey::generate();
    let policy = TrustPolicy::keys(vec![key.public_key()]);
    let good = BASE64.encode(key.sign(b"wasm"));
    assert_eq!(policy.verify_blob(b"wasm", &good), Ok("generated"));
    assert_eq!(
        policy.verify_blob(b"wasm!", &good).unwrap_err(),
        "the signature is by none of the trusted keys, or of other bytes"
    );
    assert_eq!(
        policy.verify_blob(b"wasm", "%%").unwrap_err(),
        "the signature is not base64"
    );
}
