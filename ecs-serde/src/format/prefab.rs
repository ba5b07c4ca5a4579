//! Prefab files, and spawning from them (format layer).
//!
//! Prefabs: entity types defined as data. A prefab names components and
//! gives their fields; it may extend another prefab and change a few of
//! them. Spawning merges, field by field, the component's `Default`, each
//! ancestor from the root down, the prefab itself, and any overrides.

use std::any::TypeId;
use std::collections::hash_map::{Entry, RandomState};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher};
use std::path::Path;
use std::sync::Arc;

use archetable_core::{ChildOf, Entity, EntityBuilder, World};
use serde::de::DeserializeSeed;
use serde::Serialize;

use crate::model::column::Boxed;
use crate::model::depth::{MAX_DEPTH, MAX_RON_DEPTH};
use crate::model::error::{Format, PrefabError};
use crate::model::from_value::{Context, EntityMapping, FromValueError};
use crate::model::registry::{ComponentEntry, SerdeRegistry};
use crate::model::suggest::nearest;
use crate::model::to_value::to_value;
use crate::model::value::{Value, ValueSeed};

/// The key that names a prefab's parent.
const EXTENDS: &str = "extends";
/// The key of a prefab's list of child prefabs.
const CHILDREN: &str = "children";
/// The key naming a child's prefab in that list.
const PREFAB: &str = "prefab";
/// How deep child prefabs may nest (a prefab that lists itself among its
/// descendants is refused long before).
pub const MAX_PREFAB_DEPTH: usize = 32;
/// The most entities one prefab spawn may make, children included.
pub const MAX_PREFAB_ENTITIES: usize = 100_000;

/// A set of named prefabs, read from JSON or RON.
///
/// ```json
/// {
///   "Ball":   { "Move": { "speed": 2.0 }, "Render": {}, "Color": { "color": "red" } },
///   "Zombie": { "Move": { "speed": 0.5 }, "Color": { "color": "grey" } },
///   "GreenZombie": { "extends": "Zombie", "Color": { "color": "green" } }
/// }
/// ```
///
/// The file's shape (maps, `extends` names that exist, no circles) is
/// checked when it is read; component names and field types are checked
/// against the world's [`SerdeRegistry`] when a prefab is spawned, or all at
/// once by [`Prefabs::check`]. Cloning is cheap: the prefabs are shared.
///
/// ```
/// use archetable::prelude::*;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
/// struct Move { speed: f32 }
/// #[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
/// struct Color { color: String }
///
/// let mut world = World::new();
/// world.register_serde::<Move>("Move").register_serde::<Color>("Color");
/// let prefabs = Prefabs::from_json_str(r#"{
///     "Zombie": { "Move": { "speed": 0.5 }, "Color": { "color": "grey" } },
///     "GreenZombie": { "extends": "Zombie", "Color": { "color": "green" } }
/// }"#)?;
/// let z = world.spawn_prefab(&prefabs, "GreenZombie")?;
/// assert_eq!(world.get::<Move>(z), Some(&Move { speed: 0.5 }));
/// assert_eq!(world.get::<Color>(z).unwrap().color, "green");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Prefabs {
    set: Arc<PrefabSet>,
}

#[derive(Debug, Default)]
struct PrefabSet {
    list: Vec<Prefab>,
    by_name: HashMap<String, usize>,
}

#[derive(Debug)]
struct Prefab {
    name: String,
    parent: Option<usize>,
    components: Vec<(String, Value)>,
    /// The child prefabs it spawns with it, in order, with their
    /// overrides.
    children: Vec<ChildSpec>,
}

/// One entry of a prefab's `children` list: `{ "prefab": "Wheel", .. }`,
/// the other keys overriding components of that child.
/// One entity of a prefab tree: its built components and the index of its
/// parent entry (`None` for the root).
pub(crate) type TreeEntry<'r> = (Vec<(&'r ComponentEntry, Boxed)>, Option<usize>);

#[derive(Debug)]
struct ChildSpec {
    prefab: String,
    overrides: Vec<(String, Value)>,
}

impl Prefabs {
    /// Reads prefabs from JSON text.
    pub fn from_json_str(text: &str) -> Result<Prefabs, PrefabError> {
        Prefabs::from_value(parse_json(text, 2)?)
    }

    /// Reads prefabs from RON text: a map from names to maps from component
    /// names to values, such as `{ "Ball": { "Move": (speed: 2.0) } }`.
    pub fn from_ron_str(text: &str) -> Result<Prefabs, PrefabError> {
        Prefabs::from_value(parse_ron(text, 2)?)
    }

