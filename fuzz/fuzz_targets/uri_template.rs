//! The URI template matcher: a template and a URI, split at the first NUL.
//! Invariants: no panic; a template's expansion of the variables a URI matched
//! with matches again, to the same values.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wharf_uri_template::UriTemplate;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (template, uri) = text.split_once('\0').unwrap_or((text, ""));
    let Ok(template) = UriTemplate::parse(template) else {
        return;
    };
    let _ = template.variables().count();
    let _ = template.is_literal();
    if let Some(vars) = template.matches(uri) {
        let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let expanded = template.expand(&pairs);
        let again = template.matches(&expanded);
        assert!(
            again.is_some(),
            "{template:?} matched {uri:?} as {vars:?}, but not its own expansion {expanded:?}"
        );
    }
});
