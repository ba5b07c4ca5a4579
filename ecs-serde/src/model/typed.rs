//! Which values binary saves write straight from their types (model layer).
//!
//! Which component values a binary save may write *typed* (straight
//! through postcard, read back by the type's own `Deserialize`) rather than
//! as [`Value`](crate::model::value::Value) trees, decided without ever calling
//! `Deserialize` while saving.
//!
//! Postcard does not describe its data, so a typed value reads back only if
//! the reader asks for exactly what the writer wrote. Two things break that:
//!
//! - readers that need a self-describing format (`deserialize_any`):
//!   untagged and internally tagged enums, `#[serde(flatten)]`, custom
//!   impls. Nothing on the writing side shows these (an untagged variant
//!   writes just its content), so each type's reader is probed **once, at
//!   registration** ([`TypedPlan::of`]): it is run on made-up postcard-like
//!   input, every enum variant tried, and asked for nothing a postcard
//!   reader could not give. A reader that asks for more, refuses the
//!   made-up values or panics (the panic is caught) gets trees.
//! - writers that leave out what the reader expects: skipped fields
//!   (`skip_serializing_if`, `skip_serializing`), lengths not given up
//!   front, counts that differ from the announced ones. Each value is
//!   checked as it is written ([`TypedWriter::write`]), by a serializer
//!   that writes what postcard writes and stops at the first thing the
//!   reader would not read back, checking structs against the field counts
//!   the probe saw the reader ask for. The writer remembers the last struct
//!   it checked, so a column of one type costs one lookup.

use std::cell::{Cell, RefCell};
use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use serde::ser::{self, Serialize};

use crate::model::depth::MAX_DEPTH;

/// How a value may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Typed.
    Typed,
    /// As a tree.
    Trees,
    /// Not at all: it nests deeper than loads allow.
    TooDeep,
    /// Not at all: its `Serialize` impl failed.
    Failed,
}

/// What a binary save may write typed for one component type.
#[derive(Debug, Default)]
pub(crate) struct TypedPlan {
    /// Whether the type's reader works without a self-describing format.
    typed: bool,
    /// The structs the reader reads, sorted: the name, the variant index
    /// for struct variants, and the number of fields it reads.
    structs: Vec<(&'static str, Option<u32>, usize)>,
}

/// How deep the probe's made-up values go: below this level lists, maps
/// and options are empty, and enums take variants known to end.
const PROBE_LEVELS: usize = 8;
/// A probe read this deep is a recursive variant taken again and again.
const PROBE_CUTOFF: usize = 64;
/// The most runs of the reader a probe makes (each tries other variants).
const PROBE_RUNS: usize = 1024;

impl TypedPlan {
    /// Probes `T`'s `Deserialize` (see the module docs).
    pub(crate) fn of<T: DeserializeOwned>() -> TypedPlan {
        let recursive = RefCell::new(HashSet::new());
        let tried = RefCell::new(HashSet::new());
        let mut structs = Vec::new();
        let mut queue: VecDeque<Vec<u32>> = VecDeque::from([Vec::new()]);
        let mut runs = 0;
        while let Some(forced) = queue.pop_front() {
            loop {
                runs += 1;
                if runs > PROBE_RUNS {
                    return TypedPlan::trees(structs);
                }
                let run = Run::new(&forced, &recursive, &tried);
                let result = catch_unwind(AssertUnwindSafe(|| T::deserialize(Probe { run: &run, level: 0 }).is_ok()));
                match (result, run.stop.get()) {
                    (Ok(true), None) => {
                        structs.extend(run.structs.take());
                        queue.extend(run.alternatives());
                        break;
                    }
                    // Took a recursive variant past the cutoff: retry,
                    // avoiding it, unless nothing new was learnt.
                    (Ok(_), Some(Stop::TooDeep)) if run.blame_recursion() => continue,
                    // Asked for a self-describing format, refused a
                    // made-up value, or panicked. (What was seen of the
                    // structs still tells tree columns which to name.)
                    _ => {
                        structs.extend(run.structs.take());
                        return TypedPlan::trees(structs);
                    }
                }
            }
        }
        let mut plan = TypedPlan::trees(structs);
        plan.typed = true;
        plan
    }

