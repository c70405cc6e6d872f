//! Which exports of a plain component become tools, read from wasmtime's
//! reflection of the component's type; the rest are skipped with a reason.

use std::sync::Arc;

use wasmtime::Engine;
use wasmtime::component::types::{ComponentFunc, ComponentItem, Type};
use wasmtime::component::{Component, ComponentExportIndex};

use crate::docs::{PackageDocs, interface_short_name};

use super::schema;
use super::shape::{Case, Field, Named, Signature, WitType};
use crate::runtime::failure::SkippedFunction;
use crate::runtime::types::ToolSpec;

/// An exported function that is offered as a tool.
#[derive(Debug, Clone)]
pub(crate) struct PlainTool {
    pub(crate) spec: ToolSpec,
    /// Shared with the calls under way, which convert their results with it.
    pub(crate) signature: Arc<Signature>,
    /// Where the function is, valid for every instance of the component.
    pub(crate) export: ComponentExportIndex,
}

/// The named types visible in one export scope (the component's top level or one
/// exported interface), to name records, variants, enums and flags.
struct Scope<'a> {
    interface: Option<&'a str>,
    types: Vec<(String, Type)>,
}

/// The component's tools and the functions it skipped (reported with a warning).
/// Exports that are not meant as tools at all (WASI interfaces, toolchain
/// internals) are passed over with a debug line only.
pub(crate) fn describe(
    engine: &Engine,
    component: &Component,
    docs: &PackageDocs,
) -> (Vec<PlainTool>, Vec<SkippedFunction>) {
    let ty = component.component_type();
    let mut tools = Vec::new();
    let mut skipped = Vec::new();
    let mut top = Scope {
        interface: None,
        types: Vec::new(),
    };
    let mut top_funcs: Vec<(&str, ComponentFunc)> = Vec::new();
    let mut instances = Vec::new();
    for (name, item) in ty.exports(engine) {
        match item.ty {
            ComponentItem::ComponentFunc(func) => top_funcs.push((name, func)),
            ComponentItem::ComponentInstance(instance) => instances.push((name, instance)),
            ComponentItem::Type(t) => top.types.push((name.to_string(), t)),
            _ => tracing::debug!(export = name, "export is not a function; not a tool"),
        }
    }
    for (name, func) in top_funcs {
        if is_internal_function(name) {
            tracing::debug!(export = name, "toolchain internal; not a tool");
            continue;
        }
        let export = component.get_export_index(None, name);
        add(&mut tools, &mut skipped, docs, &top, name, &func, export);
    }
    for (iface, instance) in instances {
        if is_system_interface(iface) {
            tracing::debug!(
                export = iface,
                "system interface; its functions are not tools"
            );
            continue;
        }
        let Some(iface_index) = component.get_export_index(None, iface) else {
            continue;
        };
        let mut scope = Scope {
            interface: Some(iface),
            types: Vec::new(),
        };
        let mut funcs = Vec::new();
        for (name, item) in instance.exports(engine) {
            match item.ty {
                ComponentItem::ComponentFunc(func) => funcs.push((name, func)),
                ComponentItem::Type(t) => scope.types.push((name.to_string(), t)),
                _ => {}
            }
        }
        for (name, func) in funcs {
            if is_internal_function(name) || is_toolchain_init(iface, name) {
                tracing::debug!(
                    export = iface,
                    function = name,
                    "toolchain internal; not a tool"
                );
                continue;
            }
            let export = component.get_export_index(Some(&iface_index), name);
            add(&mut tools, &mut skipped, docs, &scope, name, &func, export);
        }
    }
    (tools, skipped)
}

