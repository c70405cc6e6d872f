//! `oci://REGISTRY/REPOSITORY:TAG` and `oci://REGISTRY/REPOSITORY@sha256:HEX`:
//! what names a plugin in a registry, checked by the distribution spec's
//! grammar before any request is made, so a typo is an error at start-up that
//! says which part is wrong rather than a 404 later.

use std::fmt;

/// The scheme every reference starts with.
pub const SCHEME: &str = "oci://";

/// A parsed reference: where the registry is, which repository, and which
/// version (a tag to follow, or a digest that never changes).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    /// `host` or `host:port`, as written.
    pub registry: String,
    /// `path/to/repo`: lowercase components separated by `/`.
    pub repository: String,
    /// The version named.
    pub version: Version,
}

/// A tag (moves when someone pushes) or a digest (pinned).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Version {
    Tag(String),
    Digest(Digest),
}

/// A `sha256:` digest of a manifest or blob, 64 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

/// Why a reference or digest was refused. Each variant names the part at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReferenceError {
    #[error("`{0}` is not an OCI reference: it must start with `oci://`")]
    Scheme(String),
    #[error("`{0}` names no registry: write oci://REGISTRY/REPOSITORY:TAG")]
    NoRegistry(String),
    #[error("`{0}` names no repository after the registry: write oci://REGISTRY/REPOSITORY:TAG")]
    NoRepository(String),
    #[error(
        "`{input}`: the registry `{registry}` is not a host name or address with an optional :PORT"
    )]
    Registry { input: String, registry: String },
    #[error(
        "`{input}`: the repository part `{part}` is not lowercase letters and digits joined by `.`, `_`, `__` or `-`"
    )]
    Repository { input: String, part: String },
    #[error(
        "`{0}` names no version: add `:TAG` or `@sha256:DIGEST` (Wharf does not assume `latest`)"
    )]
    NoVersion(String),
    #[error(
        "`{input}`: the tag `{tag}` is not 1 to 128 letters, digits, `_`, `.` or `-` (not starting with `.` or `-`)"
    )]
    Tag { input: String, tag: String },
    #[error("`{input}` has both a tag and a digest; name one")]
    TagAndDigest { input: String },
    #[error("`{0}` is not a digest: it must be `sha256:` and 64 lowercase hex digits")]
    Digest(String),
}

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        use sha2::Digest as _;
        Self(sha2::Sha256::digest(bytes).into())
    }

    /// Parses `sha256:HEX`.
    pub fn parse(text: &str) -> Result<Self, ReferenceError> {
        let bad = || ReferenceError::Digest(text.to_string());
        let hex = text.strip_prefix("sha256:").ok_or_else(bad)?;
        if hex.len() != 64 {
            return Err(bad());
        }
        let mut bytes = [0u8; 32];
        for (i, pair) in hex.as_bytes().chunks(2).enumerate() {
            let digit = |c: u8| match c {
                b'0'..=b'9' => Some(c - b'0'),
                b'a'..=b'f' => Some(c - b'a' + 10),
                _ => None,
            };
            bytes[i] = digit(pair[0]).ok_or_else(bad)? << 4 | digit(pair[1]).ok_or_else(bad)?;
        }
        Ok(Self(bytes))
    }

    /// The 64 hex digits without the `sha256:` prefix (file names, the
    /// cosign signature tag).
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex())
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Version::Tag(tag) => write!(f, ":{tag}"),
            Version::Digest(digest) => write!(f, "@{digest}"),
        }
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{SCHEME}{}/{}{}",
            self.registry, self.repository, self.version
        )
    }
}

impl std::str::FromStr for Reference {
    type Err = ReferenceError;

    fn from_str(input: &str) -> Result<Self, ReferenceError> {
        Reference::parse(input)
    }
}