    /// A plan that writes trees, with what was seen of the structs.
    fn trees(mut structs: Vec<(&'static str, Option<u32>, usize)>) -> TypedPlan {
        structs.sort_unstable();
        structs.dedup();
        TypedPlan { typed: false, structs }
    }

    /// A writer of this type's values; see [`TypedWriter::write`].
    pub(crate) fn writer(&self) -> TypedWriter<'_> {
        TypedWriter { plan: self, last: Cell::new(None) }
    }

    /// How `value` may be written, writing it nowhere.
    #[cfg(test)]
    pub(crate) fn fits<T: Serialize + ?Sized>(&self, value: &T) -> Fit {
        self.writer().write(value, &mut Vec::new())
    }

    /// The field counts the reader reads the struct `name` (variant
    /// `variant`) with; empty if the probe did not see it.
    fn reader_counts<'a>(&'a self, name: &'a str, variant: Option<u32>) -> impl Iterator<Item = usize> + 'a {
        let start = self.structs.partition_point(|e| (e.0, e.1) < (name, variant));
        self.structs[start..].iter().take_while(move |e| (e.0, e.1) == (name, variant)).map(|e| e.2)
    }

    /// Whether the reader reads the struct `name` (variant `variant`) as
    /// `fields` fields. Called once per struct written: a name is usually
    /// the same string (one address) the reader gave, which settles it
    /// without comparing text.
    #[inline]
    fn reads_struct(&self, name: &str, variant: Option<u32>, fields: usize) -> bool {
        let same = |e: &(&'static str, Option<u32>, usize)| {
            e.1 == variant && e.2 == fields && std::ptr::eq(e.0.as_ptr(), name.as_ptr()) && e.0.len() == name.len()
        };
        (self.structs.len() <= 8 && self.structs.iter().any(same))
            || self.reader_counts(name, variant).any(|count| count == fields)
    }

    /// Whether the probe saw the reader read the struct `name` (variant
    /// `variant`), and never as `fields` fields.
    pub(crate) fn reads_other_count(&self, name: &str, variant: Option<u32>, fields: usize) -> bool {
        let mut counts = self.reader_counts(name, variant).peekable();
        counts.peek().is_some() && counts.all(|count| count != fields)
    }
}

// ---------------------------------------------------------------------------
// Probing the reader

/// Why a probe run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// The reader asked for something only a self-describing format gives.
    SelfDescribing,
    /// The made-up value went past [`PROBE_CUTOFF`].
    TooDeep,
}

/// The error the probe hands the reader. The reason is kept in the run,
/// since readers may turn errors into others.
#[derive(Debug)]
struct ProbeError;

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("probe stopped")
    }
}

impl std::error::Error for ProbeError {}

impl de::Error for ProbeError {
    fn custom<T: fmt::Display>(_: T) -> Self {
        ProbeError
    }
}

