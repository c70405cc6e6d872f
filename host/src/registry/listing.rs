//! The sorted listings of a set: items by exposed name (or URI), with a
//! lookup by name and pages keyed by name.
//!
//! Tools, prompts, resources and templates are all listed the same way, so
//! the listing is one generic type over anything [`Named`].

use std::collections::HashMap;

/// Something listed by exposed name.
pub(super) trait Named {
    fn exposed_name(&self) -> &str;
}

/// Items sorted by exposed name, with a lookup by name.
pub(super) struct Listing<T> {
    pub(super) items: Vec<T>,
    by_name: HashMap<String, usize>,
}

impl<T> Default for Listing<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            by_name: HashMap::new(),
        }
    }
}

impl<T: Named> Listing<T> {
    pub(super) fn new(mut items: Vec<T>) -> Self {
        items.sort_by(|a, b| a.exposed_name().cmp(b.exposed_name()));
        let by_name = items
            .iter()
            .enumerate()
            .map(|(index, item)| (item.exposed_name().to_string(), index))
            .collect();
        Self { items, by_name }
    }

    pub(super) fn get(&self, name: &str) -> Option<&T> {
        self.by_name.get(name).map(|&index| &self.items[index])
    }

    /// The items after the one named `after` (all of them for `None`), at most
    /// `limit`, and whether more follow. Keyed by name rather than position, so a
    /// page boundary stays put when the set changes between pages.
    pub(super) fn page(&self, after: Option<&str>, limit: usize) -> (&[T], bool) {
        let start = match after {
            None => 0,
            Some(after) => self
                .items
                .partition_point(|item| item.exposed_name() <= after),
        };
        let end = (start + limit).min(self.items.len());
        (&self.items[start..end], end < self.items.len())
    }
}