    /// Reads a `.json` or `.ron` prefab file.
    pub fn load(path: impl AsRef<Path>) -> Result<Prefabs, PrefabError> {
        let path = path.as_ref();
        let format = match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("json") => Format::Json,
            Some("ron") => Format::Ron,
            _ => return Err(PrefabError::UnsupportedFile { path: path.to_owned() }),
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| PrefabError::Io { path: path.to_owned(), message: e.to_string() })?;
        match format {
            Format::Json => Prefabs::from_json_str(&text),
            _ => Prefabs::from_ron_str(&text),
        }
    }

    /// The prefab names, in file order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.set.list.iter().map(|p| p.name.as_str())
    }

    /// Whether a prefab has this name.
    pub fn contains(&self, name: &str) -> bool {
        self.set.by_name.contains_key(name)
    }

    /// Number of prefabs.
    pub fn len(&self) -> usize {
        self.set.list.len()
    }

    /// Whether there are no prefabs.
    pub fn is_empty(&self) -> bool {
        self.set.list.is_empty()
    }

    /// Checks every prefab against `registry` as spawning it would: every
    /// component name registered, every value of the right shape. Returns
    /// the first error, in file order.
    pub fn check(&self, registry: &SerdeRegistry) -> Result<(), PrefabError> {
        for prefab in &self.set.list {
            self.build(registry, &prefab.name, None)?;
        }
        Ok(())
    }

    fn from_value(value: Value) -> Result<Prefabs, PrefabError> {
        let Value::Map(entries) = value else {
            return Err(malformed(None, "the top level must be a map from prefab names to prefabs"));
        };
        let mut set = PrefabSet::default();
        let mut parents = Vec::with_capacity(entries.len());
        for (name, body) in entries {
            let Value::String(name) = name else {
                return Err(malformed(None, "prefab names must be strings"));
            };
            let Value::Map(body) = body else {
                return Err(malformed(Some(&name), "a prefab must be a map from component names to values"));
            };
            let mut parent = None;
            let mut children = Vec::new();
            let mut components: Vec<(String, Value)> = Vec::with_capacity(body.len());
            let mut seen = HashSet::with_capacity(body.len());
            for (key, value) in body {
                let Value::String(key) = key else {
                    return Err(malformed(Some(&name), "component names must be strings"));
                };
                if key == EXTENDS {
                    match value {
                        Value::String(p) if parent.is_none() => parent = Some(p),
                        Value::String(_) => return Err(malformed(Some(&name), "`extends` is given twice")),
                        _ => return Err(malformed(Some(&name), "`extends` must be the name of a prefab")),
                    }
                } else if key == CHILDREN {
                    if !children.is_empty() {
                        return Err(malformed(Some(&name), "`children` is given twice"));
                    }
                    children = child_specs(&name, value)?;
                } else if !seen.insert(key.clone()) {
                    return Err(PrefabError::DuplicateComponent { prefab: name, component: key });
                } else {
                    components.push((key, value));
                }
            }
            if set.by_name.insert(name.clone(), set.list.len()).is_some() {
                return Err(PrefabError::DuplicatePrefab { prefab: name });
            }
            set.list.push(Prefab { name, parent: None, components, children });
            parents.push(parent);
        }
        for (i, parent) in parents.into_iter().enumerate() {
            if let Some(parent) = parent {
                let Some(&p) = set.by_name.get(&parent) else {
                    let suggestion = nearest(&parent, set.list.iter().map(|p| p.name.as_str())).map(str::to_owned);
                    return Err(PrefabError::UnknownParent { prefab: set.list[i].name.clone(), parent, suggestion });
                };
                set.list[i].parent = Some(p);
            }
        }
        find_cycle(&set)?;
        for prefab in &set.list {
            for child in &prefab.children {
                if !set.by_name.contains_key(&child.prefab) {
                    let suggestion =
                        nearest(&child.prefab, set.list.iter().map(|p| p.name.as_str())).map(str::to_owned);
                    return Err(PrefabError::UnknownPrefab { prefab: child.prefab.clone(), suggestion });
                }
            }
        }
        Ok(Prefabs { set: Arc::new(set) })
    }

    /// Prefab `name` with `overrides` and every child prefab it lists
    /// (its own and its ancestors', root first), depth first: each entry's
    /// components, and the index of its parent entry (`None` for the root).
    pub(crate) fn build_tree<'r>(
        &self,
        registry: &'r SerdeRegistry,
        name: &str,
        overrides: Option<&Overrides>,
    ) -> Result<Vec<TreeEntry<'r>>, PrefabError> {
        /// A prefab still to build: its name, its overrides, its parent
        /// entry, and the prefabs above it.
        struct Pending {
            prefab: String,
            overrides: Option<Overrides>,
            parent: Option<usize>,
            above: Vec<String>,
        }
        let mut tree = Vec::new();
        let mut stack: Vec<Pending> = Vec::new();
        stack.push(Pending { prefab: name.to_owned(), overrides: overrides.cloned(), parent: None, above: Vec::new() });
        while let Some(Pending { prefab, overrides, parent, mut above }) = stack.pop() {
            if above.contains(&prefab) {
                return Err(malformed(Some(&prefab), "it lists itself among its own descendants"));
            }
            if above.len() >= MAX_PREFAB_DEPTH {
                return Err(malformed(
                    Some(&prefab),
                    &format!("child prefabs nest deeper than {MAX_PREFAB_DEPTH} levels"),
                ));
            }
            if tree.len() >= MAX_PREFAB_ENTITIES {
                return Err(malformed(Some(name), &format!("it spawns more than {MAX_PREFAB_ENTITIES} entities")));
            }
            let index = tree.len();
            tree.push((self.build(registry, &prefab, overrides.as_ref())?, parent));
            let children: Vec<&ChildSpec> = self.chain(&prefab)?.into_iter().flat_map(|p| &p.children).collect();
            above.push(prefab);
            // Reversed onto the stack, so they come off in order.
            for child in children.into_iter().rev() {
                let overrides = (!child.overrides.is_empty()).then(|| {
                    let mut overrides = Overrides::new();
                    for (component, value) in &child.overrides {
                        overrides.merge_in(component.clone(), value.clone());
                    }
                    overrides
                });
                stack.push(Pending {
                    prefab: child.prefab.clone(),
                    overrides,
                    parent: Some(index),
                    above: above.clone(),
                });
            }
        }
        Ok(tree)
    }

    /// The prefab `name` and its ancestors, root first.
    fn chain(&self, name: &str) -> Result<Vec<&Prefab>, PrefabError> {
        let Some(&start) = self.set.by_name.get(name) else {
            let suggestion = nearest(name, self.names()).map(str::to_owned);
            return Err(PrefabError::UnknownPrefab { prefab: name.to_owned(), suggestion });
        };
        let mut chain = vec![&self.set.list[start]];
        while let Some(parent) = chain.last().and_then(|p| p.parent) {
            // No circles: checked when the set was read.
            chain.push(&self.set.list[parent]);
        }
        chain.reverse();
        Ok(chain)
    }

    /// The components of prefab `name` with `overrides` applied, ready to
    /// insert, in order of first mention (root first, overrides last).
    pub(crate) fn build<'r>(
        &self,
        registry: &'r SerdeRegistry,
        name: &str,
        overrides: Option<&Overrides>,
    ) -> Result<Vec<(&'r ComponentEntry, Boxed)>, PrefabError> {
        let chain = self.chain(name)?;
        let mut layers: Vec<(&str, &[(String, Value)])> =
            chain.iter().map(|p| (p.name.as_str(), p.components.as_slice())).collect();
        let override_layer = match overrides {
            Some(o) if o.typed.is_empty() => None,
            Some(o) => Some(o.layer(name, registry)?),
            None => None,
        };
        match (overrides, &override_layer) {
            (_, Some(layer)) => layers.push((name, layer.as_slice())),
            (Some(o), None) => layers.push((name, o.components.as_slice())),
            (None, None) => {}
        }
        // Component names in order of first mention, each with the layer
        // that first names it and its value in every layer that does (a
        // layer names a component at most once).
        let mut order: Vec<(&str, &str, Vec<&Value>)> = Vec::new();
        let mut position: HashMap<&str, usize> = HashMap::new();
        for &(prefab, components) in &layers {
            for (component, value) in components {
                match position.entry(component) {
                    Entry::Occupied(at) => order[*at.get()].2.push(value),
                    Entry::Vacant(at) => {
                        at.insert(order.len());
                        order.push((component, prefab, vec![value]));
                    }
                }
            }
        }
        let cx = Context::new(EntityMapping::Keep);
        let mut built = Vec::with_capacity(order.len());
        for (component, first_prefab, values) in order {
            let entry = registry.component(component).ok_or_else(|| PrefabError::UnknownComponent {
                prefab: first_prefab.to_owned(),
                component: component.to_owned(),
                suggestion: registry.suggest_component(component),
            })?;
            let field_error = |e: FromValueError| PrefabError::Field {
                prefab: name.to_owned(),
                component: component.to_owned(),
                field: e.path(),
                message: e.message,
            };
            let mut value = match entry.default {
                Some(default) => default().map_err(|e| PrefabError::Field {
                    prefab: name.to_owned(),
                    component: component.to_owned(),
                    field: String::new(),
                    message: format!("its default value cannot be written: {e}"),
                })?,
                None => Value::Map(Vec::new()),
            };
            for layer in values {
                value = merge(value, layer);
                if entry.default.is_some() {
                    // Back through the type, so the next layer merges over
                    // a value that knows its structs and variants.
                    value = (entry.normalize)(&value, &cx).map_err(field_error)?;
                }
            }
            let boxed = (entry.load)(&value, &cx).map_err(field_error)?;
            built.push((entry, boxed));
        }
        Ok(built)
    }
}

