//! WIT doc comments carried inside a component, in custom sections.
//!
//! No component toolchain keeps WIT doc comments (wit-bindgen, `wasm-tools
//! component new`, jco, componentize-py all drop them), so a plain component's
//! tool descriptions need a carrier: the `package-docs` section that
//! wit-component's own decoder reads (one version byte, then JSON with `worlds`
//! and `interfaces`).
//!
//! That decoder is strict: it applies the section to the component's decoded
//! package (`root:component`, world `root`) and refuses the whole component if
//! the section names anything that package lacks, and an exported interface
//! such as `ns:pkg/iface` always lies in a package of its own. So [`embed`]
//! writes two sections: `package-docs` with only what the decoder accepts
//! (checked by decoding), and `wharf-package-docs`, the same format with
//! everything the WIT folder documents (interfaces by their short names).
//! [`PackageDocs`] reads the latter when present, else the former.

use std::ops::Range;
use std::path::Path;

use serde_json::{Map, Value};
use wasm_encoder::{CustomSection, Encode, Section};

/// The custom section's name, as defined by the component-model tooling.
pub const SECTION_NAME: &str = "package-docs";
/// Wharf's section: `package-docs`' format, with docs the standard one cannot hold.
pub const FULL_SECTION_NAME: &str = "wharf-package-docs";
/// The format version this host writes (it reads 0 and 1).
const SECTION_VERSION: u8 = 1;
/// The world key wit-component's decoder gives a component's own world.
const DECODED_WORLD: &str = "root";

/// Why doc comments could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum DocsError {
    #[error("this is not a WebAssembly binary")]
    NotWasm,
    #[error("the WebAssembly binary is truncated or malformed at byte {0}")]
    Malformed(usize),
    #[error("the package-docs section has unknown version {0}")]
    Version(u8),
    #[error("the package-docs section is not valid JSON: {0}")]
    Json(String),
    #[error("reading the WIT folder {path} failed: {message}")]
    Wit { path: String, message: String },
    #[error("the WIT package has several worlds ({0}); choose one with --world")]
    WhichWorld(String),
    #[error("the WIT package has no world named `{0}`")]
    NoWorld(String),
}

/// Documentation read from a component's `package-docs` section.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PackageDocs {
    json: Map<String, Value>,
}

/// The docs of a record, variant, enum or flags type and of its items.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TypeDocs {
    pub docs: Option<String>,
    /// Field or case name to its doc comment.
    pub items: Map<String, Value>,
}

impl TypeDocs {
    /// The doc comment of one field or case.
    pub fn item(&self, name: &str) -> Option<String> {
        self.items.get(name)?.as_str().map(str::to_string)
    }
}

impl PackageDocs {
    /// The docs in `component`'s top-level `wharf-package-docs` section, else
    /// its `package-docs` section; `None` if it has neither.
    pub fn from_component(component: &[u8]) -> Result<Option<Self>, DocsError> {
        let sections = custom_sections(component)?;
        let find = |wanted: &str| {
            sections
                .iter()
                .rev()
                .find(|(name, _)| name == wanted)
                .map(|(_, range)| range.clone())
        };
        match find(FULL_SECTION_NAME).or_else(|| find(SECTION_NAME)) {
            Some(payload) => Self::decode(&component[payload]).map(Some),
            None => Ok(None),
        }
    }

    /// Parses the section's payload (a version byte, then JSON).
    pub fn decode(payload: &[u8]) -> Result<Self, DocsError> {
        match payload.first() {
            Some(0 | 1) => {}
            Some(other) => return Err(DocsError::Version(*other)),
            None => return Err(DocsError::Json("the section is empty".into())),
        }
        match serde_json::from_slice(&payload[1..]) {
            Ok(Value::Object(json)) => Ok(Self { json }),
            Ok(_) => Err(DocsError::Json("expected an object".into())),
            Err(e) => Err(DocsError::Json(e.to_string())),
        }
    }

    /// The doc comment of an exported function: top level when `interface` is
    /// `None`, else inside the exported interface (`ns:pkg/iface@1.0.0`).
    pub fn function(&self, interface: Option<&str>, func: &str) -> Option<String> {
        self.scopes(interface)
            .into_iter()
            .find_map(|scope| {
                ["func_exports", "funcs"]
                    .into_iter()
                    .find_map(|key| scope.get(key)?.get(func))
            })
            .and_then(docs_of)
    }

