//! The plugin set's digest: one value naming which plugins, in which versions,
//! a server serves, so that an operator (or a test) can see at a glance that
//! the replicas behind a load balancer serve the same set.

use std::fmt;

use sha2::{Digest, Sha256};

use crate::runtime::ContentHash;

/// One plugin as the digest sees it: its name and the bytes it came from.
#[derive(Debug, Clone, Copy)]
pub struct PluginVersion<'a> {
    pub name: &'a str,
    /// The SHA-256 of the component file.
    pub component: ContentHash,
    /// The SHA-256 of its manifest (`NAME.toml`), if it has one.
    pub manifest: Option<ContentHash>,
}

/// The SHA-256 over every plugin's name, component digest and manifest digest,
/// in name order: equal on two servers exactly when they loaded the same files
/// under the same names, whatever order they were loaded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginSetDigest([u8; 32]);

impl PluginSetDigest {
    pub fn of<'a>(plugins: impl IntoIterator<Item = PluginVersion<'a>>) -> Self {
        let mut plugins: Vec<PluginVersion<'a>> = plugins.into_iter().collect();
        plugins.sort_by(|a, b| a.name.cmp(b.name));
        let mut hasher = Sha256::new();
        // One line per plugin; plugin names never hold a NUL or a newline.
        for plugin in plugins {
            hasher.update(plugin.name.as_bytes());
            hasher.update(b"\0");
            hasher.update(plugin.component.hex().as_bytes());
            hasher.update(b"\0");
            match plugin.manifest {
                Some(manifest) => hasher.update(manifest.hex().as_bytes()),
                None => hasher.update(b"-"),
            }
            hasher.update(b"\n");
        }
        Self(hasher.finalize().into())
    }
}

impl fmt::Display for PluginSetDigest {
    /// `sha256:` and 64 lowercase hex digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version<'a>(name: &'a str, component: &[u8], manifest: Option<&[u8]>) -> PluginVersion<'a> {
        PluginVersion {
            name,
            component: ContentHash::of(component),
            manifest: manifest.map(ContentHash::of),
        }
    }

    #[test]
    fn the_digest_of_no_plugins_is_the_sha256_of_nothing() {
        assert_eq!(
            PluginSetDigest::of([]).to_string(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn load_order_does_not_matter_but_names_bytes_and_manifests_do() {
        let a = version("a", b"one", None);
        let b = version("b", b"two", Some(b"[limits]"));
        let digest = PluginSetDigest::of([a, b]);
        assert_eq!(digest, PluginSetDigest::of([b, a]));
        for other in [
            PluginSetDigest::of([a]),
            PluginSetDigest::of([version("c", b"one", None), b]),
            PluginSetDigest::of([version("a", b"one!", None), b]),
            PluginSetDigest::of([a, version("b", b"two", None)]),
            PluginSetDigest::of([a, version("b", b"two", Some(b"[limits] "))]),
        ] {
            assert_ne!(digest, other);
        }
    }
}