/// Reads a `children` list: maps naming a `prefab`, their other keys
/// overriding that child's components.
fn child_specs(prefab: &str, value: Value) -> Result<Vec<ChildSpec>, PrefabError> {
    let expected = "`children` must be a list of maps such as { \"prefab\": \"Wheel\" }";
    let Value::Seq(items) = value else { return Err(malformed(Some(prefab), expected)) };
    let mut specs = Vec::with_capacity(items.len());
    for item in items {
        let Value::Map(entries) = item else { return Err(malformed(Some(prefab), expected)) };
        let mut child = None;
        let mut overrides = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let Value::String(key) = key else { return Err(malformed(Some(prefab), expected)) };
            match (key.as_str(), value) {
                (PREFAB, Value::String(name)) if child.is_none() => child = Some(name),
                (PREFAB, _) => return Err(malformed(Some(prefab), "a child's `prefab` must be one prefab name")),
                (_, value) => overrides.push((key, value)),
            }
        }
        let prefab_name = child.ok_or_else(|| malformed(Some(prefab), "every child needs a `prefab`"))?;
        specs.push(ChildSpec { prefab: prefab_name, overrides });
    }
    Ok(specs)
}

fn malformed(prefab: Option<&str>, message: &str) -> PrefabError {
    PrefabError::Malformed { prefab: prefab.map(str::to_owned), message: message.to_owned() }
}

