//! Reading a component's doc comments: finding the docs section in a component
//! and looking up the docs of a function, a type or its items.
//!
//! What the runtime uses to describe a plain component's tools; it reads
//! Wharf's own section when present, else the standard one, and both format
//! versions (0 and 1).

use serde_json::{Map, Value};

use super::sections::custom_sections;
use super::{DECODED_WORLD, DocsError, FULL_SECTION_NAME, SECTION_NAME};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docs::{EMPTY_COMPONENT, with_section};
    use serde_json::json;

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
    fn short_names_drop_package_and_version() {
        assert_eq!(interface_short_name("ns:pkg/iface@1.0.0"), "iface");
        assert_eq!(interface_short_name("ns:pkg/iface"), "iface");
        assert_eq!(interface_short_name("local"), "local");
    }
}