/// An enum: its name and where its list of variant names is (two enums
/// of one name have their own lists).
type EnumKey = (&'static str, usize);

/// An enum met during a run.
struct Met {
    key: EnumKey,
    variants: u32,
    taken: u32,
    level: usize,
    /// Met inside the data of the run's last forced variant (or in a run
    /// that forced none): its other variants are still to try.
    fresh: bool,
}

/// One run of the reader over made-up input.
struct Run<'p> {
    /// The variants the first enums met take; later ones take variant 0.
    forced: &'p [u32],
    met: RefCell<Vec<Met>>,
    fresh: Cell<bool>,
    stop: Cell<Option<Stop>>,
    structs: RefCell<Vec<(&'static str, Option<u32>, usize)>>,
    /// Variants that led past the cutoff, by enum name: deep down, enums
    /// take other variants.
    recursive: &'p RefCell<HashSet<(&'static str, u32)>>,
    /// The variants taken or queued in some run: each enum's variants read
    /// the same types wherever the enum is, so each is tried once.
    tried: &'p RefCell<HashSet<(EnumKey, u32)>>,
    /// The variants being read, outermost first, with their levels.
    open: RefCell<Vec<(&'static str, u32, usize)>>,
    /// The variants that were open below [`PROBE_LEVELS`] when the run
    /// went past the cutoff.
    too_deep: RefCell<Vec<(&'static str, u32)>>,
}

impl<'p> Run<'p> {
    fn new(
        forced: &'p [u32],
        recursive: &'p RefCell<HashSet<(&'static str, u32)>>,
        tried: &'p RefCell<HashSet<(EnumKey, u32)>>,
    ) -> Self {
        Run {
            forced,
            met: RefCell::new(Vec::new()),
            fresh: Cell::new(forced.is_empty()),
            stop: Cell::new(None),
            structs: RefCell::new(Vec::new()),
            recursive,
            tried,
            open: RefCell::new(Vec::new()),
            too_deep: RefCell::new(Vec::new()),
        }
    }

    fn stop(&self, why: Stop) -> ProbeError {
        self.stop.set(Some(why));
        if why == Stop::TooDeep {
            let open = self.open.borrow();
            let deep = open.iter().filter(|&&(_, _, level)| level >= PROBE_LEVELS);
            self.too_deep.borrow_mut().extend(deep.map(|&(name, variant, _)| (name, variant)));
        }
        ProbeError
    }

    /// The runs that try the variants not tried yet of the fresh enums met
    /// above [`PROBE_LEVELS`].
    fn alternatives(&self) -> Vec<Vec<u32>> {
        let met = self.met.borrow();
        let mut tried = self.tried.borrow_mut();
        for m in met.iter() {
            tried.insert((m.key, m.taken));
        }
        let taken: Vec<u32> = met.iter().map(|m| m.taken).collect();
        let mut runs = Vec::new();
        for (i, m) in met.iter().enumerate().filter(|(_, m)| m.fresh && m.level < PROBE_LEVELS) {
            for variant in (0..m.variants).filter(|&v| tried.insert((m.key, v))) {
                let mut forced = taken[..i].to_vec();
                forced.push(variant);
                runs.push(forced);
            }
        }
        runs
    }

    /// Marks the variants open below [`PROBE_LEVELS`] when the run went too
    /// deep as recursive; false if they all were already.
    fn blame_recursion(&self) -> bool {
        let mut recursive = self.recursive.borrow_mut();
        let mut learnt = false;
        for &key in self.too_deep.borrow().iter() {
            learnt |= recursive.insert(key);
        }
        learnt
    }

    /// The variant the next enum met takes.
    fn choose(&self, key: EnumKey, variants: u32, level: usize) -> (u32, bool) {
        let name = key.0;
        let mut met = self.met.borrow_mut();
        let index = met.len();
        let taken = match self.forced.get(index) {
            Some(&forced) => forced.min(variants.saturating_sub(1)),
            None if level >= PROBE_LEVELS => {
                let recursive = self.recursive.borrow();
                (0..variants).find(|&v| !recursive.contains(&(name, v))).unwrap_or(0)
            }
            None => 0,
        };
        met.push(Met { key, variants, taken, level, fresh: self.fresh.get() });
        (taken, index + 1 == self.forced.len())
    }
}

/// The made-up input: what postcard would give, with small values.
struct Probe<'r, 'p> {
    run: &'r Run<'p>,
    level: usize,
}

impl<'r, 'p> Probe<'r, 'p> {
    fn at(&self, level: usize) -> Self {
        Probe { run: self.run, level }
    }

    fn check(&self) -> Result<(), ProbeError> {
        match self.run.stop.get() {
            Some(_) => Err(ProbeError),
            None if self.level > PROBE_CUTOFF => Err(self.run.stop(Stop::TooDeep)),
            None => Ok(()),
        }
    }

    /// Elements to make up for a list or map: one near the top, none deep.
    fn some(&self) -> usize {
        usize::from(self.level < PROBE_LEVELS)
    }
}

macro_rules! probe_values {
    ($($method:ident => $visit:ident($value:expr);)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
                self.check()?;
                visitor.$visit($value)
            }
        )*
    };
}

impl<'de> Deserializer<'de> for Probe<'_, '_> {
    type Error = ProbeError;