/// Fails with the first circle of `extends` links, in file order.
fn find_cycle(set: &PrefabSet) -> Result<(), PrefabError> {
    // 0: not visited, 1: on the current path, 2: known to reach a root.
    let mut state = vec![0u8; set.list.len()];
    for start in 0..set.list.len() {
        let mut path = Vec::new();
        let mut at = Some(start);
        while let Some(i) = at {
            match state[i] {
                2 => break,
                1 => {
                    let from = path.iter().position(|&p| p == i).unwrap_or(0);
                    let cycle = path[from..].iter().map(|&p: &usize| set.list[p].name.clone()).collect();
                    return Err(PrefabError::ExtendsCycle { cycle });
                }
                _ => {
                    state[i] = 1;
                    path.push(i);
                    at = set.list[i].parent;
                }
            }
        }
        for i in path {
            state[i] = 2;
        }
    }
    Ok(())
}

/// Merges `overlay` over `base` field by field: maps and structs merge key
/// by key (recursively), a variant merges with a value of the same variant,
/// unit over a struct changes nothing, anything else is replaced.
pub(crate) fn merge(base: Value, overlay: &Value) -> Value {
    // `()` (RON) or `null` (JSON) for a struct gives no fields.
    if *overlay == Value::Unit && matches!(base, Value::Struct { .. } | Value::Map(_)) {
        return base;
    }
    let overlay = plain(overlay);
    let Value::Map(over) = overlay.as_ref() else {
        return overlay.into_owned();
    };
    match base {
        Value::Variant(variant) => {
            let (name, inner) = *variant;
            match over.as_slice() {
                [(Value::String(k), v)] if k == name => Value::Variant(Box::new((name, merge(inner, v)))),
                _ => overlay.into_owned(),
            }
        }
        Value::Struct { fields, .. } => {
            let entries = fields.into_iter().map(|(k, v)| (Value::String(k.to_owned()), v)).collect();
            merge_maps(entries, over)
        }
        Value::Map(entries) => merge_maps(entries, over),
        _ => overlay.into_owned(),
    }
}

