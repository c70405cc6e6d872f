use super::*;

fn client(insecure: &[&str]) -> RegistryClient {
    RegistryClient::new(ClientOptions {
        insecure: insecure.iter().map(|s| s.to_string()).collect(),
        credentials: Credentials::default(),
    })
}

#[test]
fn plain_http_only_for_loopback_or_a_named_registry() {
    let r = |s: &str| Reference::parse(s).unwrap();
    let c = client(&["reg.lan:5000"]);
    assert_eq!(c.scheme(&r("oci://127.0.0.1:5000/a:1")), "http");
    assert_eq!(c.scheme(&r("oci://localhost:5000/a:1")), "http");
    assert_eq!(c.scheme(&r("oci://[::1]:5000/a:1")), "http");
    assert_eq!(c.scheme(&r("oci://reg.lan:5000/a:1")), "http");
    assert_eq!(c.scheme(&r("oci://reg.lan:5001/a:1")), "https");
    assert_eq!(c.scheme(&r("oci://ghcr.io/a:1")), "https");
}

#[test]
fn a_relative_location_keeps_the_registry() {
    assert_eq!(
        absolute(
            "http://h:5/v2/a/blobs/uploads/",
            "/v2/a/blobs/uploads/x?s=1"
        )
        .unwrap(),
        "http://h:5/v2/a/blobs/uploads/x?s=1"
    );
    assert_eq!(absolute("http://h/", "https://s/x").unwrap(), "https://s/x");
    assert_eq!(
        absolute("http://h/", "x").unwrap_err(),
        "unexpected Location `x`"
    );
}