    probe_values! {
        deserialize_bool => visit_bool(false);
        deserialize_i8 => visit_i8(1);
        deserialize_i16 => visit_i16(1);
        deserialize_i32 => visit_i32(1);
        deserialize_i64 => visit_i64(1);
        deserialize_i128 => visit_i128(1);
        deserialize_u8 => visit_u8(1);
        deserialize_u16 => visit_u16(1);
        deserialize_u32 => visit_u32(1);
        // The bits of a valid entity handle (index 0, generation 1).
        deserialize_u64 => visit_u64(1 << 32);
        deserialize_u128 => visit_u128(1);
        deserialize_f32 => visit_f32(0.0);
        deserialize_f64 => visit_f64(0.0);
        deserialize_char => visit_char('a');
        deserialize_str => visit_str("");
        deserialize_string => visit_string(String::new());
        deserialize_bytes => visit_bytes(&[]);
        deserialize_byte_buf => visit_byte_buf(Vec::new());
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        self.check()?;
        visitor.visit_unit()
    }

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, ProbeError> {
        Err(self.run.stop(Stop::SelfDescribing))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, ProbeError> {
        Err(self.run.stop(Stop::SelfDescribing))
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, _: V) -> Result<V::Value, ProbeError> {
        // Postcard has no identifiers (enum variants are read by index).
        Err(self.run.stop(Stop::SelfDescribing))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        self.check()?;
        if self.some() == 1 {
            visitor.visit_some(self.at(self.level + 1))
        } else {
            visitor.visit_none()
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, ProbeError> {
        self.check()?;
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, ProbeError> {
        self.check()?;
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        self.check()?;
        let left = self.some();
        visitor.visit_seq(Elements { probe: self.at(self.level + 1), left })
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, ProbeError> {
        self.check()?;
        visitor.visit_seq(Elements { probe: self.at(self.level + 1), left: len })
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        self.check()?;
        let left = self.some();
        visitor.visit_map(Elements { probe: self.at(self.level + 1), left })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        self.check()?;
        self.run.structs.borrow_mut().push((name, None, fields.len()));
        visitor.visit_seq(Elements { probe: self.at(self.level + 1), left: fields.len() })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        self.check()?;
        let count = u32::try_from(variants.len()).unwrap_or(u32::MAX);
        let key = (name, variants.as_ptr() as usize);
        let (taken, last_forced) = self.run.choose(key, count, self.level);
        visitor.visit_enum(Variant { probe: self, name, taken, last_forced })
    }

    fn is_human_readable(&self) -> bool {
        false
    }
}

/// The elements of a made-up list, tuple or struct, or the entries of a
/// made-up map.
struct Elements<'r, 'p> {
    probe: Probe<'r, 'p>,
    left: usize,
}

impl<'de> SeqAccess<'de> for Elements<'_, '_> {
    type Error = ProbeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, ProbeError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(self.probe.at(self.probe.level)).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

impl<'de> MapAccess<'de> for Elements<'_, '_> {
    type Error = ProbeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, ProbeError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(self.probe.at(self.probe.level)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ProbeError> {
        seed.deserialize(self.probe.at(self.probe.level))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// The variant a made-up enum takes.
struct Variant<'r, 'p> {
    probe: Probe<'r, 'p>,
    name: &'static str,
    taken: u32,
    /// Whether this is the run's last forced choice: what its data holds
    /// is fresh.
    last_forced: bool,
}

impl<'de, 'r, 'p> EnumAccess<'de> for Variant<'r, 'p> {
    type Error = ProbeError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), ProbeError> {
        let index = seed.deserialize(de::value::U32Deserializer::<ProbeError>::new(self.taken))?;
        Ok((index, self))
    }
}

impl Variant<'_, '_> {
    /// Reads the variant's data with `read`, one level down.
    fn data<T>(self, read: impl FnOnce(Probe<'_, '_>) -> Result<T, ProbeError>) -> Result<T, ProbeError> {
        let run = self.probe.run;
        let level = self.probe.level;
        let fresh = run.fresh.replace(run.fresh.get() || self.last_forced);
        run.open.borrow_mut().push((self.name, self.taken, level));
        let result = read(self.probe.at(level + 1));
        run.open.borrow_mut().pop();
        run.fresh.set(fresh);
        result
    }
}

impl<'de> VariantAccess<'de> for Variant<'_, '_> {
    type Error = ProbeError;

    fn unit_variant(self) -> Result<(), ProbeError> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, ProbeError> {
        self.data(|probe| seed.deserialize(probe))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, ProbeError> {
        self.data(|probe| visitor.visit_seq(Elements { probe, left: len }))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        self.probe.run.structs.borrow_mut().push((self.name, Some(self.taken), fields.len()));
        self.data(|probe| visitor.visit_seq(Elements { probe, left: fields.len() }))
    }
}

// ---------------------------------------------------------------------------
// Writing a value typed, checking as it goes

/// Why a value is not written typed.
#[derive(Debug)]
enum Mismatch {
    /// It writes something its reader would not read back from postcard.
    Trees,
    /// It nests past [`MAX_DEPTH`] (levels counted as loads count them).
    TooDeep,
    /// Its `Serialize` impl failed, or postcard refused what it wrote.
    Failed,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mismatch::Trees => "written as a tree",
            Mismatch::TooDeep => "nested too deeply",
            Mismatch::Failed => "the value could not be serialized",
        })
    }
}

impl std::error::Error for Mismatch {}

impl ser::Error for Mismatch {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Mismatch::Failed
    }
}

impl From<postcard::Error> for Mismatch {
    fn from(_: postcard::Error) -> Self {
        Mismatch::Failed
    }
}

/// A serializer that writes what postcard writes, into `out`, and fails on
/// what the reader would not read back, or on values nested too deep to
/// load, leaving what it wrote so far for the caller to cut. One pass
/// over the value: the checks cost a few comparisons per container.
struct Fused<'o, 'p> {
    out: &'o mut Vec<u8>,
    writer: &'p TypedWriter<'p>,
    /// The level of the value being written.
    level: usize,
}

/// Writes the values of one type typed ([`TypedPlan::writer`]),
/// remembering the last struct its reader was found to read, so that a
/// column of values costs one lookup, not one per value.
pub(crate) struct TypedWriter<'p> {
    plan: &'p TypedPlan,
    last: Cell<Option<StructKey>>,
}

/// A struct as written: the address and length of its name, its variant
/// and its field count.
type StructKey = (*const u8, usize, Option<u32>, usize);

impl TypedWriter<'_> {
    /// Appends `value` to `out` typed, as postcard writes it, if it may be:
    /// its type's reader allows it and what it writes is what that reader
    /// reads. Otherwise `out` is left as it was, and the answer says why.
    #[inline]
    pub(crate) fn write<T: Serialize + ?Sized>(&self, value: &T, out: &mut Vec<u8>) -> Fit {
        if !self.plan.typed {
            return Fit::Trees;
        }
        let start = out.len();
        let fit = match value.serialize(Fused { out: &mut *out, writer: self, level: 0 }) {
            Ok(()) => return Fit::Typed,
            Err(Mismatch::Trees) => Fit::Trees,
            Err(Mismatch::TooDeep) => Fit::TooDeep,
            Err(Mismatch::Failed) => Fit::Failed,
        };
        out.truncate(start);
        fit
    }

    /// Whether the reader reads the struct `name` (variant `variant`) as
    /// `fields` fields.
    #[inline(always)]
    fn reads_struct(&self, name: &str, variant: Option<u32>, fields: usize) -> bool {
        let key = (name.as_ptr(), name.len(), variant, fields);
        self.last.get() == Some(key) || self.look_up(key, name)
    }

    #[cold]
    #[inline(never)]
    fn look_up(&self, key: StructKey, name: &str) -> bool {
        let reads = self.plan.reads_struct(name, key.2, key.3);
        if reads {
            self.last.set(Some(key));
        }
        reads
    }
}

/// Appends postcard's output to a vector, without taking it over.
pub(crate) struct Sink<'a>(pub &'a mut Vec<u8>);

impl postcard::ser_flavors::Flavor for Sink<'_> {
    type Output = ();

    #[inline]
    fn try_push(&mut self, byte: u8) -> postcard::Result<()> {
        self.0.push(byte);
        Ok(())
    }

    #[inline]
    fn try_extend(&mut self, bytes: &[u8]) -> postcard::Result<()> {
        self.0.extend_from_slice(bytes);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<()> {
        Ok(())
    }
}

/// Postcard's own serializer, writing into `out`: what [`Fused`] forwards
/// every scalar, length and variant index to, so the bytes are postcard's.
fn postcard_into(out: &mut Vec<u8>) -> postcard::Serializer<Sink<'_>> {
    postcard::Serializer { output: Sink(out) }
}

impl<'o, 'p> Fused<'o, 'p> {
    /// The level one down, or an error past the limit.
    #[inline]
    fn child_level(&self) -> Result<usize, Mismatch> {
        if self.level >= MAX_DEPTH {
            return Err(Mismatch::TooDeep);
        }
        Ok(self.level + 1)
    }