fn merge_maps(mut entries: Vec<(Value, Value)>, over: &[(Value, Value)]) -> Value {
    // The fields of a struct: a scan. Large maps (a file may hold millions
    // of keys): by hash, so the work stays linear.
    if entries.len() + over.len() <= 32 {
        for (key, value) in over {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = merge(std::mem::replace(&mut slot.1, Value::Unit), value),
                None => entries.push((key.clone(), value.clone())),
            }
        }
        return Value::Map(entries);
    }
    // Keyed by a hash with random keys, so a file cannot choose collisions;
    // each bucket lists its entries in order, so the first equal key wins,
    // as with the scan.
    let state = RandomState::new();
    let hash = |key: &Value| {
        let mut hasher = state.build_hasher();
        hash_key(key, &mut hasher).then(|| hasher.finish())
    };
    let mut buckets: HashMap<u64, Vec<usize>> = HashMap::with_capacity(entries.len() + over.len());
    for (i, (key, _)) in entries.iter().enumerate() {
        if let Some(h) = hash(key) {
            buckets.entry(h).or_default().push(i);
        }
    }
    for (key, value) in over {
        let h = hash(key);
        let found =
            h.and_then(|h| buckets.get(&h)).and_then(|bucket| bucket.iter().copied().find(|&i| entries[i].0 == *key));
        match found {
            Some(i) => {
                let slot = &mut entries[i].1;
                *slot = merge(std::mem::replace(slot, Value::Unit), value);
            }
            None => {
                if let Some(h) = h {
                    buckets.entry(h).or_default().push(entries.len());
                }
                entries.push((key.clone(), value.clone()));
            }
        }
    }
    Value::Map(entries)
}

/// Feeds `key` to `hasher` so that equal values (`==`) hash alike; false if
/// it holds a NaN, which makes it equal to nothing.
fn hash_key(key: &Value, hasher: &mut impl Hasher) -> bool {
    std::mem::discriminant(key).hash(hasher);
    match key {
        Value::Unit | Value::Option(None) => true,
        Value::Bool(b) => {
            b.hash(hasher);
            true
        }
        Value::I64(n) => {
            n.hash(hasher);
            true
        }
        Value::U64(n) => {
            n.hash(hasher);
            true
        }
        // `0.0 == -0.0`: both hash as zero.
        Value::F32(x) => {
            (*x + 0.0).to_bits().hash(hasher);
            !x.is_nan()
        }
        Value::F64(x) => {
            (*x + 0.0).to_bits().hash(hasher);
            !x.is_nan()
        }
        Value::Char(c) => {
            c.hash(hasher);
            true
        }
        Value::String(text) => {
            text.hash(hasher);
            true
        }
        Value::Bytes(bytes) => {
            bytes.hash(hasher);
            true
        }
        Value::Option(Some(inner)) => hash_key(inner, hasher),
        Value::Seq(items) => {
            items.len().hash(hasher);
            items.iter().all(|item| hash_key(item, hasher))
        }
        Value::Map(entries) => {
            entries.len().hash(hasher);
            entries.iter().all(|(k, v)| hash_key(k, hasher) && hash_key(v, hasher))
        }
        Value::Struct { fields, complete } => {
            (fields.len(), complete).hash(hasher);
            fields.iter().all(|(name, v)| {
                name.hash(hasher);
                hash_key(v, hasher)
            })
        }
        Value::Variant(variant) => {
            variant.0.hash(hasher);
            hash_key(&variant.1, hasher)
        }
    }
}

/// A struct or variant seen as the map a file would hold.
fn plain(value: &Value) -> std::borrow::Cow<'_, Value> {
    use std::borrow::Cow;
    match value {
        Value::Struct { fields, .. } => {
            Cow::Owned(Value::Map(fields.iter().map(|(k, v)| (Value::String((*k).to_owned()), v.clone())).collect()))
        }
        Value::Variant(v) => Cow::Owned(Value::Map(vec![(Value::String(v.0.to_owned()), v.1.clone())])),
        other => Cow::Borrowed(other),
    }
}

