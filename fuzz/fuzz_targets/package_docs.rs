//! The package-docs reader: custom sections of an arbitrary binary, the
//! section's payload, and look-ups in it.
//! Invariants: no panic; a section written with `with_section` reads back.
#![no_main]
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use wharf::fuzzing::{PackageDocs, custom_sections, with_section};

#[derive(Arbitrary, Debug)]
struct Case<'a> {
    binary: &'a [u8],
    payload: &'a [u8],
    interface: Option<&'a str>,
    name: &'a str,
    items: Vec<&'a str>,
}

fn look_up(docs: &PackageDocs, case: &Case<'_>) {
    let _ = docs.function(case.interface, case.name);
    if let Some(found) = docs.type_docs(case.interface, case.name) {
        for item in &case.items {
            let _ = found.item(item);
        }
    }
    let _ = docs.type_with_items(case.interface, &case.items);
}

fuzz_target!(|case: Case<'_>| {
    if let Ok(Some(docs)) = PackageDocs::from_component(case.binary) {
        look_up(&docs, &case);
    }
    if let Ok(docs) = PackageDocs::decode(case.payload) {
        look_up(&docs, &case);
    }
    if custom_sections(case.binary).is_ok() {
        let written = with_section(case.binary, "wharf-package-docs", Some(case.payload))
            .expect("a binary whose sections list can take one more");
        let sections = custom_sections(&written).expect("the written binary lists");
        let (_, range) = sections
            .iter()
            .rev()
            .find(|(name, _)| name == "wharf-package-docs")
            .expect("the written section");
        assert_eq!(&written[range.clone()], case.payload);
        assert_eq!(
            PackageDocs::from_component(&written).ok().flatten(),
            PackageDocs::decode(case.payload).ok()
        );
    }
});
