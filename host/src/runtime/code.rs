//! The code a plugin's calls run: its compiled component, linked, with where
//! its exports are. A plugin's code is replaced whole when Cranelift's
//! optimised compile of a component first served from Winch's is ready (see
//! `tiers`); everything else about the plugin stays.

use std::sync::Arc;

use wasmtime::component::{Component, InstancePre, Linker};

use super::bindings::exports::wharf::plugin::prompts as wit_prompts;
use super::bindings::exports::wharf::plugin::resources as wit_resources;
use super::bindings::exports::wharf::plugin::tools as wit_tools;
use super::failure::{LoadError, SkippedFunction};
use super::instances::{InstanceSettings, Instances};
use super::plain::{self, PlainExports};
use super::state::{HostState, Sandbox};
use crate::docs::PackageDocs;

/// A plugin's linked component and where its exports are, for one compile
/// of it.
pub(crate) struct Code {
    /// Its compiled component, held so that plugins of the same bytes loaded
    /// meanwhile share it (see `shared`).
    pub(super) _component: Arc<Component>,
    /// Makes its instances and keeps its spare.
    pub(super) instances: Arc<Instances>,
    pub(super) exports: Exports,
    /// The compiler that made it.
    pub(super) tier: Tier,
}

/// Which compiler made a plugin's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// Winch: compiled quickly, runs slower; replaced when Cranelift is done.
    Quick,
    /// Cranelift.
    Optimized,
}

/// How a plugin's tools are called.
pub(super) enum Exports {
    Wharf(WharfExports),
    Plain(PlainExports),
}

/// Where a `wharf:plugin` component's exports are: `tools` always, `prompts`
/// and `resources` if the component offers them (a `tool-plugin` does not).
pub(super) struct WharfExports {
    pub(super) tools: wit_tools::GuestIndices,
    pub(super) prompts: Option<wit_prompts::GuestIndices>,
    pub(super) resources: Option<wit_resources::GuestIndices>,
}

/// The export a component offers prompts through.
const PROMPTS_INTERFACE: &str = "wharf:plugin/prompts@0.1.0";

/// The export a component offers resources through.
const RESOURCES_INTERFACE: &str = "wharf:plugin/resources@0.1.0";

impl WharfExports {
    fn new(pre: &InstancePre<HostState>) -> Result<Self, LoadError> {
        let tools = wit_tools::GuestIndices::new(pre)
            .map_err(|e| LoadError::NotAToolPlugin(format!("{e:#}")))?;
        // Present but not of our shape: a broken plugin, not a missing feature.
        let bad_export = |e: wasmtime::Error| LoadError::BadExport(format!("{e:#}"));
        let prompts = match pre.component().get_export_index(None, PROMPTS_INTERFACE) {
            None => None,
            Some(_) => Some(wit_prompts::GuestIndices::new(pre).map_err(bad_export)?),
        };
        let resources = match pre.component().get_export_index(None, RESOURCES_INTERFACE) {
            None => None,
            Some(_) => Some(wit_resources::GuestIndices::new(pre).map_err(bad_export)?),
        };
        Ok(Self {
            tools,
            prompts,
            resources,
        })
    }
}

/// What a plugin's code is made with, for components compiled by one engine:
/// its linker, and how instances are made. Cloned into the background task
/// that makes the optimised code.
#[derive(Clone)]
pub(crate) struct CodeMaker {
    pub(super) tier: Tier,
    pub(super) linker: Arc<Linker<HostState>>,
    pub(super) settings: InstanceSettings,
}

/// A plugin's code, and the exported functions of a plain component that are
/// not tools (with the reason).
pub(super) struct Made {
    pub(super) code: Code,
    pub(super) skipped: Vec<SkippedFunction>,
}

impl CodeMaker {
    /// Links `component` and finds its exports. A `wharf:plugin` component's
    /// exports must have the contract's shape; a plain component must export
    /// at least one function usable as a tool, and of two giving the same
    /// tool name the first is kept.
    pub(super) fn make(
        &self,
        component: &Arc<Component>,
        name: &Arc<str>,
        sandbox: &Arc<Sandbox>,
        docs: &PackageDocs,
    ) -> Result<Made, LoadError> {
        let pre = self
            .linker
            .instantiate_pre(component)
            .map_err(|e| LoadError::Link(format!("{e:#}")))?;
        let engine = &self.settings.engine;
        let is_wharf = component
            .component_type()
            .exports(engine)
            .any(|(name, _)| name.starts_with("wharf:plugin/tools"));
        let (exports, skipped) = if is_wharf {
            (Exports::Wharf(WharfExports::new(&pre)?), Vec::new())
        } else {
            let (tools, mut skipped) = plain::describe(engine, component, docs);
            let mut kept: Vec<plain::PlainTool> = Vec::with_capacity(tools.len());
            for tool in tools {
                if kept.iter().any(|t| t.spec.name == tool.spec.name) {
                    skipped.push(SkippedFunction {
                        function: tool.spec.name.clone(),
                        reason: "another exported interface gives the same tool name".into(),
                    });
                } else {
                    kept.push(tool);
                }
            }
            if kept.is_empty() {
                return Err(LoadError::NoTools(skipped));
            }
            (Exports::Plain(PlainExports { tools: kept }), skipped)
        };
        let instances = Instances::new(name.clone(), sandbox.clone(), pre, self.settings.clone());
        Ok(Made {
            code: Code {
                _component: component.clone(),
                instances: Arc::new(instances),
                exports,
                tier: self.tier,
            },
            skipped,
        })
    }
}