    /// The level two down (a variant's fields), or an error past the limit.
    #[inline]
    fn grandchild_level(&self) -> Result<usize, Mismatch> {
        let level = self.child_level()?;
        if level >= MAX_DEPTH {
            return Err(Mismatch::TooDeep);
        }
        Ok(level + 1)
    }

    /// A list, map, tuple or struct announced to hold `announced` items,
    /// whose items are at `level`.
    #[inline]
    fn items(self, level: usize, announced: usize) -> Items<'o, 'p> {
        Items { out: self.out, writer: self.writer, level, announced, written: 0 }
    }
}

/// A list, map, tuple or struct being written: how many items it said it
/// holds, and how many it wrote. (A struct's announced count was checked
/// against its reader's when it started.)
struct Items<'o, 'p> {
    out: &'o mut Vec<u8>,
    writer: &'p TypedWriter<'p>,
    /// The level of its items.
    level: usize,
    announced: usize,
    written: usize,
}

impl Items<'_, '_> {
    #[inline]
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Mismatch> {
        self.written += 1;
        value.serialize(Fused { out: &mut *self.out, writer: self.writer, level: self.level })
    }

    #[inline]
    fn end(self) -> Result<(), Mismatch> {
        if self.written != self.announced {
            return Err(Mismatch::Trees);
        }
        Ok(())
    }
}

type R = Result<(), Mismatch>;

macro_rules! write_values {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(
            #[inline]
            fn $method(self, v: $ty) -> R {
                ser::Serializer::$method(&mut postcard_into(self.out), v)?;
                Ok(())
            }
        )*
    };
}