/// Parses JSON prefab text that holds `outer` levels of maps around the
/// component values (2 for a prefab file, 1 for overrides).
pub(crate) fn parse_json(text: &str, outer: usize) -> Result<Value, PrefabError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    ValueSeed::new(MAX_DEPTH)
        .with_outer_levels(outer)
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|e| PrefabError::Syntax {
            format: Format::Json,
            line: e.line(),
            column: e.column(),
            message: crate::model::error::strip_position(&e.to_string()),
        })
}

/// Parses RON prefab text; see [`parse_json`].
pub(crate) fn parse_ron(text: &str, outer: usize) -> Result<Value, PrefabError> {
    let seed = ValueSeed::new(MAX_RON_DEPTH).with_outer_levels(outer);
    ron::Options::default().from_str_seed(text, seed).map_err(|e| PrefabError::Syntax {
        format: Format::Ron,
        line: e.span.start.line,
        column: e.span.start.col,
        message: e.code.to_string(),
    })
}

/// Per-component values merged field by field over a prefab's when
/// spawning it: the "red ball named Chet" of [`SerdeWorldExt::spawn_prefab_with`].
/// A component the prefab lacks is added.
///
/// ```
/// # use archetable_serde::Overrides;
/// let chet = Overrides::new().set("Color", "color", "red").component("Name", "Chet");
/// let same = Overrides::from_json_str(r#"{ "Color": { "color": "red" }, "Name": "Chet" }"#).unwrap();
/// # let _ = (chet, same);
/// ```
///
/// [`SerdeWorldExt::spawn_prefab_with`]: crate::SerdeWorldExt::spawn_prefab_with
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    components: Vec<(String, Value)>,
    /// Where each component is in `components`.
    positions: HashMap<String, usize>,
    /// Whole values given by type ([`Overrides::with`]), named through the
    /// registry when the prefab spawns.
    typed: Vec<(TypeId, &'static str, Value)>,
}

impl Overrides {
    /// No overrides.
    pub fn new() -> Self {
        Overrides::default()
    }

    /// Reads overrides from JSON: a map from component names to (partial)
    /// values.
    pub fn from_json_str(text: &str) -> Result<Overrides, PrefabError> {
        Overrides::from_value(parse_json(text, 1)?)
    }

    /// Reads overrides from RON: a map from component names to (partial)
    /// values.
    pub fn from_ron_str(text: &str) -> Result<Overrides, PrefabError> {
        Overrides::from_value(parse_ron(text, 1)?)
    }

    fn from_value(value: Value) -> Result<Overrides, PrefabError> {
        let Value::Map(entries) = value else {
            return Err(malformed(None, "overrides must be a map from component names to values"));
        };
        let mut overrides = Overrides::new();
        for (key, value) in entries {
            let Value::String(component) = key else {
                return Err(malformed(None, "component names must be strings"));
            };
            overrides.merge_in(component, value);
        }
        Ok(overrides)
    }

