//! Pretty JSON and RON saves (format layer, text), written through
//! the whole save document of the model's `save` module. JSON gets its own
//! layout: one line per entity and per component, each component's value
//! on its line, so a save is both readable and not much larger than
//! compact JSON.

use std::io::{self, Write};

use archetable_core::World;
use serde_json::ser::Formatter;

use crate::model::error::{Format, SaveError};
use crate::model::save::{self, Saved};

/// Pretty-prints the outer `levels` levels of nesting, one item per line,
/// and writes anything deeper on one line (`{"x": 1.0, "y": 2.0}`).
pub(crate) struct ShallowPretty {
    levels: usize,
    depth: usize,
    has_value: bool,
}

impl ShallowPretty {
    pub fn new(levels: usize) -> Self {
        ShallowPretty { levels, depth: 0, has_value: false }
    }

    fn pretty(&self) -> bool {
        self.depth <= self.levels
    }

    fn begin<W: ?Sized + Write>(&mut self, writer: &mut W, open: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        writer.write_all(open)
    }

    fn end<W: ?Sized + Write>(&mut self, writer: &mut W, close: &[u8]) -> io::Result<()> {
        let pretty = self.pretty();
        self.depth -= 1;
        if pretty && self.has_value {
            writer.write_all(b"\n")?;
            self.indent(writer)?;
        }
        writer.write_all(close)
    }

    fn item<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if self.pretty() {
            writer.write_all(if first { b"\n" } else { b",\n" })?;
            self.indent(writer)
        } else if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn indent<W: ?Sized + Write>(&self, writer: &mut W) -> io::Result<()> {
        for _ in 0..self.depth {
            writer.write_all(b"  ")?;
        }
        Ok(())
    }
}

impl Formatter for ShallowPretty {
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.begin(writer, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.end(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.item(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.begin(writer, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.end(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.item(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// `value` as JSON laid out by [`ShallowPretty`].
pub(crate) fn to_string<T: serde::Serialize + ?Sized>(value: &T, levels: usize) -> Result<String, serde_json::Error> {
    let mut out = Vec::with_capacity(4096);
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, ShallowPretty::new(levels));
    value.serialize(&mut serializer)?;
    // serde_json writes valid UTF-8 only.
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// Writes `world` as a pretty JSON save.
pub(crate) fn save_json(world: &World) -> Result<Saved<String>, SaveError> {
    save::save(world, Format::Json, save::Keys::Names, |doc| to_string(doc, 3).map_err(|e| e.to_string()))
}

/// Writes `world` as a pretty RON save.
pub(crate) fn save_ron(world: &World) -> Result<Saved<String>, SaveError> {
    let config = ron::ser::PrettyConfig::new().depth_limit(3);
    save::save(world, Format::Ron, save::Keys::Names, |doc| {
        ron::ser::to_string_pretty(doc, config).map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn outer_levels_break_lines_inner_ones_do_not() {
        let value = serde_json::json!({ "a": { "b": { "c": [1, 2] }, "d": [] }, "e": {} });
        let text = super::to_string(&value, 2).unwrap();
        assert_eq!(text, "{\n  \"a\": {\n    \"b\": {\"c\": [1, 2]},\n    \"d\": []\n  },\n  \"e\": {}\n}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), value);
    }
}