impl<'o, 'p> ser::Serializer for Fused<'o, 'p> {
    type Ok = ();
    type Error = Mismatch;
    type SerializeSeq = Items<'o, 'p>;
    type SerializeTuple = Items<'o, 'p>;
    type SerializeTupleStruct = Items<'o, 'p>;
    type SerializeTupleVariant = Items<'o, 'p>;
    type SerializeMap = Items<'o, 'p>;
    type SerializeStruct = Items<'o, 'p>;
    type SerializeStructVariant = Items<'o, 'p>;

    write_values! {
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64,
        serialize_u128: u128, serialize_f32: f32, serialize_f64: f64, serialize_char: char,
        serialize_str: &str, serialize_bytes: &[u8],
    }

    #[inline]
    fn serialize_unit_struct(self, _: &'static str) -> R {
        Ok(())
    }
    #[inline]
    fn serialize_none(self) -> R {
        ser::Serializer::serialize_none(&mut postcard_into(self.out))?;
        Ok(())
    }
    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> R {
        let level = self.child_level()?;
        // Postcard's tag of `Some`, then the value.
        self.out.push(1);
        value.serialize(Fused { level, ..self })
    }
    #[inline]
    fn serialize_unit(self) -> R {
        Ok(())
    }
    #[inline]
    fn serialize_unit_variant(self, _: &'static str, index: u32, _: &'static str) -> R {
        ser::Serializer::serialize_u32(&mut postcard_into(self.out), index)?;
        Ok(())
    }
    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> R {
        value.serialize(self)
    }
    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        value: &T,
    ) -> R {
        let level = self.child_level()?;
        ser::Serializer::serialize_u32(&mut postcard_into(self.out), index)?;
        value.serialize(Fused { level, ..self })
    }
    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Items<'o, 'p>, Mismatch> {
        // Postcard writes the length first: it must be known.
        let len = len.ok_or(Mismatch::Trees)?;
        let level = self.child_level()?;
        ser::Serializer::serialize_u64(&mut postcard_into(self.out), len as u64)?;
        Ok(self.items(level, len))
    }
    #[inline]
    fn serialize_tuple(self, len: usize) -> Result<Items<'o, 'p>, Mismatch> {
        let level = self.child_level()?;
        Ok(self.items(level, len))
    }
    #[inline]
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Items<'o, 'p>, Mismatch> {
        let level = self.child_level()?;
        Ok(self.items(level, len))
    }
    #[inline]
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        len: usize,
    ) -> Result<Items<'o, 'p>, Mismatch> {
        // The variant is a level, its fields the next.
        let level = self.grandchild_level()?;
        ser::Serializer::serialize_u32(&mut postcard_into(self.out), index)?;
        Ok(self.items(level, len))
    }
    #[inline]
    fn serialize_map(self, len: Option<usize>) -> Result<Items<'o, 'p>, Mismatch> {
        let len = len.ok_or(Mismatch::Trees)?;
        let level = self.child_level()?;
        ser::Serializer::serialize_u64(&mut postcard_into(self.out), len as u64)?;
        Ok(self.items(level, len))
    }
    #[inline]
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Items<'o, 'p>, Mismatch> {
        let level = self.child_level()?;
        if !self.writer.reads_struct(name, None, len) {
            return Err(Mismatch::Trees);
        }
        Ok(self.items(level, len))
    }
    #[inline]
    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        _: &'static str,
        len: usize,
    ) -> Result<Items<'o, 'p>, Mismatch> {
        let level = self.grandchild_level()?;
        if !self.writer.reads_struct(name, Some(index), len) {
            return Err(Mismatch::Trees);
        }
        ser::Serializer::serialize_u32(&mut postcard_into(self.out), index)?;
        Ok(self.items(level, len))
    }
    #[inline]
    fn is_human_readable(&self) -> bool {
        false
    }
}