    /// Replaces a whole component with `value`, named by its type rather
    /// than by a string: the registry gives its name when the prefab spawns
    /// (an unregistered type is an `UnknownComponent` error then).
    ///
    /// ```
    /// use archetable::prelude::*;
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
    /// struct Position { x: f32, y: f32 }
    ///
    /// let mut world = World::new();
    /// world.register_serde::<Position>("Position");
    /// let prefabs = Prefabs::from_json_str(r#"{ "Ball": { "Position": { "x": 1.0 } } }"#)?;
    /// let ball = world.spawn_prefab_with(&prefabs, "Ball", &Overrides::new().with(Position { x: 5.0, y: 2.0 }))?;
    /// assert_eq!(world.get::<Position>(ball), Some(&Position { x: 5.0, y: 2.0 }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// If `value`'s `Serialize` impl fails.
    #[track_caller]
    pub fn with<T: Serialize + 'static>(mut self, value: T) -> Self {
        let value = serialize(&value);
        match self.typed.iter_mut().find(|(id, ..)| *id == TypeId::of::<T>()) {
            Some(entry) => entry.2 = value,
            None => self.typed.push((TypeId::of::<T>(), std::any::type_name::<T>(), value)),
        }
        self
    }

    /// The overrides as a layer of named components, typed ones named
    /// through `registry`.
    fn layer(&self, prefab: &str, registry: &SerdeRegistry) -> Result<Vec<(String, Value)>, PrefabError> {
        let mut layer = self.components.clone();
        for (type_id, type_name, value) in &self.typed {
            let entry = registry.component_by_type(*type_id).ok_or_else(|| PrefabError::UnknownComponent {
                prefab: prefab.to_owned(),
                component: (*type_name).to_owned(),
                suggestion: None,
            })?;
            match layer.iter_mut().find(|(name, _)| *name == entry.name) {
                Some(named) => named.1 = value.clone(),
                None => layer.push((entry.name.clone(), value.clone())),
            }
        }
        Ok(layer)
    }

    /// Sets one field of `component`: `field` is a field name or a dotted
    /// path (`"stats.hp"`).
    ///
    /// # Panics
    /// If `value`'s `Serialize` impl fails.
    #[track_caller]
    pub fn set(mut self, component: &str, field: &str, value: impl Serialize) -> Self {
        let mut value = serialize(&value);
        for name in field.rsplit('.').filter(|n| !n.is_empty()) {
            value = Value::Map(vec![(Value::String(name.to_owned()), value)]);
        }
        self.merge_in(component.to_owned(), value);
        self
    }

    /// Merges a whole (or partial) value into `component`: a typed value, a
    /// `serde_json::Value`, anything `Serialize`.
    ///
    /// # Panics
    /// If `value`'s `Serialize` impl fails.
    #[track_caller]
    pub fn component(mut self, component: &str, value: impl Serialize) -> Self {
        self.merge_in(component.to_owned(), serialize(&value));
        self
    }

    fn merge_in(&mut self, component: String, value: Value) {
        match self.positions.entry(component) {
            Entry::Occupied(at) => {
                let slot = &mut self.components[*at.get()].1;
                *slot = merge(std::mem::replace(slot, Value::Unit), &value);
            }
            Entry::Vacant(at) => {
                self.components.push((at.key().clone(), value));
                at.insert(self.components.len() - 1);
            }
        }
    }
}

#[track_caller]
fn serialize(value: &impl Serialize) -> Value {
    to_value(value).unwrap_or_else(|e| panic!("override value cannot be written: {e}"))
}

/// Spawns prefab `name` in `world`, with the child prefabs it lists, as one
/// step: each entity one bundle spawn (one table move, the hooks of a
/// tuple), children with `ChildOf` their parent, every entity in place
/// before any hook runs. Fails without spawning; a hook that panics takes
/// every entity back (allocator included) and the panic goes on.
pub(crate) fn spawn(
    world: &mut World,
    prefabs: &Prefabs,
    name: &str,
    overrides: Option<&Overrides>,
) -> Result<Entity, PrefabError> {
    let (mut builders, parents) = built(world, prefabs, name, overrides)?;
    let handles = world.peek_entities(builders.len());
    link_children(&mut builders, &parents, |i| handles[i]);
    world.all_or_nothing(|world| Ok(world.spawn_built_batch(&mut builders)[0]))
}

/// Fills the live, empty `entity` with prefab `name`'s components, in one
/// insert (one table move, the hooks of a tuple), then spawns the child
/// prefabs it lists under it.
pub(crate) fn fill(
    world: &mut World,
    entity: Entity,
    prefabs: &Prefabs,
    name: &str,
    overrides: Option<&Overrides>,
) -> Result<(), PrefabError> {
    let (mut builders, parents) = built(world, prefabs, name, overrides)?;
    // The entity was alive a moment ago; if a command despawned it since,
    // the values are dropped and the prefab spawns nothing.
    if world.insert_built(entity, &mut builders[0]).is_err() {
        return Ok(());
    }
    if builders.len() > 1 {
        let handles = world.peek_entities(builders.len() - 1);
        link_children(&mut builders, &parents, |i| if i == 0 { entity } else { handles[i - 1] });
        world.spawn_built_batch(&mut builders[1..]);
    }
    Ok(())
}

/// Gives every entry of a prefab tree but the root `ChildOf` the handle of
/// its parent entry (`handle(i)` is entry `i`'s).
fn link_children(builders: &mut [EntityBuilder], parents: &[Option<usize>], handle: impl Fn(usize) -> Entity) {
    for (builder, parent) in builders.iter_mut().zip(parents).skip(1) {
        builder.add(ChildOf(handle(parent.expect("only the root has no parent"))));
    }
}