impl Reference {
    /// Parses `oci://REGISTRY/REPOSITORY:TAG` or `oci://REGISTRY/REPOSITORY@sha256:HEX`.
    pub fn parse(input: &str) -> Result<Self, ReferenceError> {
        let owned = || input.to_string();
        let rest = input
            .strip_prefix(SCHEME)
            .ok_or_else(|| ReferenceError::Scheme(owned()))?;
        let (registry, path) = rest.split_once('/').unwrap_or((rest, ""));
        if registry.is_empty() {
            return Err(ReferenceError::NoRegistry(owned()));
        }
        if !valid_registry(registry) {
            return Err(ReferenceError::Registry {
                input: owned(),
                registry: registry.to_string(),
            });
        }
        let (path, digest) = match path.split_once('@') {
            Some((path, digest)) => (path, Some(digest)),
            None => (path, None),
        };
        // A `:` after the last `/` starts the tag.
        let (repository, tag) = match path.rfind(':') {
            Some(colon) if !path[colon..].contains('/') => {
                (&path[..colon], Some(&path[colon + 1..]))
            }
            _ => (path, None),
        };
        if repository.is_empty() {
            return Err(ReferenceError::NoRepository(owned()));
        }
        if let Some(part) = repository.split('/').find(|part| !valid_path_part(part)) {
            return Err(ReferenceError::Repository {
                input: owned(),
                part: part.to_string(),
            });
        }
        let version = match (tag, digest) {
            (Some(_), Some(_)) => return Err(ReferenceError::TagAndDigest { input: owned() }),
            (None, None) => return Err(ReferenceError::NoVersion(owned())),
            (Some(tag), None) if valid_tag(tag) => Version::Tag(tag.to_string()),
            (Some(tag), None) => {
                return Err(ReferenceError::Tag {
                    input: owned(),
                    tag: tag.to_string(),
                });
            }
            (None, Some(digest)) => Version::Digest(Digest::parse(digest)?),
        };
        Ok(Self {
            registry: registry.to_string(),
            repository: repository.to_string(),
            version,
        })
    }

    /// The same repository at another version (a tag resolved to its digest,
    /// or the cosign signature tag).
    pub fn with_version(&self, version: Version) -> Self {
        Self {
            version,
            ..self.clone()
        }
    }

    /// The host part of the registry, without a port (for the loopback rule).
    pub fn host(&self) -> &str {
        if let Some(inner) = self.registry.strip_prefix('[') {
            return inner.split(']').next().unwrap_or(inner);
        }
        self.registry.split(':').next().unwrap_or(&self.registry)
    }
}

/// `host`, `host:port`, `1.2.3.4:port` or `[::1]:port`.
fn valid_registry(registry: &str) -> bool {
    let (host, port) = if let Some(inner) = registry.strip_prefix('[') {
        let Some((address, after)) = inner.split_once(']') else {
            return false;
        };
        if address.parse::<std::net::Ipv6Addr>().is_err() {
            return false;
        }
        match after {
            "" => return true,
            _ => match after.strip_prefix(':') {
                Some(port) => ("x", Some(port)),
                None => return false,
            },
        }
    } else {
        match registry.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (registry, None),
        }
    };
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.parse::<u16>().is_ok());
    let host_ok = !host.is_empty()
        && host.split('.').all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    port_ok && host_ok
}

/// One `/`-separated part of a repository: `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`.
fn valid_path_part(part: &str) -> bool {
    let bytes = part.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let separator = &part[start..i];
        let dashes = separator.bytes().all(|b| b == b'-');
        if !(separator == "." || separator == "_" || separator == "__" || dashes) {
            return false;
        }
    }
    true
}

