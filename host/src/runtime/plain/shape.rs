//! The WIT types a plain component's functions use, in a form of our own.
//!
//! wasmtime's reflection types borrow the compiled component's type tables; this
//! owned copy is built once at load time (see `describe.rs`), so schema generation
//! and value conversion are plain functions that can be tested without a component.

use std::fmt;

/// A WIT value type that Wharf can carry as JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum WitType {
    Bool,
    S8,
    U8,
    S16,
    U16,
    S32,
    U32,
    S64,
    U64,
    F32,
    F64,
    Char,
    String,
    List(Box<WitType>),
    Tuple(Vec<WitType>),
    Option(Box<WitType>),
    Result {
        ok: Option<Box<WitType>>,
        err: Option<Box<WitType>>,
    },
    Record(Named<Vec<Field>>),
    Variant(Named<Vec<Case>>),
    Enum(Named<Vec<String>>),
    Flags(Named<Vec<String>>),
}

/// A nominal type's items with its WIT name and doc comment, when known.
#[derive(Debug, Clone, PartialEq)]
pub struct Named<T> {
    pub name: Option<String>,
    pub docs: Option<String>,
    pub items: T,
}

impl<T> Named<T> {
    /// An anonymous, undocumented type.
    pub fn bare(items: T) -> Self {
        Self {
            name: None,
            docs: None,
            items,
        }
    }
}

/// A record field.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: WitType,
    pub docs: Option<String>,
}

/// A variant case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub name: String,
    pub ty: Option<WitType>,
    pub docs: Option<String>,
}

/// A function's parameters and result.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// The name shown in the generated description (`greet`, `math.add`).
    pub name: String,
    pub params: Vec<(String, WitType)>,
    pub result: Option<WitType>,
}

impl WitType {
    /// Whether this is `option<T>` (an optional record field or parameter).
    pub fn is_option(&self) -> bool {
        matches!(self, WitType::Option(_))
    }
}

impl fmt::Display for WitType {
    /// WIT syntax; nominal types print their name when it is known.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let simple = match self {
            WitType::Bool => "bool",
            WitType::S8 => "s8",
            WitType::U8 => "u8",
            WitType::S16 => "s16",
            WitType::U16 => "u16",
            WitType::S32 => "s32",
            WitType::U32 => "u32",
            WitType::S64 => "s64",
            WitType::U64 => "u64",
            WitType::F32 => "f32",
            WitType::F64 => "f64",
            WitType::Char => "char",
            WitType::String => "string",
            WitType::List(t) => return write!(f, "list<{t}>"),
            WitType::Option(t) => return write!(f, "option<{t}>"),
            WitType::Tuple(ts) => {
                f.write_str("tuple<")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                return f.write_str(">");
            }
            WitType::Result { ok, err } => {
                return match (ok, err) {
                    (None, None) => f.write_str("result"),
                    (Some(ok), None) => write!(f, "result<{ok}>"),
                    (None, Some(err)) => write!(f, "result<_, {err}>"),
                    (Some(ok), Some(err)) => write!(f, "result<{ok}, {err}>"),
                };
            }
            WitType::Record(n) => n.name.as_deref().unwrap_or("record"),
            WitType::Variant(n) => n.name.as_deref().unwrap_or("variant"),
            WitType::Enum(n) => n.name.as_deref().unwrap_or("enum"),
            WitType::Flags(n) => n.name.as_deref().unwrap_or("flags"),
        };
        f.write_str(simple)
    }
}

impl fmt::Display for Signature {
    /// `name(a: t, b: u) -> r`, the description of an undocumented function.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.name)?;
        for (i, (name, ty)) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name}: {ty}")?;
        }
        f.write_str(")")?;
        if let Some(result) = &self.result {
            write!(f, " -> {result}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_print_as_wit() {
        let sig = Signature {
            name: "kinds.translate".into(),
            params: vec![
                (
                    "p".into(),
                    WitType::Record(Named {
                        name: Some("point".into()),
                        docs: None,
                        items: vec![],
                    }),
                ),
                ("xs".into(), WitType::List(Box::new(WitType::U8))),
                (
                    "t".into(),
                    WitType::Tuple(vec![WitType::S32, WitType::Option(Box::new(WitType::Char))]),
                ),
            ],
            result: Some(WitType::Result {
                ok: None,
                err: Some(Box::new(WitType::String)),
            }),
        };
        assert_eq!(
            sig.to_string(),
            "kinds.translate(p: point, xs: list<u8>, t: tuple<s32, option<char>>) -> result<_, string>"
        );
        let none = Signature {
            name: "ping".into(),
            params: vec![],
            result: None,
        };
        assert_eq!(none.to_string(), "ping()");
    }
}
