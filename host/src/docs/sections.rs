//! The custom sections of a WebAssembly binary: listing them, and replacing one.
//!
//! Reading and writing docs both need only the top-level section headers, so
//! this walks them directly (a name and a LEB128 size each) rather than parse
//! the whole binary.

use std::ops::Range;

use wasm_encoder::{CustomSection, Encode, Section};

use super::DocsError;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docs::{EMPTY_COMPONENT, PackageDocs};

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
}