/// Describes one function as a tool, or records why it is not one.
fn add(
    tools: &mut Vec<PlainTool>,
    skipped: &mut Vec<SkippedFunction>,
    docs: &PackageDocs,
    scope: &Scope<'_>,
    name: &str,
    func: &ComponentFunc,
    export: Option<ComponentExportIndex>,
) {
    let qualified = match scope.interface {
        Some(iface) => format!("{iface}#{name}"),
        None => name.to_string(),
    };
    let tool_name = match scope.interface {
        Some(iface) => format!("{}.{name}", interface_short_name(iface)),
        None => name.to_string(),
    };
    let outcome = signature(docs, scope, &tool_name, name, func).and_then(|sig| {
        export
            .map(|export| (sig, export))
            .ok_or_else(|| "wasmtime cannot find the export".to_string())
    });
    match outcome {
        Ok((signature, export)) => {
            let description = docs
                .function(scope.interface, name)
                .map(|d| d.trim().to_string())
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| signature.to_string());
            let spec = ToolSpec {
                name: tool_name,
                title: None,
                description: Some(description),
                input_schema: schema::input_schema(&signature),
                output_schema: schema::output_schema(&signature),
                hints: None,
                task_hint: None,
            };
            tools.push(PlainTool {
                spec,
                signature: Arc::new(signature),
                export,
            });
        }
        Err(reason) => skipped.push(SkippedFunction {
            function: qualified,
            reason,
        }),
    }
}

/// The function's parameters and result as our own types, or why they cannot be.
fn signature(
    docs: &PackageDocs,
    scope: &Scope<'_>,
    tool_name: &str,
    name: &str,
    func: &ComponentFunc,
) -> Result<Signature, String> {
    if name.starts_with('[') {
        return Err(
            "it belongs to a resource (constructors, methods and static functions \
                    of resources are not tools)"
                .into(),
        );
    }
    if func.async_() {
        return Err("it is an async function, which Wharf does not call yet".into());
    }
    let mut params = Vec::new();
    for (param, ty) in func.params() {
        let ty = convert(docs, scope, &ty).map_err(|why| format!("parameter `{param}` {why}"))?;
        params.push((param.to_string(), ty));
    }
    let mut results = func.results();
    let result = match (results.next(), results.next()) {
        (None, _) => None,
        (Some(ty), None) => {
            Some(convert(docs, scope, &ty).map_err(|why| format!("its result {why}"))?)
        }
        (Some(_), Some(_)) => return Err("it has several results".into()),
    };
    Ok(Signature {
        name: tool_name.to_string(),
        params,
        result,
    })
}