    /// The doc comments of a named type and its items.
    pub fn type_docs(&self, interface: Option<&str>, name: &str) -> Option<TypeDocs> {
        let entry = self
            .scopes(interface)
            .into_iter()
            .find_map(|scope| scope.get("types")?.get(name))?;
        Some(TypeDocs {
            docs: entry
                .get("docs")
                .and_then(Value::as_str)
                .map(str::to_string),
            items: entry
                .get("items")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        })
    }

    /// A documented type of this scope whose documented items are exactly `items`
    /// (field or case names, in any order), with its name: how a type is named
    /// when the component does not export it by name (world-level types built by
    /// wit-bindgen, for one).
    pub fn type_with_items(
        &self,
        interface: Option<&str>,
        items: &[&str],
    ) -> Option<(String, TypeDocs)> {
        if items.is_empty() {
            return None;
        }
        let mut wanted: Vec<&str> = items.to_vec();
        wanted.sort_unstable();
        self.scopes(interface).into_iter().find_map(|scope| {
            scope
                .get("types")?
                .as_object()?
                .iter()
                .find(|(_, entry)| {
                    let mut keys: Vec<&str> = entry
                        .get("items")
                        .and_then(Value::as_object)
                        .map(|m| m.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    keys.sort_unstable();
                    keys == wanted
                })
                .and_then(|(name, _)| Some((name.clone(), self.type_docs(interface, name)?)))
        })
    }

    /// Where an item's docs may be: for an interface, the package's interface of
    /// that short name and any world's inline interface of that name; for the top
    /// level, every world (`root` first).
    fn scopes(&self, interface: Option<&str>) -> Vec<&Value> {
        let worlds = self.json.get("worlds").and_then(Value::as_object);
        let mut worlds: Vec<(&String, &Value)> = worlds.into_iter().flatten().collect();
        worlds.sort_by_key(|(name, _)| name.as_str() != DECODED_WORLD);
        match interface {
            None => worlds.into_iter().map(|(_, w)| w).collect(),
            Some(full) => {
                let short = interface_short_name(full);
                let mut scopes: Vec<&Value> = self
                    .json
                    .get("interfaces")
                    .and_then(|i| i.get(short))
                    .into_iter()
                    .collect();
                for (_, world) in worlds {
                    for key in ["interface_exports", "interfaces"] {
                        for name in [full, short] {
                            scopes.extend(world.get(key).and_then(|m| m.get(name)));
                        }
                    }
                }
                scopes
            }
        }
    }
}

/// `iface` of `ns:pkg/iface@1.0.0` (the whole name when it has no package).
pub fn interface_short_name(name: &str) -> &str {
    let name = name.split_once('@').map_or(name, |(n, _)| n);
    name.rsplit_once('/').map_or(name, |(_, short)| short)
}

/// Function metadata is `{"docs": ...}` (version 1) or a bare string (version 0).
fn docs_of(value: &Value) -> Option<String> {
    match value {
        Value::String(docs) => Some(docs.clone()),
        other => other.get("docs")?.as_str().map(str::to_string),
    }
}

/// The top-level custom sections of a module or component: name and the byte
/// range of the payload.
pub fn custom_sections(bytes: &[u8]) -> Result<Vec<(String, Range<usize>)>, DocsError> {
    if bytes.len() < 8 || !bytes.starts_with(b"\0asm") {
        return Err(DocsError::NotWasm);
    }
    let mut sections = Vec::new();
    let mut at = 8;
    while at < bytes.len() {
        let id = bytes[at];
        let (size, body) = leb128(bytes, at + 1)?;
        let end = body
            .checked_add(size)
            .filter(|end| *end <= bytes.len())
            .ok_or(DocsError::Malformed(at))?;
        if id == 0 {
            let (name_len, name_start) = leb128(bytes, body)?;
            let name_end = name_start
                .checked_add(name_len)
                .filter(|e| *e <= end)
                .ok_or(DocsError::Malformed(body))?;
            let name = String::from_utf8_lossy(&bytes[name_start..name_end]).into_owned();
            sections.push((name, name_end..end));
        }
        at = end;
    }
    Ok(sections)
}

/// An unsigned LEB128 `u32` at `at`: its value and the offset after it.
fn leb128(bytes: &[u8], at: usize) -> Result<(usize, usize), DocsError> {
    let mut value: usize = 0;
    for i in 0..5 {
        let byte = *bytes.get(at + i).ok_or(DocsError::Malformed(at))?;
        value |= usize::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((value, at + i + 1));
        }
    }
    Err(DocsError::Malformed(at))
}

