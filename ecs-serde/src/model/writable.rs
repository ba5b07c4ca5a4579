//! What a save format can hold (model layer).
//!
//! Whether a save format can hold a value tree and load it back: JSON has
//! no NaN or infinity, and loads limit how deep values nest.

use crate::model::depth::{too_deep, MAX_DEPTH, MAX_RON_DEPTH};
use crate::model::error::Format;
use crate::model::value::Value;

/// The path of the first value (in writing order) for which `hit` holds,
/// given the value and its level. Levels are counted as loads count them
/// (see `depth.rs`); a `Some` adds one if `options_nest`. Nothing below a
/// hit is visited.
fn find_path(value: &Value, options_nest: bool, hit: &mut dyn FnMut(&Value, usize) -> bool) -> Option<String> {
    fn walk(
        value: &Value,
        level: usize,
        options_nest: bool,
        path: &mut String,
        hit: &mut dyn FnMut(&Value, usize) -> bool,
    ) -> bool {
        if hit(value, level) {
            return true;
        }
        let len = path.len();
        let found = match value {
            Value::Option(Some(v)) => walk(v, level + usize::from(options_nest), options_nest, path, hit),
            Value::Seq(items) => items.iter().enumerate().any(|(i, v)| {
                path.truncate(len);
                path.push_str(&format!("[{i}]"));
                walk(v, level + 1, options_nest, path, hit)
            }),
            Value::Map(entries) => entries.iter().any(|(k, v)| {
                path.truncate(len);
                push_field(path, &key_text(k));
                walk(k, level + 1, options_nest, path, hit) || walk(v, level + 1, options_nest, path, hit)
            }),
            Value::Struct { fields, .. } => fields.iter().any(|(k, v)| {
                path.truncate(len);
                push_field(path, k);
                walk(v, level + 1, options_nest, path, hit)
            }),
            Value::Variant(v) => {
                push_field(path, v.0);
                walk(&v.1, level + 1, options_nest, path, hit)
            }
            _ => false,
        };
        if !found {
            path.truncate(len);
        }
        found
    }
    let mut path = String::new();
    walk(value, 0, options_nest, &mut path, hit).then_some(path)
}

/// The path and message of the first part of `value` a save in `format`
/// must not hold: a value nested past what loading `format` allows, or (in
/// JSON) a NaN or infinite number.
pub(crate) fn unwritable(value: &Value, format: Format) -> Option<(String, String)> {
    let limit = match format {
        Format::Ron => MAX_RON_DEPTH,
        _ => MAX_DEPTH,
    };
    let json = format == Format::Json;
    let mut reason = None;
    let path = find_path(value, !json, &mut |node, level| {
        let non_finite = match node {
            Value::F32(x) => !x.is_finite(),
            Value::F64(x) => !x.is_finite(),
            _ => false,
        };
        if level > limit {
            reason = Some(too_deep_to_save(format));
        } else if json && non_finite {
            reason = Some("JSON cannot hold NaN or infinite numbers; save as RON or binary".to_owned());
        }
        reason.is_some()
    })?;
    Some((path, reason.expect("a path is found with its reason")))
}

/// The message for a value nested past what loading `format` allows.
pub(crate) fn too_deep_to_save(format: Format) -> String {
    match format {
        Format::Ron => {
            format!(
                "{}, more than RON loads allow; save as JSON or binary (up to {MAX_DEPTH})",
                too_deep(MAX_RON_DEPTH)
            )
        }
        _ => format!("{}, more than loads allow", too_deep(MAX_DEPTH)),
    }
}

fn push_field(path: &mut String, name: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(name);
}

fn key_text(key: &Value) -> String {
    match key {
        Value::String(s) => s.clone(),
        Value::U64(n) => n.to_string(),
        Value::I64(n) => n.to_string(),
        other => format!("<{}>", other.kind()),
    }
}
