//! Compact JSON and RON saves (format layer, text).
//!
//! Compact JSON and RON saves, written straight from the tables in the
//! columnar layout (version 3, see `model/save.rs`): the same text as
//! serializing the whole document (`model/save.rs`) with the format's
//! compact serializer, byte for byte, without a
//! [`Value`](crate::model::value::Value) tree per component. Each value goes through
//! [`Plain`](crate::model::plain::Plain), which writes what its tree
//! would; a value `Plain` refuses (see `model/plain.rs`) is written through
//! its tree, which also gives the error a save reports.
//!
//! The document's own fields (allocator, names, resources, ...) are written
//! by the format's serializer; only the punctuation around them, the
//! entity lists and the columns' brackets are written here.

use archetable_core::World;
use serde::Serialize;

use crate::model::error::SaveError;
use crate::model::registry::ComponentEntry;
use crate::model::save::{self, Allocator, ResourceMap, Saved, Skipped, COLUMNS_VERSION, FORMAT_TAG};
use crate::model::text_column::{Text, Utf8};
use crate::model::writable::unwritable;

/// Writing the document's own fields.
impl Text {
    /// Appends `value` as the format's compact serializer writes it.
    fn write<T: Serialize + ?Sized>(self, value: &T, out: &mut Vec<u8>) -> Result<(), SaveError> {
        let result = match self {
            Text::Json => serde_json::to_writer(&mut *out, value).map_err(|e| e.to_string()),
            Text::Ron => ron::Serializer::new(Utf8(out), None)
                .and_then(|mut serializer| value.serialize(&mut serializer))
                .map_err(|e| e.to_string()),
        };
        result.map_err(|message| SaveError::Encode { format: self.format(), message })
    }

    /// Appends the start of the document's field `name`.
    fn field(self, out: &mut Vec<u8>, name: &str, first: bool) {
        if !first {
            out.push(b',');
        }
        match self {
            Text::Json => {
                out.push(b'"');
                out.extend_from_slice(name.as_bytes());
                out.extend_from_slice(b"\":");
            }
            Text::Ron => {
                out.extend_from_slice(name.as_bytes());
                out.push(b':');
            }
        }
    }
}