impl ser::SerializeSeq for Items<'_, '_> {
    type Ok = ();
    type Error = Mismatch;
    #[inline]
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        self.item(value)
    }
    #[inline]
    fn end(self) -> R {
        Items::end(self)
    }
}

impl ser::SerializeTuple for Items<'_, '_> {
    type Ok = ();
    type Error = Mismatch;
    #[inline]
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        self.item(value)
    }
    #[inline]
    fn end(self) -> R {
        Items::end(self)
    }
}

impl ser::SerializeTupleStruct for Items<'_, '_> {
    type Ok = ();
    type Error = Mismatch;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        self.item(value)
    }
    #[inline]
    fn end(self) -> R {
        Items::end(self)
    }
}

impl ser::SerializeTupleVariant for Items<'_, '_> {
    type Ok = ();
    type Error = Mismatch;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        self.item(value)
    }
    #[inline]
    fn end(self) -> R {
        Items::end(self)
    }
}

impl ser::SerializeMap for Items<'_, '_> {
    type Ok = ();
    type Error = Mismatch;
    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> R {
        self.item(key)
    }
    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        // Counted with its key.
        value.serialize(Fused { out: &mut *self.out, writer: self.writer, level: self.level })
    }
    #[inline]
    fn end(self) -> R {
        Items::end(self)
    }
}

impl ser::SerializeStruct for Items<'_, '_> {
    type Ok = ();
    type Error = Mismatch;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, _: &'static str, value: &T) -> R {
        self.item(value)
    }
    #[inline]
    fn skip_field(&mut self, _: &'static str) -> R {
        // Postcard would write nothing, and the reader read the next field
        // in its place.
        Err(Mismatch::Trees)
    }
    #[inline]
    fn end(self) -> R {
        Items::end(self)
    }
}

