//! The shape of a Wasm component in a registry: the CNCF "Wasm OCI artifact"
//! layout that `wkg`, `oras` and wassette use. An OCI image manifest whose
//! one layer of media type `application/wasm` is the component; its config
//! is `application/vnd.wasm.config.v0+json` when Wharf pushes, but any
//! config is accepted on pull (oras pushes its own).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::reference::{Digest, ReferenceError};

/// The media type of the component layer.
pub const WASM_LAYER: &str = "application/wasm";
/// The config media type of a Wasm artifact.
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
/// The annotation carrying the plugin's `NAME.toml` (its grants and limits),
/// so `wharf inspect oci://…` shows what it asks for before it runs.
pub const MANIFEST_ANNOTATION: &str = "dev.wharf.plugin.manifest";
/// The OCI annotation naming a layer's file (what `oras pull` writes it as).
pub const TITLE_ANNOTATION: &str = "org.opencontainers.image.title";

/// An OCI image manifest (the fields Wharf reads and writes).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ImageManifest {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    pub config: Descriptor,
    pub layers: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// A pointer to a blob.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// Why a manifest is not a Wasm component artifact.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ArtifactError {
    #[error("the manifest is not an OCI image manifest: {0}")]
    NotAManifest(String),
    #[error("the manifest has no `application/wasm` layer (its layers: {0})")]
    NoWasmLayer(String),
    #[error("the manifest has {0} `application/wasm` layers; a plugin is one component")]
    ManyWasmLayers(usize),
    #[error("a layer's digest is bad: {0}")]
    Digest(#[from] ReferenceError),
}

impl Descriptor {
    /// The descriptor of `bytes` as a blob of `media_type`.
    pub fn of(media_type: &str, bytes: &[u8]) -> Self {
        Self {
            media_type: media_type.into(),
            digest: Digest::of(bytes).to_string(),
            size: bytes.len() as u64,
            annotations: BTreeMap::new(),
        }
    }
}

impl ImageManifest {
    /// Parses a manifest's bytes.
    pub fn parse(bytes: &[u8]) -> Result<Self, ArtifactError> {
        let manifest: Self = serde_json::from_slice(bytes)
            .map_err(|e| ArtifactError::NotAManifest(e.to_string()))?;
        if manifest.schema_version != 2 {
            return Err(ArtifactError::NotAManifest(format!(
                "schemaVersion is {}, not 2",
                manifest.schema_version
            )));
        }
        Ok(manifest)
    }

    /// The one component layer and its digest.
    pub fn wasm_layer(&self) -> Result<(&Descriptor, Digest), ArtifactError> {
        let wasm: Vec<&Descriptor> = self
            .layers
            .iter()
            .filter(|l| l.media_type == WASM_LAYER)
            .collect();
        match wasm.as_slice() {
            [layer] => Ok((layer, Digest::parse(&layer.digest)?)),
            [] => Err(ArtifactError::NoWasmLayer(
                self.layers
                    .iter()
                    .map(|l| format!("`{}`", l.media_type))
                    .collect::<Vec<_>>()
                    .join(", "),
            )),
            many => Err(ArtifactError::ManyWasmLayers(many.len())),
        }
    }

    /// The manifest Wharf pushes: the Wasm config, one component layer, and
    /// the plugin's own manifest as an annotation (when it has one); `title`
    /// is the component's file name.
    pub fn for_component(
        config: &[u8],
        component: &[u8],
        title: &str,
        plugin_manifest: Option<&str>,
    ) -> Self {
        let mut annotations = BTreeMap::new();
        if let Some(text) = plugin_manifest {
            annotations.insert(MANIFEST_ANNOTATION.to_string(), text.to_string());
        }
        let mut layer = Descriptor::of(WASM_LAYER, component);
        layer
            .annotations
            .insert(TITLE_ANNOTATION.to_string(), title.to_string());
        Self {
            schema_version: 2,
            media_type: Some(super::client::OCI_MANIFEST.into()),
            artifact_type: None,
            config: Descriptor::of(WASM_CONFIG, config),
            layers: vec![layer],
            annotations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_component_layer_is_found_among_others() {
        let mut m = ImageManifest::for_component(b"{}", b"\0asm", "a.wasm", Some("grants = []"));
        m.layers.insert(0, Descriptor::of("text/plain", b"readme"));
        let bytes = serde_json::to_vec(&m).unwrap();
        let parsed = ImageManifest::parse(&bytes).unwrap();
        let (layer, digest) = parsed.wasm_layer().unwrap();
        assert_eq!(layer.size, 4);
        assert_eq!(digest, Digest::of(b"\0asm"));
        assert_eq!(parsed.annotations[MANIFEST_ANNOTATION], "grants = []");
    }

    #[test]
    fn a_manifest_without_exactly_one_component_is_refused() {
        let mut m = ImageManifest::for_component(b"{}", b"\0asm", "a.wasm", None);
        m.layers[0].media_type = "application/octet-stream".into();
        assert_eq!(
            m.wasm_layer().unwrap_err().to_string(),
            "the manifest has no `application/wasm` layer (its layers: `application/octet-stream`)"
        );
        m.layers[0].media_type = WASM_LAYER.into();
        m.layers.push(m.layers[0].clone());
        assert_eq!(
            m.wasm_layer().unwrap_err().to_string(),
            "the manifest has 2 `application/wasm` layers; a plugin is one component"
        );
        m.layers.truncate(1);
        m.layers[0].digest = "md5:x".into();
        assert_eq!(
            m.wasm_layer().unwrap_err().to_string(),
            "a layer's digest is bad: `md5:x` is not a digest: it must be `sha256:` and 64 lowercase hex digits"
        );
    }

    #[test]
    fn bad_manifests_say_why() {
        assert_eq!(
            ImageManifest::parse(b"7").unwrap_err().to_string(),
            "the manifest is not an OCI image manifest: invalid type: integer `7`, expected struct ImageManifest at line 1 column 1"
        );
        let m =
            br#"{"schemaVersion":1,"config":{"mediaType":"a","digest":"b","size":0},"layers":[]}"#;
        assert_eq!(
            ImageManifest::parse(m).unwrap_err().to_string(),
            "the manifest is not an OCI image manifest: schemaVersion is 1, not 2"
        );
    }
}
