//! Wharf's values in MCP form: tools, prompts, resources and templates as
//! listed, a call's output and a rendered prompt as answered, content items,
//! and listing cursors. Pure functions, no I/O: the handlers decide what to
//! answer, these only say how it is spelled.

use std::borrow::Cow;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptResult, Prompt, PromptArgument, PromptMessage, Resource,
    ResourceContents, ResourceTemplate, Tool, ToolAnnotations,
};
use serde_json::json;

use crate::registry::{
    ExposedPrompt, ExposedResource, ExposedTemplate, ExposedTool, ResourceTarget,
};
use crate::runtime::{
    CallOutput, ContentItem, RenderedPrompt, ResourceBody, ResourceContent, Role,
};

/// The MCP description of an exposed prompt.
pub(super) fn mcp_prompt(prompt: &ExposedPrompt) -> Prompt {
    let spec = prompt.spec();
    let arguments = spec
        .arguments
        .iter()
        .map(|a| {
            let mut argument = PromptArgument::new(&a.name).with_required(a.required);
            argument.title = a.title.clone();
            argument.description = a.description.clone();
            argument
        })
        .collect::<Vec<_>>();
    let mut out = Prompt::new(
        prompt.name(),
        spec.description.clone(),
        (!arguments.is_empty()).then_some(arguments),
    );
    out.title = spec.title.clone();
    out
}

/// A rendered prompt as `prompts/get` answers it.
pub(super) fn mcp_prompt_result(rendered: RenderedPrompt) -> GetPromptResult {
    let messages = rendered
        .messages
        .into_iter()
        .map(|(role, content)| {
            let role = match role {
                Role::User => rmcp::model::Role::User,
                Role::Assistant => rmcp::model::Role::Assistant,
            };
            PromptMessage::new(role, mcp_content(content))
        })
        .collect();
    let mut result = GetPromptResult::new(messages);
    result.description = rendered.description;
    result
}

/// The MCP description of an exposed tool.
pub(super) fn mcp_tool(tool: &ExposedTool) -> Tool {
    let spec = tool.spec();
    let mut out = Tool::new_with_raw(
        tool.name().to_string(),
        spec.description.clone().map(Cow::Owned),
        Arc::new(spec.input_schema.clone()),
    );
    out.title = spec.title.clone();
    out.output_schema = spec.output_schema.clone().map(Arc::new);
    out.annotations = spec.hints.as_ref().map(|h| {
        ToolAnnotations::from_raw(
            h.title.clone(),
            h.read_only,
            h.destructive,
            h.idempotent,
            h.open_world,
        )
    });
    out
}

/// Binary data as MCP carries it.
fn base64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// One content item as MCP content; binary data is base64-encoded.
fn mcp_content(item: ContentItem) -> ContentBlock {
    let b64 = base64;
    match item {
        ContentItem::Text(text) => ContentBlock::text(text),
        ContentItem::Image { data, mime_type } => ContentBlock::image(b64(&data), mime_type),
        ContentItem::Audio { data, mime_type } => ContentBlock::audio(b64(&data), mime_type),
        ContentItem::ResourceLink {
            uri,
            name,
            title,
            description,
            mime_type,
            size,
        } => {
            let mut link = Resource::new(uri, name);
            link.title = title;
            link.description = description;
            link.mime_type = mime_type;
            link.size = size;
            ContentBlock::resource_link(link)
        }
        ContentItem::EmbeddedResource {
            uri,
            mime_type,
            body,
        } => ContentBlock::resource(match body {
            ResourceBody::Text(text) => ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                meta: None,
            },
            ResourceBody::Blob(data) => ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob: b64(&data),
                meta: None,
            },
        }),
    }
}

/// The MCP result of a call that ran to completion. Public so that the
/// overhead benchmark (`host/benches/overhead.rs`) can time this step alone.
pub fn mcp_result(output: CallOutput) -> CallToolResult {
    let mut content: Vec<ContentBlock> = output.content.into_iter().map(mcp_content).collect();
    // MCP asks servers that return structured content to mirror it as text, for
    // clients that only read `content`.
    if content.is_empty()
        && let Some(structured) = &output.structured
    {
        content.push(ContentBlock::text(structured.to_string()));
    }
    let mut result = CallToolResult::success(content);
    result.structured_content = output.structured;
    result.is_error = Some(output.is_error);
    result
}