impl ser::SerializeStructVariant for Items<'_, '_> {
    type Ok = ();
    type Error = Mismatch;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, _: &'static str, value: &T) -> R {
        self.item(value)
    }
    #[inline]
    fn skip_field(&mut self, _: &'static str) -> R {
        Err(Mismatch::Trees)
    }
    #[inline]
    fn end(self) -> R {
        Items::end(self)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use archetable_core::Entity;
    use serde::{Deserialize, Serialize};

    use super::{Fit, TypedPlan};

    #[derive(Serialize, Deserialize)]
    struct Plain {
        x: f32,
        name: String,
        tags: Vec<(u8, char)>,
        owner: Option<Entity>,
        by: BTreeMap<Entity, i128>,
    }

    #[derive(Serialize, Deserialize)]
    enum Shape {
        Dot,
        Circle { r: f64 },
        Line(i16, i16),
        Boxed(Box<Shape>),
    }

    /// Recursive through its first variant.
    #[derive(Serialize, Deserialize)]
    enum Chain {
        Link(Box<Chain>),
        Pair(Box<Chain>, Box<Chain>),
        End,
    }

    #[derive(Serialize, Deserialize)]
    struct Tree(Vec<Tree>);

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Loose {
        Number(u32),
        Named(String),
    }

    #[derive(Serialize, Deserialize)]
    #[serde(tag = "kind")]
    enum Tagged {
        A { x: u8 },
    }

    #[derive(Serialize, Deserialize)]
    struct Flat {
        id: u8,
        #[serde(flatten)]
        rest: BTreeMap<String, u8>,
    }

    /// An untagged enum deep inside a variant of an enum inside a list.
    #[derive(Serialize, Deserialize)]
    struct Hidden {
        items: Vec<Option<Shape2>>,
    }

    #[derive(Serialize, Deserialize)]
    enum Shape2 {
        Dot,
        Other(u8, Loose),
    }

    #[derive(Serialize, Deserialize)]
    struct Sparse {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        id: u8,
    }

    #[derive(Serialize, Deserialize)]
    #[allow(dead_code)]
    struct Unwritten {
        #[serde(skip_serializing, default)]
        cache: u32,
        id: u8,
    }

    #[test]
    fn ordinary_types_are_written_typed() {
        let plan = TypedPlan::of::<Plain>();
        let e = Entity::from_bits(1 << 32).unwrap();
        let plain = Plain { x: 1.0, name: "a".into(), tags: vec![(1, 'x')], owner: Some(e), by: [(e, -1)].into() };
        assert_eq!(plan.fits(&plain), Fit::Typed);
        let plan = TypedPlan::of::<Shape>();
        for shape in [Shape::Dot, Shape::Circle { r: 1.0 }, Shape::Line(1, 2), Shape::Boxed(Box::new(Shape::Dot))] {
            assert_eq!(plan.fits(&shape), Fit::Typed);
        }
        let plan = TypedPlan::of::<Chain>();
        let chain = Chain::Pair(Box::new(Chain::Link(Box::new(Chain::End))), Box::new(Chain::End));
        assert_eq!(plan.fits(&chain), Fit::Typed);
        assert_eq!(TypedPlan::of::<Tree>().fits(&Tree(vec![Tree(vec![])])), Fit::Typed);
    }

    /// A tree of expressions: every variant is tried once, not once per
    /// place it can appear.
    #[derive(Serialize, Deserialize)]
    enum Expr {
        Add(Box<Expr>, Box<Expr>),
        Neg(Box<Expr>),
        If { cond: Box<Expr>, then: Box<Expr>, otherwise: Option<Box<Expr>> },
        Call(String, Vec<Expr>),
        Number(f64),
    }

    #[test]
    fn branching_recursive_types_are_written_typed() {
        let plan = TypedPlan::of::<Expr>();
        let n = |x| Box::new(Expr::Number(x));
        let expr =
            Expr::If { cond: n(1.0), then: Box::new(Expr::Add(n(1.0), Box::new(Expr::Neg(n(2.0))))), otherwise: None };
        assert_eq!(plan.fits(&expr), Fit::Typed);
        assert_eq!(plan.fits(&Expr::Call("f".into(), vec![Expr::Number(0.0)])), Fit::Typed);
    }

    #[test]
    fn readers_that_need_a_self_describing_format_get_trees() {
        assert_eq!(TypedPlan::of::<Loose>().fits(&Loose::Number(1)), Fit::Trees);
        assert_eq!(TypedPlan::of::<Tagged>().fits(&Tagged::A { x: 1 }), Fit::Trees);
        assert_eq!(TypedPlan::of::<Flat>().fits(&Flat { id: 1, rest: BTreeMap::new() }), Fit::Trees);
        let hidden = Hidden { items: vec![None] };
        assert_eq!(TypedPlan::of::<Hidden>().fits(&hidden), Fit::Trees);
    }

    #[test]
    fn values_that_leave_fields_out_get_trees() {
        let plan = TypedPlan::of::<Sparse>();
        assert_eq!(plan.fits(&Sparse { note: Some("n".into()), id: 1 }), Fit::Typed);
        assert_eq!(plan.fits(&Sparse { note: None, id: 1 }), Fit::Trees);
        // Left out without a word to the serializer: the field counts differ.
        assert_eq!(TypedPlan::of::<Unwritten>().fits(&Unwritten { cache: 3, id: 1 }), Fit::Trees);
    }

    #[test]
    fn readers_that_panic_or_refuse_made_up_values_get_trees() {
        struct Panics;
        impl<'de> Deserialize<'de> for Panics {
            fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
                panic!("this reader always panics")
            }
        }
        impl Serialize for Panics {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_u8(1)
            }
        }
        assert_eq!(TypedPlan::of::<Panics>().fits(&Panics), Fit::Trees);
        #[derive(Serialize, Deserialize)]
        struct Checked(#[serde(deserialize_with = "non_empty")] String);
        fn non_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
            let s = String::deserialize(d)?;
            if s.is_empty() {
                return Err(serde::de::Error::custom("empty"));
            }
            Ok(s)
        }
        assert_eq!(TypedPlan::of::<Checked>().fits(&Checked("x".into())), Fit::Trees);
    }
}