/// Prefab `name`'s entities (itself, then its child prefabs depth first),
/// every value built, ready to spawn, with each one's parent entry.
fn built(
    world: &World,
    prefabs: &Prefabs,
    name: &str,
    overrides: Option<&Overrides>,
) -> Result<(Vec<EntityBuilder>, Vec<Option<usize>>), PrefabError> {
    let registry = crate::model::registry::registry_of(world);
    let tree = prefabs.build_tree(&registry, name, overrides)?;
    let mut builders = Vec::with_capacity(tree.len());
    let mut parents = Vec::with_capacity(tree.len());
    for (components, parent) in tree {
        let mut builder = EntityBuilder::new();
        for (entry, value) in components {
            (entry.add)(&mut builder, value);
        }
        builders.push(builder);
        parents.push(parent);
    }
    Ok((builders, parents))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::String(text.into())
    }

    #[test]
    fn merge_replaces_leaves_and_merges_maps() {
        let base = Value::Struct { fields: vec![("a", Value::U64(1)), ("b", Value::U64(2))], complete: true };
        let over = Value::Map(vec![(s("b"), Value::U64(9)), (s("c"), Value::U64(3))]);
        assert_eq!(
            merge(base, &over),
            Value::Map(vec![(s("a"), Value::U64(1)), (s("b"), Value::U64(9)), (s("c"), Value::U64(3))])
        );
    }

    #[test]
    fn merge_switches_variants_whole() {
        let square =
            Value::Variant(Box::new(("Square", Value::Struct { fields: vec![("w", Value::U64(1))], complete: true })));
        let circle = Value::Map(vec![(s("Circle"), Value::Map(vec![(s("r"), Value::U64(2))]))]);
        assert_eq!(merge(square.clone(), &circle), circle);
        let wider = Value::Map(vec![(s("Square"), Value::Map(vec![(s("w"), Value::U64(5))]))]);
        assert_eq!(
            merge(square, &wider),
            Value::Variant(Box::new(("Square", Value::Map(vec![(s("w"), Value::U64(5))]))))
        );
    }

    #[test]
    fn large_maps_merge_as_small_ones_do() {
        // The scan, for any size.
        fn scan(mut entries: Vec<(Value, Value)>, over: &[(Value, Value)]) -> Value {
            for (key, value) in over {
                match entries.iter_mut().find(|(k, _)| k == key) {
                    Some(slot) => slot.1 = merge(std::mem::replace(&mut slot.1, Value::Unit), value),
                    None => entries.push((key.clone(), value.clone())),
                }
            }
            Value::Map(entries)
        }
        let keys = |n: u64| -> Vec<Value> {
            let mut keys = vec![
                Value::F64(0.0),
                Value::F64(-0.0),
                Value::F64(f64::NAN),
                Value::F32(1.0),
                Value::I64(1),
                Value::U64(1),
                Value::Seq(vec![s("a"), Value::F32(f32::NAN)]),
                Value::Seq(vec![s("a"), Value::Bool(true)]),
                Value::Option(None),
                Value::Unit,
            ];
            keys.extend((0..n).map(|i| s(&format!("k{i}"))));
            keys
        };
        let base: Vec<(Value, Value)> = keys(30).into_iter().map(|k| (k, Value::U64(1))).collect();
        // Every key again (twice for some), and new ones.
        let mut over: Vec<(Value, Value)> = keys(40).into_iter().map(|k| (k, Value::U64(2))).collect();
        over.extend(keys(5).into_iter().map(|k| (k, Value::U64(3))));
        let merged = merge_maps(base.clone(), &over);
        assert_eq!(format!("{merged:?}"), format!("{:?}", scan(base, &over)));
        let Value::Map(entries) = merged else { panic!() };
        // The overlay's keys k30 to k39 are new, and so are its four keys
        // holding a NaN, which equal nothing.
        assert_eq!(entries.len(), 40 + 10 + 4);
        // `-0.0` merged into the first equal key, `0.0`.
        assert_eq!(entries[0], (Value::F64(0.0), Value::U64(3)));
        assert_eq!(entries[1], (Value::F64(-0.0), Value::U64(1)));
    }

    #[test]
    fn cycles_are_found_in_file_order() {
        let err = Prefabs::from_json_str(r#"{"A": {"extends": "B"}, "B": {"extends": "C"}, "C": {"extends": "B"}}"#)
            .unwrap_err();
        assert_eq!(err, PrefabError::ExtendsCycle { cycle: vec!["B".into(), "C".into()] });
        let err = Prefabs::from_json_str(r#"{"A": {"extends": "A"}}"#).unwrap_err();
        assert_eq!(err, PrefabError::ExtendsCycle { cycle: vec!["A".into()] });
    }
}