/// Cursors name the last item of the previous page, so paging survives reloads.
pub(super) fn encode_cursor(last: &str) -> String {
    URL_SAFE_NO_PAD.encode(last)
}

pub(super) fn decode_cursor(cursor: &str) -> Result<String, McpError> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .filter(|name| !name.is_empty())
        .ok_or_else(|| {
            McpError::invalid_params(
                format!("Invalid cursor: {cursor}"),
                Some(json!({ "cursor": cursor })),
            )
        })
}

/// The MCP description of a listed resource.
pub(super) fn mcp_resource(resource: &ExposedResource) -> Resource {
    let spec = resource.spec();
    let mut out = Resource::new(resource.uri(), &spec.name);
    out.title = spec.title.clone();
    out.description = spec.description.clone();
    out.mime_type = spec.mime_type.clone();
    out.size = spec.size;
    out
}

/// The MCP description of a resource template.
pub(super) fn mcp_template(template: &ExposedTemplate) -> ResourceTemplate {
    let spec = template.spec();
    let mut out = ResourceTemplate::new(template.template().as_str(), &spec.name);
    out.title = spec.title.clone();
    out.description = spec.description.clone();
    out.mime_type = spec.mime_type.clone();
    out
}

/// One piece of a read, its URI as clients know it: the one they asked for,
/// or another of the plugin's URIs exposed the same way.
pub(super) fn mcp_resource_contents(
    content: ResourceContent,
    requested: &str,
    target: &ResourceTarget<'_>,
) -> ResourceContents {
    let uri = if content.uri == target.plugin_uri {
        requested.to_owned()
    } else {
        target
            .naming
            .expose_uri(target.plugin.name(), &content.uri)
            .unwrap_or(content.uri)
    };
    match content.body {
        ResourceBody::Text(text) => ResourceContents::TextResourceContents {
            uri,
            mime_type: content.mime_type,
            text,
            meta: None,
        },
        ResourceBody::Blob(data) => ResourceContents::BlobResourceContents {
            uri,
            mime_type: content.mime_type,
            blob: base64(&data),
            meta: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        let cursor = encode_cursor("calc_add");
        assert_eq!(decode_cursor(&cursor).unwrap(), "calc_add");
        let error = decode_cursor("not base64!").unwrap_err();
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(error.message, "Invalid cursor: not base64!");
        assert!(decode_cursor("").is_err());
    }

    #[test]
    fn structured_output_is_mirrored_as_text() {
        let result = mcp_result(CallOutput {
            content: vec![],
            structured: Some(json!({"result": 3})),
            is_error: false,
        });
        assert_eq!(result.content.len(), 1);
        assert_eq!(result.content[0].as_text().unwrap().text, r#"{"result":3}"#);
        assert_eq!(result.structured_content, Some(json!({"result": 3})));
        assert_eq!(result.is_error, Some(false));
    }

    #[test]
    fn embedded_resources_carry_text_or_base64() {
        let result = mcp_result(CallOutput {
            content: vec![
                ContentItem::EmbeddedResource {
                    uri: "test://a".into(),
                    mime_type: Some("text/plain".into()),
                    body: ResourceBody::Text("hi".into()),
                },
                ContentItem::EmbeddedResource {
                    uri: "test://b".into(),
                    mime_type: None,
                    body: ResourceBody::Blob(vec![1, 2, 3]),
                },
            ],
            structured: None,
            is_error: false,
        });
        let value = serde_json::to_value(&result.content).unwrap();
        assert_eq!(
            value,
            json!([
                {"type": "resource", "resource": {"uri": "test://a", "mimeType": "text/plain", "text": "hi"}},
                {"type": "resource", "resource": {"uri": "test://b", "blob": "AQID"}}
            ])
        );
    }

    #[test]
    fn binary_content_is_base64() {
        let result = mcp_result(CallOutput {
            content: vec![ContentItem::Image {
                data: vec![1, 2, 3],
                mime_type: "image/png".into(),
            }],
            structured: None,
            is_error: false,
        });
        let value = serde_json::to_value(&result.content[0]).unwrap();
        assert_eq!(value["type"], "image");
        assert_eq!(value["data"], "AQID");
        assert_eq!(value["mimeType"], "image/png");
    }
}
