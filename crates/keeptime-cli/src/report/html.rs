//! HTML text helpers: escaping, and the facts of a definition list.

use std::fmt::Write as _;

/// HTML-escapes text for element content and quoted attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub(super) fn opt<T: ToString>(v: &Option<T>, none: &str) -> String {
    v.as_ref().map_or_else(|| none.to_string(), T::to_string)
}

pub(super) fn fact(h: &mut String, k: &str, v: &str) {
    let _ = write!(h, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
}