/// A wasmtime type as a [`WitType`]; the error completes "parameter `x` ...".
fn convert(docs: &PackageDocs, scope: &Scope<'_>, ty: &Type) -> Result<WitType, String> {
    let conv = |t: &Type| convert(docs, scope, t);
    Ok(match ty {
        Type::Bool => WitType::Bool,
        Type::S8 => WitType::S8,
        Type::U8 => WitType::U8,
        Type::S16 => WitType::S16,
        Type::U16 => WitType::U16,
        Type::S32 => WitType::S32,
        Type::U32 => WitType::U32,
        Type::S64 => WitType::S64,
        Type::U64 => WitType::U64,
        Type::Float32 => WitType::F32,
        Type::Float64 => WitType::F64,
        Type::Char => WitType::Char,
        Type::String => WitType::String,
        Type::List(list) => WitType::List(Box::new(conv(&list.ty())?)),
        Type::Tuple(tuple) => {
            WitType::Tuple(tuple.types().map(|t| conv(&t)).collect::<Result<_, _>>()?)
        }
        Type::Option(option) => WitType::Option(Box::new(conv(&option.ty())?)),
        Type::Result(result) => WitType::Result {
            ok: result.ok().map(|t| conv(&t)).transpose()?.map(Box::new),
            err: result.err().map(|t| conv(&t)).transpose()?.map(Box::new),
        },
        Type::Record(record) => {
            let items: Vec<&str> = record.fields().map(|f| f.name).collect();
            let (name, type_docs) = named(docs, scope, ty, &items);
            let mut fields = Vec::new();
            for field in record.fields() {
                fields.push(Field {
                    name: field.name.to_string(),
                    ty: conv(&field.ty)?,
                    docs: type_docs.as_ref().and_then(|d| d.item(field.name)),
                });
            }
            WitType::Record(Named {
                name,
                docs: type_docs.and_then(|d| d.docs),
                items: fields,
            })
        }
        Type::Variant(variant) => {
            let items: Vec<&str> = variant.cases().map(|c| c.name).collect();
            let (name, type_docs) = named(docs, scope, ty, &items);
            let mut cases = Vec::new();
            for case in variant.cases() {
                cases.push(Case {
                    name: case.name.to_string(),
                    ty: case.ty.as_ref().map(conv).transpose()?,
                    docs: type_docs.as_ref().and_then(|d| d.item(case.name)),
                });
            }
            WitType::Variant(Named {
                name,
                docs: type_docs.and_then(|d| d.docs),
                items: cases,
            })
        }
        Type::Enum(cases) => {
            let items: Vec<&str> = cases.names().collect();
            let (name, type_docs) = named(docs, scope, ty, &items);
            WitType::Enum(Named {
                name,
                docs: type_docs.and_then(|d| d.docs),
                items: cases.names().map(str::to_string).collect(),
            })
        }
        Type::Flags(flags) => {
            let items: Vec<&str> = flags.names().collect();
            let (name, type_docs) = named(docs, scope, ty, &items);
            WitType::Flags(Named {
                name,
                docs: type_docs.and_then(|d| d.docs),
                items: flags.names().map(str::to_string).collect(),
            })
        }
        Type::Own(_) | Type::Borrow(_) => {
            return Err(
                "uses a resource type (own/borrow handles cannot be passed as JSON)".into(),
            );
        }
        Type::Future(_) | Type::Stream(_) | Type::ErrorContext => {
            return Err("uses an async type (future, stream or error-context)".into());
        }
        Type::Map(_) => return Err("uses a map type, which Wharf does not convert yet".into()),
        Type::FixedLengthList(_) => {
            return Err("uses a fixed-length list, which Wharf does not convert yet".into());
        }
    })
}

/// The WIT name of a nominal type and its docs: by the type the scope exports
/// under a name, else by a documented type with exactly these items.
fn named(
    docs: &PackageDocs,
    scope: &Scope<'_>,
    ty: &Type,
    items: &[&str],
) -> (Option<String>, Option<crate::docs::TypeDocs>) {
    if let Some((name, _)) = scope.types.iter().find(|(_, t)| t == ty) {
        return (Some(name.clone()), docs.type_docs(scope.interface, name));
    }
    match docs.type_with_items(scope.interface, items) {
        Some((name, found)) => (Some(name), Some(found)),
        None => (None, None),
    }
}

/// Interfaces a component exports for its runtime, not as tools (`wasi:cli/run`,
/// `wasi:http/incoming-handler`, componentize-py's own).
fn is_system_interface(name: &str) -> bool {
    name.starts_with("wasi:") || name.starts_with("componentize-py:")
}

/// componentize-py exports an `exports` interface with an `init` function.
fn is_toolchain_init(interface: &str, function: &str) -> bool {
    interface_short_name(interface) == "exports" && function == "init"
}

/// Core-module conventions that can leak into exports (`cabi_realloc`,
/// `_initialize`, `_start`).
fn is_internal_function(name: &str) -> bool {
    name.starts_with("cabi_") || name.starts_with('_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_exports_are_recognised() {
        assert!(is_system_interface("wasi:cli/run@0.2.0"));
        assert!(is_system_interface("wasi:http/incoming-handler@0.2.3"));
        assert!(!is_system_interface("ns:pkg/math"));
        assert!(is_toolchain_init("exports", "init"));
        assert!(is_toolchain_init("componentize-py:init/exports", "init"));
        assert!(!is_toolchain_init("ns:pkg/math", "init"));
        assert!(is_internal_function("cabi_realloc"));
        assert!(is_internal_function("_initialize"));
        assert!(!is_internal_function("greet"));
    }
}
