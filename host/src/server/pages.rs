//! One page of a listing (`tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`), built the same way for all four: items after
//! the request's cursor, the next cursor if more follow, and how long clients
//! may cache the page.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CacheScope, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, Resource, ResourceTemplate, Tool,
};

use super::WharfServer;
use super::convert::{decode_cursor, encode_cursor};
use crate::registry::ToolSet;

/// A list result: rmcp defines one type per listing, all with the same
/// fields, and no common trait to build them by.
pub(super) trait ListResult {
    /// What the listing lists, in MCP form.
    type Item;

    /// The page of `items`, cacheable for `ttl_ms` by anyone, continued at
    /// `next_cursor` if more follow.
    fn page(items: Vec<Self::Item>, next_cursor: Option<String>, ttl_ms: u64) -> Self;
}

macro_rules! list_result {
    ($($result:ty => $item:ty),* $(,)?) => {$(
        impl ListResult for $result {
            type Item = $item;

            fn page(items: Vec<$item>, next_cursor: Option<String>, ttl_ms: u64) -> Self {
                let mut result = Self::with_all_items(items)
                    .with_ttl_ms(ttl_ms)
                    .with_cache_scope(CacheScope::Public);
                result.next_cursor = next_cursor;
                result
            }
        }
    )*};
}

list_result! {
    ListToolsResult => Tool,
    ListPromptsResult => Prompt,
    ListResourcesResult => Resource,
    ListResourceTemplatesResult => ResourceTemplate,
}

impl WharfServer {
    /// One page of a listing, from the request's cursor: `page` takes the
    /// registry's items after the cursor's, `key` names an item for the next
    /// cursor (which names this page's last item, so paging survives
    /// reloads), `map` puts an item in MCP form, `visible` leaves out what
    /// the caller may not see (a page may then be shorter than the page size).
    pub(super) fn list_page<R: ListResult, T>(
        &self,
        request: Option<PaginatedRequestParams>,
        page: impl for<'a> Fn(&'a ToolSet, Option<&str>, usize) -> (&'a [T], bool),
        key: impl Fn(&T) -> &str,
        map: impl Fn(&T) -> R::Item,
        visible: impl Fn(&ToolSet, &T) -> bool,
    ) -> Result<R, McpError> {
        let set = self.registry.snapshot();
        let after = after_cursor(request)?;
        let (items, more) = page(&set, after.as_deref(), self.options.page_size);
        let next = items
            .last()
            .filter(|_| more)
            .map(|last| encode_cursor(key(last)));
        Ok(R::page(
            items
                .iter()
                .filter(|item| visible(&set, item))
                .map(map)
                .collect(),
            next,
            self.list_ttl_ms(),
        ))
    }
}

/// The name a cursor points after, if the request carries one.
fn after_cursor(request: Option<PaginatedRequestParams>) -> Result<Option<String>, McpError> {
    request
        .and_then(|r| r.cursor)
        .map(|cursor| decode_cursor(&cursor))
        .transpose()
}
