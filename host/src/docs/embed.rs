//! Writing doc comments into a component from a WIT folder (`wharf embed-docs`).
//!
//! The WIT folder is parsed with wit-parser and its docs encoded in the
//! `package-docs` format; the standard section gets only what wit-component's
//! decoder accepts, found by applying it as the decoder does.

use std::path::Path;

use serde_json::{Map, Value};

use super::sections::with_section;
use super::{DECODED_WORLD, DocsError, FULL_SECTION_NAME, SECTION_NAME, SECTION_VERSION};

/// `component` with the doc comments of the WIT package in `dir` (and its
/// `world`, the only one when `None`): a `wharf-package-docs` section with all of
/// them and a `package-docs` section with what wit-component's decoder accepts
/// (none at all if it accepts nothing, so that tools reading the component keep
/// working).
pub fn embed(component: &[u8], dir: &Path, world: Option<&str>) -> Result<Vec<u8>, DocsError> {
    let full = section_from_wit(dir, world)?;
    let out = with_section(component, FULL_SECTION_NAME, Some(&full))?;
    let out = with_section(&out, SECTION_NAME, None)?;
    let standard = standard_section(&out, &full);
    if standard.is_none() {
        tracing::warn!(
            "wit-component cannot decode this component, so it gets no package-docs \
             section (Wharf reads wharf-package-docs)"
        );
    }
    with_section(&out, SECTION_NAME, standard.as_deref())
}

/// The part of `full` that wit-component's decoder can apply to `component`
/// (which has no `package-docs` section): the world's docs, its exported
/// functions and types, and its kebab-named interfaces, as far as the decoded
/// component has them. Checked by applying it as the decoder does.
fn standard_section(component: &[u8], full: &[u8]) -> Option<Vec<u8>> {
    use wit_parser::decoding::{DecodedWasm, decode};
    use wit_parser::{WorldItem, WorldKey};

    let DecodedWasm::Component(resolve, world_id) = decode(component).ok()? else {
        return None;
    };
    let world = &resolve.worlds[world_id];
    let package = world.package?;
    let full: Value = serde_json::from_slice(full.get(1..)?).ok()?;
    let source = full.get("worlds")?.get(DECODED_WORLD)?.as_object()?;
    let keep = |key: &str, exists: &dyn Fn(&WorldKey) -> bool| -> Option<(String, Value)> {
        let kept: Map<String, Value> = source
            .get(key)?
            .as_object()?
            .iter()
            .filter(|(name, _)| exists(&WorldKey::Name(name.to_string())))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        (!kept.is_empty()).then(|| (key.to_string(), Value::Object(kept)))
    };
    let function = |k: &WorldKey| matches!(world.exports.get(k), Some(WorldItem::Function(_)));
    let ty = |k: &WorldKey| matches!(world.imports.get(k), Some(WorldItem::Type { .. }));
    let interface =
        |k: &WorldKey| matches!(world.exports.get(k), Some(WorldItem::Interface { .. }));
    let mut root: Map<String, Value> = source
        .get("docs")
        .map(|docs| ("docs".to_string(), docs.clone()))
        .into_iter()
        .collect();
    root.extend(keep("func_exports", &function));
    let minimal = root.clone();
    root.extend(keep("types", &ty));
    root.extend(keep("interface_exports", &interface));

    let applies = |world_docs: &Map<String, Value>| -> Option<Vec<u8>> {
        let mut payload = vec![SECTION_VERSION];
        let json = serde_json::json!({"worlds": {DECODED_WORLD: world_docs}});
        payload.extend_from_slice(json.to_string().as_bytes());
        let metadata = wit_parser::PackageMetadata::decode(&payload).ok()?;
        metadata.inject(&mut resolve.clone(), package).ok()?;
        Some(payload)
    };
    applies(&root).or_else(|| applies(&minimal))
}

/// The `package-docs` payload for the WIT package in `dir`: the doc comments of
/// its interfaces and of `world` (the package's only world when `None`), keyed as
/// wit-component's decoder names a component's world (`root`), so that
/// `wasm-tools component wit` shows them too.
pub fn section_from_wit(dir: &Path, world: Option<&str>) -> Result<Vec<u8>, DocsError> {
    let wit_error = |e: anyhow::Error| DocsError::Wit {
        path: dir.display().to_string(),
        message: format!("{e:#}"),
    };
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve.push_dir(dir).map_err(wit_error)?;
    let names: Vec<String> = resolve.packages[package].worlds.keys().cloned().collect();
    let chosen = match (world, names.as_slice()) {
        (Some(w), _) if names.iter().any(|n| n == w) => w.to_string(),
        (Some(w), _) => return Err(DocsError::NoWorld(w.to_string())),
        (None, [only]) => only.clone(),
        (None, _) => return Err(DocsError::WhichWorld(names.join(", "))),
    };
    let metadata = wit_parser::PackageMetadata::extract(&resolve, package);
    let encoded = metadata.encode().map_err(wit_error)?;
    let mut json: Map<String, Value> = match serde_json::from_slice(&encoded[1..]) {
        Ok(Value::Object(map)) => map,
        _ => return Err(DocsError::Json("wit-parser wrote unexpected JSON".into())),
    };
    let world_docs = json
        .get_mut("worlds")
        .and_then(Value::as_object_mut)
        .and_then(|worlds| worlds.remove(&chosen));
    let mut worlds = Map::new();
    if let Some(docs) = world_docs {
        worlds.insert(DECODED_WORLD.into(), docs);
    }
    json.insert("worlds".into(), Value::Object(worlds));
    let mut payload = vec![SECTION_VERSION];
    payload.extend_from_slice(Value::Object(json).to_string().as_bytes());
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docs::PackageDocs;

    #[test]
    fn wit_folders_become_sections() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.wit"),
            "package t:a;\n/// Tools.\ninterface i {\n  /// Adds.\n  add: func(a: u8) -> u8;\n}\n\
             world w {\n  export i;\n  /// Says hi.\n  export hi: func() -> string;\n}\n",
        )
        .unwrap();
        let section = section_from_wit(dir.path(), None).unwrap();
        let docs = PackageDocs::decode(&section).unwrap();
        assert_eq!(docs.function(None, "hi").as_deref(), Some("Says hi."));
        assert_eq!(
            docs.function(Some("t:a/i"), "add").as_deref(),
            Some("Adds.")
        );
        assert!(matches!(
            section_from_wit(dir.path(), Some("nope")),
            Err(DocsError::NoWorld(_))
        ));
    }
}