/// `component` with its custom sections called `name` removed and, if `payload`
/// is given, one holding it appended (custom sections may go anywhere).
pub fn with_section(
    component: &[u8],
    name: &str,
    payload: Option<&[u8]>,
) -> Result<Vec<u8>, DocsError> {
    let sections = custom_sections(component)?;
    let mut out = Vec::with_capacity(component.len() + payload.map_or(0, <[u8]>::len) + 32);
    out.extend_from_slice(&component[..8]);
    let mut at = 8;
    while at < component.len() {
        let (size, body) = leb128(component, at + 1)?;
        let end = body + size;
        let drop = component[at] == 0
            && sections
                .iter()
                .any(|(section, range)| section == name && range.end == end);
        if !drop {
            out.extend_from_slice(&component[at..end]);
        }
        at = end;
    }
    if let Some(payload) = payload {
        let section = CustomSection {
            name: name.into(),
            data: payload.into(),
        };
        out.push(section.id());
        section.encode(&mut out);
    }
    Ok(out)
}

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
    use serde_json::json;

    /// The smallest component: the header alone.
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\x00\x01\x00";

    fn payload(json: Value) -> Vec<u8> {
        let mut p = vec![1];
        p.extend_from_slice(json.to_string().as_bytes());
        p
    }

    #[test]
    fn sections_round_trip_and_replace() {
        let first = with_section(
            EMPTY_COMPONENT,
            SECTION_NAME,
            Some(&payload(json!({"docs": "one"}))),
        )
        .unwrap();
        let second =
            with_section(&first, SECTION_NAME, Some(&payload(json!({"docs": "two"})))).unwrap();
        let sections = custom_sections(&second).unwrap();
        assert_eq!(sections.len(), 1, "the old section is replaced");
        let docs = PackageDocs::from_component(&second).unwrap().unwrap();
        assert_eq!(docs.json["docs"], "two");
        assert_eq!(PackageDocs::from_component(EMPTY_COMPONENT).unwrap(), None);
        // Wharf's own section wins over the standard one.
        let both = with_section(
            &second,
            FULL_SECTION_NAME,
            Some(&payload(json!({"docs": "full"}))),
        )
        .unwrap();
        let docs = PackageDocs::from_component(&both).unwrap().unwrap();
        assert_eq!(docs.json["docs"], "full");
        let removed = with_section(&both, SECTION_NAME, None).unwrap();
        assert_eq!(custom_sections(&removed).unwrap().len(), 1);
    }

    #[test]
    fn malformed_binaries_are_refused() {
        assert!(matches!(custom_sections(b"nope"), Err(DocsError::NotWasm)));
        let mut truncated = EMPTY_COMPONENT.to_vec();
        truncated.extend_from_slice(&[0, 50, 1]);
        assert!(matches!(
            custom_sections(&truncated),
            Err(DocsError::Malformed(8))
        ));
        assert!(matches!(
            PackageDocs::decode(&[7, b'{', b'}']),
            Err(DocsError::Version(7))
        ));
    }

    #[test]
    fn lookups_cover_worlds_interfaces_and_both_versions() {
        let docs = PackageDocs::decode(&payload(json!({
            "worlds": {"root": {
                "func_exports": {"greet": {"docs": "Greets."}},
                "funcs": {"old": "Old style."},
                "types": {"point": {"docs": "A point.", "items": {"x": "Across."}}}
            }},
            "interfaces": {"kinds": {
                "funcs": {"area": {"docs": "The area."}},
                "types": {"shape": {"docs": "A shape."}}
            }}
        })))
        .unwrap();
        assert_eq!(docs.function(None, "greet").as_deref(), Some("Greets."));
        assert_eq!(docs.function(None, "old").as_deref(), Some("Old style."));
        assert_eq!(docs.function(None, "area"), None);
        assert_eq!(
            docs.function(Some("t:s/kinds@0.1.0"), "area").as_deref(),
            Some("The area.")
        );
        let point = docs.type_docs(None, "point").unwrap();
        assert_eq!(point.docs.as_deref(), Some("A point."));
        assert_eq!(point.item("x").as_deref(), Some("Across."));
        let (name, found) = docs.type_with_items(None, &["x"]).unwrap();
        assert_eq!((name.as_str(), found), ("point", point));
        assert_eq!(docs.type_with_items(None, &["x", "y"]), None);
        assert_eq!(docs.type_with_items(None, &[]), None);
        assert_eq!(
            docs.type_docs(Some("kinds"), "shape")
                .unwrap()
                .docs
                .as_deref(),
            Some("A shape.")
        );
    }

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

    #[test]
    fn short_names_drop_package_and_version() {
        assert_eq!(interface_short_name("ns:pkg/iface@1.0.0"), "iface");
        assert_eq!(interface_short_name("ns:pkg/iface"), "iface");
        assert_eq!(interface_short_name("local"), "local");
    }
}