/// `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
fn valid_tag(tag: &str) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = tag.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && word(bytes[0])
        && bytes.iter().all(|&b| word(b) || b == b'.' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn error(input: &str) -> String {
        Reference::parse(input).unwrap_err().to_string()
    }

    #[test]
    fn a_tag_reference_parses_and_prints_back() {
        let r = Reference::parse("oci://127.0.0.1:5000/team/echo-tool:v1.2").unwrap();
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "team/echo-tool");
        assert_eq!(r.version, Version::Tag("v1.2".into()));
        assert_eq!(r.host(), "127.0.0.1");
        assert_eq!(r.to_string(), "oci://127.0.0.1:5000/team/echo-tool:v1.2");
    }

    #[test]
    fn a_digest_reference_parses_and_prints_back() {
        let input = format!("oci://ghcr.io/a/b__c.d@sha256:{HEX}");
        let r = Reference::parse(&input).unwrap();
        assert_eq!(r.registry, "ghcr.io");
        assert_eq!(r.repository, "a/b__c.d");
        let Version::Digest(digest) = &r.version else {
            panic!("not a digest")
        };
        assert_eq!(digest.hex(), HEX);
        assert_eq!(r.to_string(), input);
    }

    #[test]
    fn an_ipv6_registry_parses() {
        let r = Reference::parse("oci://[::1]:5000/echo:1").unwrap();
        assert_eq!(r.host(), "::1");
    }

    #[test]
    fn every_bad_input_names_its_fault() {
        assert_eq!(
            error("docker://x/y:1"),
            "`docker://x/y:1` is not an OCI reference: it must start with `oci://`"
        );
        assert_eq!(
            error("oci:///y:1"),
            "`oci:///y:1` names no registry: write oci://REGISTRY/REPOSITORY:TAG"
        );
        assert_eq!(
            error("oci://host"),
            "`oci://host` names no repository after the registry: write oci://REGISTRY/REPOSITORY:TAG"
        );
        assert_eq!(
            error("oci://host/:1"),
            "`oci://host/:1` names no repository after the registry: write oci://REGISTRY/REPOSITORY:TAG"
        );
        assert_eq!(
            error("oci://ho_st/y:1"),
            "`oci://ho_st/y:1`: the registry `ho_st` is not a host name or address with an optional :PORT"
        );
        assert_eq!(
            error("oci://host:99999/y:1"),
            "`oci://host:99999/y:1`: the registry `host:99999` is not a host name or address with an optional :PORT"
        );
        assert_eq!(
            error("oci://[zz]:1/y:1"),
            "`oci://[zz]:1/y:1`: the registry `[zz]:1` is not a host name or address with an optional :PORT"
        );
        assert_eq!(
            error("oci://host/Team/y:1"),
            "`oci://host/Team/y:1`: the repository part `Team` is not lowercase letters and digits joined by `.`, `_`, `__` or `-`"
        );
        assert_eq!(
            error("oci://host/a//b:1"),
            "`oci://host/a//b:1`: the repository part `` is not lowercase letters and digits joined by `.`, `_`, `__` or `-`"
        );
        assert_eq!(
            error("oci://host/a..b:1"),
            "`oci://host/a..b:1`: the repository part `a..b` is not lowercase letters and digits joined by `.`, `_`, `__` or `-`"
        );
        assert_eq!(
            error("oci://host/echo"),
            "`oci://host/echo` names no version: add `:TAG` or `@sha256:DIGEST` (Wharf does not assume `latest`)"
        );
        assert_eq!(
            error("oci://host/echo:.v1"),
            "`oci://host/echo:.v1`: the tag `.v1` is not 1 to 128 letters, digits, `_`, `.` or `-` (not starting with `.` or `-`)"
        );
        assert_eq!(
            error("oci://host/echo:"),
            "`oci://host/echo:`: the tag `` is not 1 to 128 letters, digits, `_`, `.` or `-` (not starting with `.` or `-`)"
        );
        let long = "t".repeat(129);
        assert_eq!(
            error(&format!("oci://host/echo:{long}")),
            format!(
                "`oci://host/echo:{long}`: the tag `{long}` is not 1 to 128 letters, digits, `_`, `.` or `-` (not starting with `.` or `-`)"
            )
        );
        assert_eq!(
            error(&format!("oci://host/echo:v1@sha256:{HEX}")),
            format!("`oci://host/echo:v1@sha256:{HEX}` has both a tag and a digest; name one")
        );
        assert_eq!(
            error("oci://host/echo@sha256:abc"),
            "`sha256:abc` is not a digest: it must be `sha256:` and 64 lowercase hex digits"
        );
        assert_eq!(
            error(&format!("oci://host/echo@sha512:{HEX}")),
            format!(
                "`sha512:{HEX}` is not a digest: it must be `sha256:` and 64 lowercase hex digits"
            )
        );
        let upper = HEX.to_uppercase();
        assert_eq!(
            error(&format!("oci://host/echo@sha256:{upper}")),
            format!(
                "`sha256:{upper}` is not a digest: it must be `sha256:` and 64 lowercase hex digits"
            )
        );
    }

    #[test]
    fn a_port_in_the_registry_is_not_a_tag() {
        // `host:5000/echo` has no tag: the colon is before the last `/`.
        assert_eq!(
            error("oci://host:5000/echo"),
            "`oci://host:5000/echo` names no version: add `:TAG` or `@sha256:DIGEST` (Wharf does not assume `latest`)"
        );
    }

    #[test]
    fn a_digest_is_the_sha256_of_the_bytes() {
        assert_eq!(
            Digest::of(b"").to_string(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let d = Digest::parse(&format!("sha256:{HEX}")).unwrap();
        assert_eq!(Digest::parse(&d.to_string()).unwrap(), d);
    }
}