/// The digits of 0 to 99, two by two.
const PAIRS: [u8; 200] = {
    let mut pairs = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        pairs[2 * i] = b'0' + (i / 10) as u8;
        pairs[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    pairs
};

/// Where the digits of a number end in a buffer of [`Digits`]: the most
/// a `u32` has.
const END: usize = 10;

/// The decimal digits of a number, ending at [`END`], from `at`; the
/// buffer is twice as long, so that [`END`] bytes from any digit are in it.
struct Digits {
    buf: [u8; 2 * END],
    at: usize,
}

impl Digits {
    /// The digits of `n`.
    #[inline(always)]
    fn of(n: u32) -> Digits {
        let (mut buf, mut at, mut n) = ([0u8; 2 * END], END, n as usize);
        while n >= 100 {
            let pair = 2 * (n % 100);
            n /= 100;
            at -= 2;
            buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if n >= 10 {
            at -= 2;
            buf[at..at + 2].copy_from_slice(&PAIRS[2 * n..2 * n + 2]);
        } else {
            at -= 1;
            buf[at] = b'0' + n as u8;
        }
        Digits { buf, at }
    }

    /// Counts up by one. The number must be below `u32::MAX`.
    #[inline(always)]
    fn count_up(&mut self) {
        let mut k = END;
        loop {
            k -= 1;
            if self.buf[k] != b'9' {
                self.buf[k] += 1;
                return;
            }
            self.buf[k] = b'0';
            if k == self.at {
                self.at -= 1;
                self.buf[self.at] = b'1';
                return;
            }
        }
    }

    /// Appends the digits: [`END`] bytes from the first (a copy of known
    /// size, without a call), cut to length.
    #[inline(always)]
    fn push_to(&self, out: &mut Vec<u8>) {
        let len = out.len();
        out.extend_from_slice(&self.buf[self.at..self.at + END]);
        out.truncate(len + END - self.at);
    }
}

/// Appends the decimal digits of `n`.
fn push_decimal(out: &mut Vec<u8>, n: u32) {
    Digits::of(n).push_to(out);
}

/// Appends the indices of a table's entities one after another: an index
/// one past the previous one (as in most tables) by counting the previous
/// one's digits up, others afresh.
struct Indices {
    last: Option<(u32, Digits)>,
}

impl Indices {
    #[inline(always)]
    fn push(&mut self, out: &mut Vec<u8>, index: u32) {
        match &mut self.last {
            Some((last, digits)) if last.checked_add(1) == Some(index) => {
                digits.count_up();
                *last = index;
                digits.push_to(out);
            }
            _ => {
                let digits = Digits::of(index);
                digits.push_to(out);
                self.last = Some((index, digits));
            }
        }
    }
}

/// Writes `world` as a compact `text` save.
pub(crate) fn save(world: &World, text: Text) -> Result<Saved<String>, SaveError> {
    let registry = crate::model::registry::registry_of(world);
    let plan = save::plan(world, &registry);
    let archetypes = world.archetypes().as_slice();
    let entities: usize = plan.archetypes.iter().map(|&(a, _)| archetypes[a].len()).sum();
    // About what a component takes, to grow the text once or twice.
    let components: usize = plan.archetypes.iter().map(|(a, e)| archetypes[*a].len() * e.len()).sum();
    // The text is written straight into the save's bytes, which are
    // checked to be UTF-8 once, at the end (they are: the serializers write
    // UTF-8, and so does everything written here).
    let mut out =
        Vec::with_capacity((16 * entities + 48 * components).min(crate::model::column::PREALLOCATE_BYTES) + 256);
    out.push(if text == Text::Json { b'{' } else { b'(' });
    text.field(&mut out, "format", true);
    text.write(FORMAT_TAG, &mut out)?;
    text.field(&mut out, "version", false);
    text.write(&COLUMNS_VERSION, &mut out)?;
    text.field(&mut out, "allocator", false);
    text.write(&Allocator::of(world), &mut out)?;
    text.field(&mut out, "components", false);
    text.write(&plan.names, &mut out)?;
    text.field(&mut out, "tables", false);
    out.push(b'[');
    let (open, close) = if text == Text::Json { (b'{', b'}') } else { (b'(', b')') };
    for (t, (a, entries)) in plan.archetypes.iter().enumerate() {
        let table = &archetypes[*a];
        if t > 0 {
            out.push(b',');
        }
        out.push(open);
        text.field(&mut out, "entities", true);
        out.push(b'[');
        let mut indices = Indices { last: None };
        for (i, entity) in world.table_entities(table).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            // The index alone for generation 1, else the handle's text.
            if entity.generation() == 1 {
                indices.push(&mut out, entity.index());
            } else {
                out.push(b'"');
                push_decimal(&mut out, entity.index());
                out.push(b'v');
                push_decimal(&mut out, entity.generation());
                out.push(b'"');
            }
        }
        out.push(b']');
        // Each column with the rows it covers (`None`: all of them); a
        // sparse component no entity here has is left out.
        let columns: Vec<(&ComponentEntry, Option<Vec<u32>>)> = entries
            .iter()
            .filter_map(|&(entry, _)| match plan.sparse_rows(world, table, entry) {
                None => Some((entry, None)),
                Some(rows) if rows.is_empty() => None,
                Some(rows) => Some((entry, Some(rows))),
            })
            .collect();
        text.field(&mut out, "columns", false);
        out.push(b'{');
        for (c, (entry, rows)) in columns.iter().enumerate() {
            if c > 0 {
                out.push(b',');
            }
            text.write(entry.name.as_str(), &mut out)?;
            out.push(b':');
            let column = (entry.text_column)(world, table);
            // The whole column by the format's own list, as a rule.
            let start = out.len();
            if rows.is_none() && column.write_all(text, &mut out) {
                continue;
            }
            out.truncate(start);
            out.push(b'[');
            // Else value by value, each through its tree where it must be.
            let mut from = 0;
            while let Err((item, start)) = column.write_list(rows.as_deref(), from, text, &mut out) {
                out.truncate(start);
                let row = rows.as_ref().map_or(item, |rows| rows[item] as usize);
                let error = |field: String, message: String| SaveError::Component {
                    entity: world.table_entity(table, row),
                    component: entry.name.clone(),
                    field,
                    message,
                };
                let tree = column.tree(row).map_err(|e| error(String::new(), e.0))?;
                if let Some((field, message)) = unwritable(&tree, text.format()) {
                    return Err(error(field, message));
                }
                text.write(&tree, &mut out)?;
                from = item + 1;
            }
            out.push(b']');
        }
        out.push(b'}');
        if columns.iter().any(|(_, rows)| rows.is_some()) {
            text.field(&mut out, "rows", false);
            out.push(b'{');
            let partial = columns.iter().filter_map(|(entry, rows)| Some((entry, rows.as_ref()?)));
            for (c, (entry, rows)) in partial.enumerate() {
                if c > 0 {
                    out.push(b',');
                }
                text.write(entry.name.as_str(), &mut out)?;
                out.push(b':');
                text.write(rows, &mut out)?;
            }
            out.push(b'}');
        }
        out.push(close);
    }
    out.push(b']');
    let resources = save::resource_trees(world, &registry, text.format())?;
    text.field(&mut out, "resources", false);
    text.write(&ResourceMap(&resources), &mut out)?;
    text.field(&mut out, "skipped", false);
    text.write(&Skipped(&plan.skipped), &mut out)?;
    out.push(if text == Text::Json { b'}' } else { b')' });
    let data = String::from_utf8(out).expect("saves are UTF-8");
    Ok(Saved { data, skipped: plan.skipped, skipped_resources: plan.skipped_resources })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use archetable::Component;
    use archetable_core::{Entity, World};
    use serde::{Deserialize, Serialize};

    use super::Text;
    use crate::model::error::{Format, SaveError};
    use crate::model::save::{self, Saved};
    use crate::SerdeWorldExt;

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Position {
        x: f32,
        y: f64,
    }

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Pair(i8, u64);

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Hp(u16);

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Marker;

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Empty {}

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    enum Mood {
        #[default]
        Calm,
        Angry(u8),
        Torn(i32, String),
        Scared {
            of: String,
            level: i16,
        },
    }

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Links {
        leader: Option<Entity>,
        all: Vec<Entity>,
        weights: BTreeMap<Entity, u8>,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        nested: Option<Option<Vec<(char, bool)>>>,
        wide: i128,
        big: u128,
    }

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Keyed(BTreeMap<u8, Vec<Hp>>);

    /// A chain of lists as deep as asked.
    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Deep(Vec<Deep>);

    fn deep(levels: usize) -> Deep {
        (0..levels).fold(Deep(Vec::new()), |inner, _| Deep(vec![inner]))
    }

    fn world() -> World {
        let mut world = World::new();
        world
            .register_serde::<Position>("Position")
            .register_serde::<Pair>("Pair")
            .register_serde::<Hp>("Hp")
            .register_serde::<Marker>("Marker")
            .register_serde::<Empty>("Em\"pty")
            .register_serde::<Mood>("Mood")
            .register_serde::<Links>("Links")
            .register_serde::<Keyed>("Keyed")
            .register_serde::<Deep>("Deep");
        world
    }

    /// The save as the whole document's compact serializer writes it.
    fn whole(world: &World, text: Text) -> Result<Saved<String>, SaveError> {
        match text {
            Text::Json => save::save(world, Format::Json, save::Keys::Columns, |doc| {
                serde_json::to_string(doc).map_err(|e| e.to_string())
            }),
            Text::Ron => save::save(world, Format::Ron, save::Keys::Columns, |doc| {
                ron::ser::to_string(doc).map_err(|e| e.to_string())
            }),
        }
    }

    fn assert_same(world: &World) {
        for text in [Text::Json, Text::Ron] {
            assert_eq!(super::save(world, text), whole(world, text));
        }
    }

    #[test]
    fn decimals_are_written_as_integers_display() {
        let mut cases: Vec<u32> = (0..1_000).collect();
        for digits in 1..=9 {
            let power = 10u32.pow(digits);
            cases.extend([power - 1, power, power + 1, 2 * power + 37]);
        }
        cases.extend([u32::MAX - 1, u32::MAX]);
        for &n in &cases {
            let mut out = b"x".to_vec();
            super::push_decimal(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), format!("x{n}"));
        }
        // Runs counted up across every carry, and jumps between them.
        let mut runs: Vec<u32> = Vec::new();
        for n in cases.iter().copied().chain([u32::MAX - 2]) {
            runs.extend(n.saturating_sub(2)..=n.saturating_add(2));
            runs.push(n / 3);
        }
        let mut indices = super::Indices { last: None };
        let mut out = Vec::new();
        let mut expected = String::new();
        for &n in &runs {
            indices.push(&mut out, n);
            out.push(b',');
            expected.push_str(&format!("{n},"));
        }
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    #[test]
    fn compact_saves_are_the_whole_documents_text() {
        let mut world = world();
        assert_same(&world);
        let a = world.spawn((Position { x: 1.5, y: -2e-9 }, Pair(-3, u64::MAX), Hp(7), Marker));
        let b = world.spawn((Empty {}, Mood::Calm, Hp(0)));
        world.spawn(Mood::Angry(3));
        world.spawn(Mood::Torn(-1, "t\"orn\n".into()));
        world.spawn((Mood::Scared { of: "ü".into(), level: -2 }, Marker));
        world.spawn(Links {
            leader: Some(a),
            all: vec![a, b],
            weights: [(a, 1), (b, 2)].into_iter().collect(),
            note: Some("n".into()),
            nested: Some(Some(vec![('é', true)])),
            wide: -5,
            big: 6,
        });
        world.spawn(Links::default());
        world.spawn(Keyed([(1, vec![Hp(1)]), (2, vec![])].into_iter().collect()));
        world.spawn(());
        let gone = world.spawn(Hp(9));
        world.despawn(gone).unwrap();
        world.spawn(deep(5));
        assert_same(&world);
        let json = world.save_json().unwrap().data;
        assert!(json.starts_with(r#"{"format":"ecs-save","version":3,"allocator":"#), "{json}");
        assert!(!json.contains(['\n', ' ']), "{json}");
    }

    #[test]
    fn columns_with_values_written_through_trees_midway_are_the_whole_documents_text() {
        let mut world = world();
        // One table of `Mood`: values its column writes as a list, then
        // some each through its tree (variants with several fields), at
        // the start, midway and at the end.
        let moods = [
            Mood::Torn(1, "a".into()),
            Mood::Calm,
            Mood::Angry(2),
            Mood::Scared { of: "b".into(), level: 3 },
            Mood::Calm,
            Mood::Torn(-4, "c".into()),
            Mood::Angry(5),
            Mood::Scared { of: "d".into(), level: -6 },
        ];
        for mood in moods.iter().cloned() {
            world.spawn((mood, Hp(1)));
        }
        assert_same(&world);
        let ron = world.save_ron().unwrap().data;
        let json = world.save_json().unwrap().data;
        assert!(json.contains(r#"{"Angry":2},{"Scared":{"of":"b","level":3}},"Calm""#), "{json}");
        assert!(ron.contains(r#"{"Angry":2},{"Scared":(of:"b",level:3)},"Calm""#), "{ron}");
        let loaded = World::load_json(&world.serde_registry(), &json).unwrap();
        let mut read: Vec<Mood> = loaded.query::<&Mood>().cloned().collect();
        read.sort_by_key(|m| format!("{m:?}"));
        let mut expected = moods.to_vec();
        expected.sort_by_key(|m| format!("{m:?}"));
        assert_eq!(read, expected);
        // Columns where a later value nests deeper than RON (then JSON)
        // loads allow: it is written through its tree, or fails as the
        // document does.
        for levels in [crate::MAX_RON_DEPTH + 1, crate::MAX_DEPTH + 1] {
            let mut world = self::world();
            world.spawn((deep(2), Pair(1, 2)));
            world.spawn((deep(levels), Pair(3, 4)));
            world.spawn((deep(3), Pair(5, 6)));
            assert_same(&world);
        }
    }

    #[test]
    fn values_written_through_their_trees_fail_as_the_document_does() {
        type Case = Box<dyn Fn(&mut World)>;
        let cases: Vec<Case> = vec![
            Box::new(|w| {
                w.spawn(Position { x: f32::NAN, y: 0.0 });
            }),
            Box::new(|w| {
                w.spawn(Position { x: 0.0, y: f64::INFINITY });
            }),
            Box::new(|w| {
                w.spawn(Links { wide: i128::MIN, ..Links::default() });
            }),
            Box::new(|w| {
                w.spawn(Links { big: u128::MAX, ..Links::default() });
            }),
            Box::new(|w| {
                w.spawn(deep(crate::MAX_RON_DEPTH - 1));
                w.spawn(deep(crate::MAX_RON_DEPTH));
                w.spawn(deep(crate::MAX_RON_DEPTH + 1));
            }),
            Box::new(|w| {
                w.spawn(deep(crate::MAX_DEPTH - 1));
                w.spawn(deep(crate::MAX_DEPTH));
            }),
            Box::new(|w| {
                w.spawn(deep(crate::MAX_DEPTH + 1));
            }),
        ];
        for case in cases {
            let mut world = world();
            world.spawn(Hp(1));
            case(&mut world);
            assert_same(&world);
        }
    }
}

#[cfg(test)]
mod plain_route {
    use archetable::Component;
    use archetable_core::World;
    use serde::{Deserialize, Serialize};

    use super::Text;
    use crate::SerdeWorldExt;

    #[derive(Component, Serialize, Deserialize, Default)]
    struct Position {
        x: f32,
        y: f32,
    }

    #[derive(Component, Serialize, Deserialize, Default)]
    enum Mood {
        #[default]
        Calm,
        Angry(u8),
        Scared {
            level: i16,
        },
    }

    #[derive(Component, Serialize, Deserialize, Default)]
    struct Marker;

    /// Whether each entity's `T` is written without its tree, in `text`.
    fn plain<T: Component>(world: &World, text: Text) -> Vec<bool> {
        let registry = world.serde_registry();
        let entry = registry.component_by_type(std::any::TypeId::of::<T>()).unwrap();
        let mut written = Vec::new();
        for table in world.archetypes().as_slice().iter().filter(|t| !t.is_empty()) {
            let column = (entry.text_column)(world, table);
            written.extend((0..table.len()).map(|row| column.write(row, text, &mut Vec::new())));
        }
        written
    }

    /// The text of each table's column of `T` written as one list, or
    /// `None` where the column is written value by value.
    fn whole_lists<T: Component>(world: &World, text: Text) -> Vec<Option<String>> {
        let registry = world.serde_registry();
        let entry = registry.component_by_type(std::any::TypeId::of::<T>()).unwrap();
        let tables = world.archetypes().as_slice().iter().filter(|t| !t.is_empty());
        let tables = tables.filter(|t| world.components().id::<T>().is_some_and(|id| t.contains(id)));
        tables
            .map(|table| {
                let mut out = Vec::new();
                let whole = (entry.text_column)(world, table).write_all(text, &mut out);
                whole.then(|| String::from_utf8(out).unwrap())
            })
            .collect()
    }

    #[test]
    fn ordinary_columns_are_written_as_one_list() {
        let mut world = World::new();
        world.register_serde::<Position>("Position").register_serde::<Mood>("Mood");
        world.spawn((Position { x: 1.0, y: 2.0 }, Mood::Calm));
        world.spawn((Position { x: 3.5, y: -4.0 }, Mood::Angry(1)));
        world.spawn(Position { x: f32::NAN, y: 0.0 });
        world.spawn((Position::default(), Mood::Scared { level: 1 }, Marker));
        assert_eq!(
            whole_lists::<Position>(&world, Text::Json),
            [Some(r#"[{"x":1.0,"y":2.0},{"x":3.5,"y":-4.0}]"#.into()), None, Some(r#"[{"x":0.0,"y":0.0}]"#.into())],
            "JSON has no NaN"
        );
        assert_eq!(whole_lists::<Position>(&world, Text::Ron)[1].as_deref(), Some("[(x:NaN,y:0.0)]"));
        assert_eq!(whole_lists::<Mood>(&world, Text::Json), [Some(r#"["Calm",{"Angry":1}]"#.into()), None]);
    }

    #[test]
    fn ordinary_values_skip_their_trees() {
        let mut world = World::new();
        world.register_serde::<Position>("Position").register_serde::<Mood>("Mood");
        world.spawn((Position { x: 1.0, y: 2.0 }, Mood::Calm));
        world.spawn((Position { x: f32::NAN, y: 2.0 }, Mood::Angry(1)));
        world.spawn((Position::default(), Mood::Scared { level: 1 }));
        assert_eq!(plain::<Position>(&world, Text::Json), [true, false, true], "JSON has no NaN");
        assert_eq!(plain::<Position>(&world, Text::Ron), [true, true, true]);
        assert_eq!(plain::<Mood>(&world, Text::Json), [true, true, false], "struct variants go through trees");
    }
}
