//! The methods that touch the world, run on the game thread between
//! frames.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

use archetable_core::{
    ChildOf, Children, ComponentId, ComponentTicks, Entity, Name, Time, With, Without, World, WorldId,
};
use archetable_serde::{EditError, SerdeRegistry, SerdeWorldExt};
use serde_json::{json, Map, Value};

use crate::history::{History, StageTimings};
use crate::names::{Known, Names};
use crate::rpc::{codes, params, RpcError};
use crate::server::Shared;
use crate::watch::{Item, WatchKind};

/// The most entities one page of a query holds.
pub const MAX_LIMIT: u64 = 1000;
/// The most nodes `world.hierarchy` returns, roots included.
pub const MAX_NODES: usize = 5000;
/// The deepest level `world.hierarchy` lists (a root is at depth 0): its
/// answer then nests 125 levels at most, under the 128 that JSON parsers
/// such as `serde_json` accept by default.
pub const MAX_DEPTH: usize = 60;
/// The most frames `loop.step` takes at once.
pub const MAX_STEP: u64 = 600;

/// What a call may use.
pub(crate) struct Ctx<'a> {
    pub world: &'a mut World,
    pub stages: &'a [StageTimings],
    pub history: &'a History,
    /// Frames left to run before pausing again (`loop.step`).
    pub stepping: &'a mut u64,
    pub frame: u64,
    /// `None` where no server runs (the fuzz entry point).
    pub shared: Option<&'a Shared>,
    /// The world's component names, kept from call to call; built again
    /// when their key changes.
    pub names: &'a mut Option<(NamesKey, Names)>,
}

/// What the world's component names are made of: which world, how many
/// component types it has, and when its serde registry (a resource) was
/// inserted and last written.
pub(crate) type NamesKey = (WorldId, usize, Option<ComponentTicks>);

/// The world's component names from `cache`, built when missing or stale.
fn cached<'n>(cache: &'n mut Option<(NamesKey, Names)>, world: &World, registry: &SerdeRegistry) -> &'n Names {
    let key = (world.id(), world.components().len(), world.resource_ticks::<SerdeRegistry>());
    if cache.as_ref().is_none_or(|(k, _)| *k != key) {
        *cache = Some((key, Names::of(world, registry)));
    }
    &cache.as_ref().expect("just filled").1
}

/// A call's result: a value, or its JSON text when the method writes it
/// directly (`world.query`).
#[derive(Clone, Debug)]
pub(crate) enum Answer {
    Value(Value),
    Text(String),
}

/// Runs one call; a panic in user code is caught and becomes an error.
pub(crate) fn call(ctx: &mut Ctx<'_>, method: &str, params: &Value) -> Result<Answer, RpcError> {
    let answer = || {
        if method == "world.query" {
            let registry = ctx.world.serde_registry();
            let spec = QuerySpec::from_params(params, 0)?;
            return spec.run_text(ctx.world, &registry, cached(ctx.names, ctx.world, &registry)).map(Answer::Text);
        }
        dispatch(ctx, method, params).map(Answer::Value)
    };
    match catch_unwind(AssertUnwindSafe(answer)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_owned());
            Err(RpcError::new(codes::PANICKED, format!("`{method}` panicked in user code: {what}")))
        }
    }
}

fn dispatch(ctx: &mut Ctx<'_>, method: &str, params: &Value) -> Result<Value, RpcError> {
    let registry = ctx.world.serde_registry();
    match method {
        "world.list_components" => Ok(list_components(ctx.world, cached(ctx.names, ctx.world, &registry))),
        "world.get_components" => get_components(ctx.world, &registry, cached(ctx.names, ctx.world, &registry), params),
        "world.insert_components" => insert_components(ctx.world, &registry, params),
        "world.remove_components" => remove_components(ctx.world, &registry, params),
        "world.spawn_entity" => spawn_entity(ctx.world, &registry, params),
        "world.despawn_entity" => despawn_entity(ctx.world, params),
        "world.list_resources" => Ok(list_resources(ctx.world, &registry)),
        "world.get_resource" => get_resource(ctx.world, &registry, params),
        "world.insert_resource" => insert_resource(ctx.world, &registry, params),
        "world.list_tables" => {
            let include_empty = params::boolean(params, "include_empty")?;
            Ok(list_tables(ctx.world, cached(ctx.names, ctx.world, &registry), include_empty))
        }
        "world.hierarchy" => hierarchy(ctx.world, cached(ctx.names, ctx.world, &registry), params),
        "schedule.list" => Ok(schedule_list(ctx.stages)),
        "schedule.history" => {
            let n = params::uint(params, "frames", crate::history::FRAMES as u64, crate::history::FRAMES as u64)?;
            Ok(ctx.history.to_json(n as usize))
        }
        "loop.status" => status(ctx),
        "loop.pause" => {
            clock(ctx.world)?.pause();
            *ctx.stepping = 0;
            status(ctx)
        }
        "loop.resume" => {
            clock(ctx.world)?.resume();
            *ctx.stepping = 0;
            status(ctx)
        }
        "loop.step" => {
            let frames = params::uint_in(params, "frames", 1, 1, MAX_STEP)?;
            clock(ctx.world)?.resume();
            *ctx.stepping = frames;
            status(ctx)
        }
        "loop.set_time_scale" => {
            let scale = params.get("scale").and_then(Value::as_f64);
            match scale {
                Some(scale) if (0.0..=100.0).contains(&scale) => clock(ctx.world)?.set_scale(scale),
                _ => return Err(RpcError::params("`scale` must be a number from 0 to 100")),
            }
            status(ctx)
        }
        "watch.start" => watch_start(ctx, &registry, params),
        "rpc.discover" => Ok(crate::rpc::discover()),
        _ => {
            let known = crate::rpc::METHODS.iter().map(|m| m.name);
            let mut message = format!("no method `{method}`");
            if let Some(s) = crate::names::nearest(method, known) {
                message.push_str(&format!(" (did you mean `{s}`?)"));
            }
            Err(RpcError::new(codes::METHOD_NOT_FOUND, message))
        }
    }
}

fn clock(world: &mut World) -> Result<&mut Time, RpcError> {
    world
        .get_resource_mut::<Time>()
        .ok_or_else(|| RpcError::new(codes::NO_CLOCK, "the world has no `Time` resource to pause, step or scale"))
}

fn status(ctx: &mut Ctx<'_>) -> Result<Value, RpcError> {
    let entities = ctx.world.len();
    let time = ctx.world.get_resource::<Time>();
    Ok(json!({
        "frame": ctx.frame,
        "entities": entities,
        "has_clock": time.is_some(),
        "paused": time.is_some_and(Time::is_paused),
        "scale": time.map_or(1.0, Time::scale),
        "stepping": *ctx.stepping,
        "game_time_s": time.map_or(0.0, |t| t.elapsed().as_secs_f64()),
        "real_time_s": time.map_or(0.0, |t| t.real_elapsed().as_secs_f64()),
        "real_dt_ms": time.map_or(0.0, |t| t.real_delta().as_secs_f64() * 1e3),
    }))
}

/// An [`EditError`] as a protocol error.
fn edit_error(error: EditError) -> RpcError {
    let message = error.to_string();
    match error {
        EditError::UnknownComponent { name, suggestion } => RpcError::new(codes::UNKNOWN_COMPONENT, message)
            .with_data(json!({ "name": name, "suggestion": suggestion })),
        EditError::UnknownResource { name, suggestion } => {
            RpcError::new(codes::UNKNOWN_RESOURCE, message).with_data(json!({ "name": name, "suggestion": suggestion }))
        }
        EditError::NoSuchEntity(entity) => no_such_entity(entity),
        EditError::Invalid { name, field, .. } => {
            RpcError::new(codes::INVALID_VALUE, message).with_data(json!({ "component": name, "field": field }))
        }
        EditError::Syntax { .. } => RpcError::new(codes::INVALID_VALUE, message),
        EditError::DuplicateComponent { .. } | EditError::EngineKept { .. } => RpcError::params(message),
        _ => RpcError::new(codes::INTERNAL_ERROR, message),
    }
}

fn no_such_entity(entity: Entity) -> RpcError {
    RpcError::new(codes::NO_SUCH_ENTITY, format!("entity {entity} does not exist (despawned, or never spawned)"))
        .with_data(json!({ "entity": entity.to_string() }))
}

fn read_only(known: &Known) -> RpcError {
    RpcError::new(
        codes::READ_ONLY,
        format!(
            "`{}` is not registered with serde, so it can be listed but not read or written as JSON \
             (register it: world.register_serde::<T>(\"Name\"))",
            known.name
        ),
    )
    .with_data(json!({ "name": known.name }))
}

/// The registered name of a component to read or write as JSON.
fn serde_name(names: &Names, registry: &SerdeRegistry, name: &str) -> Result<String, RpcError> {
    match names.find(name) {
        Ok(known) if known.serde => Ok(known.name.clone()),
        Ok(known) => Err(read_only(known)),
        // Registered with serde, but the world has not met the type yet.
        Err(_) if registry.component_type(name).is_some() => Ok(name.to_owned()),
        Err(error) => Err(error),
    }
}

/// A JSON object of `fields`, their values moved in (`json!` would copy
/// each `Value` by serializing it again).
fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(fields.into_iter().map(|(key, value)| (key.to_owned(), value)).collect())
}

/// An entity as the protocol writes it: `{index}v{generation}`, as its
/// `Display` writes it, without the formatting machinery.
fn entity_json(entity: Entity) -> Value {
    let mut text = Vec::with_capacity(21);
    push_entity(&mut text, entity);
    Value::String(String::from_utf8(text).expect("digits and `v` are UTF-8"))
}

/// Appends `n` in decimal.
fn push_decimal(out: &mut Vec<u8>, n: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

fn list_components(world: &World, names: &Names) -> Value {
    let components: Vec<Value> = names
        .known
        .iter()
        .map(|k| {
            let entities: usize = if k.sparse {
                world.sparse_sets().get(k.id).map_or(0, |s| s.len())
            } else {
                world.archetypes().as_slice().iter().filter(|t| t.contains(k.id)).map(|t| t.len()).sum()
            };
            json!({
                "name": k.name,
                "type_name": k.type_name,
                "id": k.id.index(),
                "size": k.size,
                "align": k.align,
                "storage": if k.sparse { "sparse" } else { "table" },
                "serde": k.serde,
                "readable": k.serde,
                "writable": k.serde,
                "entities": entities,
            })
        })
        .collect();
    json!({ "components": components })
}

/// A query: filters, the values to return, a page.
#[derive(Clone, Debug)]
pub(crate) struct QuerySpec {
    with: Vec<String>,
    without: Vec<String>,
    components: Vec<String>,
    component_names: bool,
    offset: usize,
    limit: usize,
    /// Start at the page holding this entity, when it matches.
    page_of: Option<Entity>,
    /// Only entities with this `Name`.
    name: Option<String>,
    /// Only entities whose `Name` contains this, lower-cased.
    name_contains: Option<String>,
}

impl QuerySpec {
    pub fn from_params(params: &Value, offset_default: u64) -> Result<QuerySpec, RpcError> {
        Ok(QuerySpec {
            with: params::strings(params, "with")?.unwrap_or_default(),
            without: params::strings(params, "without")?.unwrap_or_default(),
            components: params::strings(params, "components")?.unwrap_or_default(),
            component_names: params::boolean(params, "component_names")?,
            offset: params::uint(params, "offset", offset_default, u32::MAX as u64)? as usize,
            limit: params::uint(params, "limit", 100, MAX_LIMIT)? as usize,
            page_of: params::opt_entity(params, "page_of")?,
            name: params::opt_string(params, "name")?,
            name_contains: params::opt_string(params, "name_contains")?.map(|s| s.to_lowercase()),
        })
    }

    /// The page, as `{ total, offset, entities: [{ entity, components }] }`.
    pub fn run(&self, world: &World, registry: &SerdeRegistry) -> Result<Value, RpcError> {
        self.run_with(world, registry, &Names::of(world, registry))
    }

    /// The matches on the page, in entity order, each with the index of
    /// its table; and the components whose values are asked for.
    fn page<'n>(&self, world: &World, names: &'n Names) -> Result<Page<'n>, RpcError> {
        let resolve =
            |list: &[String]| -> Result<Vec<&Known>, RpcError> { list.iter().map(|name| names.find(name)).collect() };
        let with = resolve(&self.with)?;
        let without = resolve(&self.without)?;
        let values = resolve(&self.components)?;
        if let Some(k) = values.iter().find(|k| !k.serde) {
            return Err(read_only(k));
        }
        let named: Vec<ComponentId> = with.iter().chain(&without).chain(&values).map(|k| k.id).collect();
        // Each match with the index of its table.
        let mut matched = matching(world, &with, &without, &named);
        if self.name.is_some() || self.name_contains.is_some() {
            matched.retain(|&(entity, _)| {
                let Some(name) = world.get::<Name>(entity) else { return false };
                self.name.as_deref().is_none_or(|wanted| name.as_str() == wanted)
                    && self.name_contains.as_deref().is_none_or(|part| name.to_lowercase().contains(part))
            });
        }
        // The page, in entity order, without sorting every match: the
        // entities before it are moved to the front, then the page's.
        let offset = match self.page_of {
            // Pages start at multiples of `limit` (a limit of 0 has no pages).
            Some(e) if self.limit > 0 && matched.iter().any(|&(m, _)| m == e) => {
                matched.iter().filter(|&&(m, _)| m < e).count() / self.limit * self.limit
            }
            _ => self.offset,
        };
        let total = matched.len();
        if offset > 0 && offset < total {
            matched.select_nth_unstable_by_key(offset, |&(e, _)| e);
        }
        let rest = &mut matched[offset.min(total)..];
        if self.limit < rest.len() {
            rest.select_nth_unstable_by_key(self.limit, |&(e, _)| e);
        }
        let in_page = self.limit.min(rest.len());
        let page = &mut rest[..in_page];
        page.sort_unstable_by_key(|&(e, _)| e);
        let rows = page.to_vec();
        Ok(Page { total, offset, rows, values })
    }

    /// [`QuerySpec::run`] with the world's names at hand.
    pub fn run_with(&self, world: &World, registry: &SerdeRegistry, names: &Names) -> Result<Value, RpcError> {
        let Page { total, offset, rows, values } = self.page(world, names)?;
        let tables = world.archetypes().as_slice();
        // The names of each table's components, looked up once per table.
        let mut table_names: Vec<(usize, Vec<&str>)> = Vec::new();
        let page: Vec<Value> = rows
            .iter()
            .map(|&(entity, table)| {
                let mut components = Map::new();
                for k in &values {
                    if let Ok(Some(value)) = registry.component_json(world, entity, &k.name) {
                        components.insert(k.name.clone(), value);
                    }
                }
                let mut row = Map::new();
                row.insert("entity".to_owned(), entity_json(entity));
                row.insert("components".to_owned(), Value::Object(components));
                if let Some(name) = world.get::<Name>(entity) {
                    row.insert("name".to_owned(), Value::from(name.as_str()));
                }
                if self.component_names {
                    // In the order of the entity's view: its table's
                    // components, then its sparse ones.
                    let at = match table_names.iter().position(|(t, _)| *t == table) {
                        Some(at) => at,
                        None => {
                            let list = tables[table].components().iter().filter_map(|&id| names.by_id(id));
                            table_names.push((table, list.map(|k| k.name.as_str()).collect()));
                            table_names.len() - 1
                        }
                    };
                    let mut list: Vec<Value> = table_names[at].1.iter().map(|&n| Value::from(n)).collect();
                    let sparse = world.sparse_sets().iter().filter(|s| s.contains(entity));
                    list.extend(sparse.filter_map(|s| names.by_id(s.id())).map(|k| Value::from(k.name.as_str())));
                    row.insert("component_names".to_owned(), Value::Array(list));
                }
                Value::Object(row)
            })
            .collect();
        Ok(object([("total", total.into()), ("offset", offset.into()), ("entities", page.into())]))
    }

    /// [`QuerySpec::run_with`] written as JSON text, the same object but
    /// for the order of its keys, without building its values: the answer
    /// a call gets (the page's most frequent, and largest, call).
    pub fn run_text(&self, world: &World, registry: &SerdeRegistry, names: &Names) -> Result<String, RpcError> {
        let Page { total, offset, rows, values } = self.page(world, names)?;
        let tables = world.archetypes().as_slice();
        let mut out: Vec<u8> = Vec::with_capacity(64 + rows.len() * 96);
        out.extend_from_slice(format!(r#"{{"total":{total},"offset":{offset},"entities":["#).as_bytes());
        // Each table's component names, written once: `"A","B"`.
        let mut table_names: Vec<(usize, Vec<u8>)> = Vec::new();
        for (n, &(entity, table)) in rows.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(br#"{"entity":""#);
            push_entity(&mut out, entity);
            out.extend_from_slice(br#"","components":{"#);
            let mut first = true;
            for (i, k) in values.iter().enumerate() {
                // A name asked for twice is one key, as in an object.
                if values[..i].iter().any(|earlier| earlier.name == k.name) {
                    continue;
                }
                if let Ok(Some(value)) = registry.component_json(world, entity, &k.name) {
                    if !first {
                        out.push(b',');
                    }
                    first = false;
                    push_json(&mut out, &k.name);
                    out.push(b':');
                    push_value(&mut out, &value);
                }
            }
            out.push(b'}');
            if let Some(name) = world.get::<Name>(entity) {
                out.extend_from_slice(br#","name":"#);
                push_json(&mut out, name.as_str());
            }
            if self.component_names {
                // In the order of the entity's view: its table's
                // components, then its sparse ones.
                let at = match table_names.iter().position(|(t, _)| *t == table) {
                    Some(at) => at,
                    None => {
                        let mut list = Vec::new();
                        for k in tables[table].components().iter().filter_map(|&id| names.by_id(id)) {
                            if !list.is_empty() {
                                list.push(b',');
                            }
                            push_json(&mut list, &k.name);
                        }
                        table_names.push((table, list));
                        table_names.len() - 1
                    }
                };
                out.extend_from_slice(br#","component_names":["#);
                let listed = &table_names[at].1;
                out.extend_from_slice(listed);
                let mut any = !listed.is_empty();
                for s in world.sparse_sets().iter().filter(|s| s.contains(entity)) {
                    if let Some(k) = names.by_id(s.id()) {
                        if any {
                            out.push(b',');
                        }
                        any = true;
                        push_json(&mut out, &k.name);
                    }
                }
                out.push(b']');
            }
            out.push(b'}');
        }
        out.extend_from_slice(b"]}");
        Ok(String::from_utf8(out).expect("JSON text is UTF-8"))
    }
}

/// A query's page before it is written out.
struct Page<'n> {
    total: usize,
    offset: usize,
    rows: Vec<(Entity, usize)>,
    values: Vec<&'n Known>,
}

/// Appends `text` as a JSON string.
fn push_json(out: &mut Vec<u8>, text: &str) {
    serde_json::to_writer(out, text).expect("writing JSON to memory cannot fail");
}

/// Appends `value` as JSON.
fn push_value(out: &mut Vec<u8>, value: &Value) {
    serde_json::to_writer(out, value).expect("writing JSON to memory cannot fail");
}

/// Appends an entity as its `Display` writes it: `{index}v{generation}`.
fn push_entity(out: &mut Vec<u8>, entity: Entity) {
    push_decimal(out, entity.index());
    out.push(b'v');
    push_decimal(out, entity.generation());
}

/// The entities with every `with` component and none of the `without`;
/// those of tables holding a default-hiding component (`Disabled`) only if
/// the query `named` it, as for the engine's queries; each with the index
/// of its table.
fn matching(world: &World, with: &[&Known], without: &[&Known], named: &[ComponentId]) -> Vec<(Entity, usize)> {
    let sparse = world.sparse_sets();
    let has_sparse = |k: &Known, e: Entity| sparse.get(k.id).is_some_and(|s| s.contains(e));
    let mut out = Vec::with_capacity(world.len());
    for (index, table) in world.archetypes().as_slice().iter().enumerate() {
        if table.is_empty()
            || with.iter().any(|k| !k.sparse && !table.contains(k.id))
            || without.iter().any(|k| !k.sparse && table.contains(k.id))
            || (table.hides_entities()
                && table
                    .components()
                    .iter()
                    .any(|id| world.components().info(*id).hides_entities() && !named.contains(id)))
        {
            continue;
        }
        let with_sparse: Vec<&&Known> = with.iter().filter(|k| k.sparse).collect();
        let without_sparse: Vec<&&Known> = without.iter().filter(|k| k.sparse).collect();
        out.extend(
            world
                .table_entities(table)
                .filter(|&e| {
                    with_sparse.iter().all(|k| has_sparse(k, e)) && !without_sparse.iter().any(|k| has_sparse(k, e))
                })
                .map(|e| (e, index)),
        );
    }
    out
}

fn get_components(world: &World, registry: &SerdeRegistry, names: &Names, params: &Value) -> Result<Value, RpcError> {
    let entity = params::entity(params, "entity")?;
    let has = names.of_entity(world, entity).ok_or_else(|| no_such_entity(entity))?;
    let wanted: Vec<&Known> = match params::strings(params, "components")? {
        Some(list) => list.iter().map(|n| names.find(n)).collect::<Result<_, _>>()?,
        None => has.clone(),
    };
    let mut values = Map::new();
    let mut read_only = Vec::new();
    let mut missing = Vec::new();
    for k in wanted {
        if !has.iter().any(|h| h.id == k.id) {
            missing.push(json!(k.name));
        } else if k.serde {
            match registry.component_json(world, entity, &k.name) {
                Ok(Some(value)) => {
                    values.insert(k.name.clone(), value);
                }
                Ok(None) => missing.push(json!(k.name)),
                Err(error) => return Err(edit_error(error)),
            }
        } else {
            read_only.push(json!({ "name": k.name, "type_name": k.type_name, "size": k.size }));
        }
    }
    Ok(object([
        ("entity", entity_json(entity)),
        ("components", Value::Object(values)),
        ("read_only", read_only.into()),
        ("missing", missing.into()),
    ]))
}

/// `(registered name, JSON text)` of each entry of a `components` object.
fn component_values(
    world: &World,
    registry: &SerdeRegistry,
    params: &Value,
    required: bool,
) -> Result<Vec<(String, String)>, RpcError> {
    let object = match params.get("components") {
        Some(Value::Object(object)) => object.clone(),
        None | Some(Value::Null) if !required => Map::new(),
        None => return Err(RpcError::params("missing `components`")),
        Some(_) => return Err(RpcError::params("`components` must be an object: component name -> value")),
    };
    let names = Names::of(world, registry);
    object.iter().map(|(name, value)| Ok((serde_name(&names, registry, name)?, value.to_string()))).collect()
}

fn pairs(values: &[(String, String)]) -> Vec<(&str, &str)> {
    values.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect()
}

/// Refuses a `ChildOf` the engine would not keep as given: a parent that
/// is not alive, the entity itself, or one of its descendants (a cycle).
/// The engine drops such a link (and the parent the entity had), so the
/// edit is refused here, before anything changes.
fn check_parent(world: &World, entity: Option<Entity>, values: &[(String, String)]) -> Result<(), RpcError> {
    let Some((_, text)) = values.iter().find(|(name, _)| name == "ChildOf") else { return Ok(()) };
    // A value that is no handle is left for the registry to refuse.
    let Ok(value) = serde_json::from_str::<Value>(text) else { return Ok(()) };
    let Ok(parent) = params::entity(&json!({ "parent": value }), "parent") else { return Ok(()) };
    let refuse = |why: String| Err(RpcError::new(codes::INVALID_VALUE, format!("`ChildOf`: {why}; nothing changed")));
    if !world.contains(parent) {
        return refuse(format!("the parent {parent} is not alive"));
    }
    let Some(entity) = entity else { return Ok(()) };
    if parent == entity {
        return refuse(format!("{entity} cannot be its own parent"));
    }
    // Up from the new parent, at most once per entity (never trusting the
    // links to be acyclic): meeting the entity would close a cycle.
    let mut up = world.parent(parent);
    for _ in 0..world.len() {
        match up {
            Some(ancestor) if ancestor == entity => {
                return refuse(format!("{parent} is under {entity}: making it the parent would close a cycle"));
            }
            Some(ancestor) => up = world.parent(ancestor),
            None => break,
        }
    }
    Ok(())
}

fn insert_components(world: &mut World, registry: &SerdeRegistry, params: &Value) -> Result<Value, RpcError> {
    let entity = params::entity(params, "entity")?;
    let values = component_values(world, registry, params, true)?;
    if !world.contains(entity) {
        return Err(no_such_entity(entity));
    }
    check_parent(world, Some(entity), &values)?;
    registry.insert_components_json(world, entity, &pairs(&values)).map_err(edit_error)?;
    Ok(Value::Null)
}

fn remove_components(world: &mut World, registry: &SerdeRegistry, params: &Value) -> Result<Value, RpcError> {
    let entity = params::entity(params, "entity")?;
    let list = params::strings(params, "components")?.ok_or_else(|| RpcError::params("missing `components`"))?;
    let names = Names::of(world, registry);
    let resolved: Vec<String> = list.iter().map(|n| serde_name(&names, registry, n)).collect::<Result<_, _>>()?;
    if !world.contains(entity) {
        return Err(no_such_entity(entity));
    }
    let mut removed = Vec::new();
    for name in resolved {
        if registry.remove_component_by_name(world, entity, &name).map_err(edit_error)? {
            removed.push(json!(name));
        }
    }
    Ok(json!({ "removed": removed }))
}

fn spawn_entity(world: &mut World, registry: &SerdeRegistry, params: &Value) -> Result<Value, RpcError> {
    let values = component_values(world, registry, params, false)?;
    check_parent(world, None, &values)?;
    let entity = registry.spawn_json(world, &pairs(&values)).map_err(edit_error)?;
    Ok(json!({ "entity": entity_json(entity) }))
}

fn despawn_entity(world: &mut World, params: &Value) -> Result<Value, RpcError> {
    let entity = params::entity(params, "entity")?;
    let recursive = params::boolean(params, "recursive")?;
    if !world.contains(entity) {
        return Err(no_such_entity(entity));
    }
    let despawned = if recursive {
        world.despawn_recursive(entity).map_err(|_| no_such_entity(entity))?
    } else {
        world.despawn(entity).map_err(|_| no_such_entity(entity))?;
        1
    };
    Ok(json!({ "despawned": despawned }))
}

fn list_resources(world: &World, registry: &SerdeRegistry) -> Value {
    let mut resources: Vec<Value> = world
        .resource_types()
        .map(|(type_id, type_name)| {
            let registered = registry.resource_name_of_type(type_id);
            json!({
                "name": registered.unwrap_or(type_name),
                "type_name": type_name,
                "serde": registered.is_some(),
            })
        })
        .collect();
    resources.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    json!({ "resources": resources })
}

fn resource_read_only(world: &World, name: &str) -> Option<RpcError> {
    world.resource_types().find(|(_, type_name)| *type_name == name || type_name.rsplit("::").next() == Some(name)).map(
        |(_, type_name)| {
            RpcError::new(
                codes::READ_ONLY,
                format!("resource `{type_name}` is not registered with serde, so it cannot be read or written as JSON"),
            )
        },
    )
}

fn get_resource(world: &World, registry: &SerdeRegistry, params: &Value) -> Result<Value, RpcError> {
    let name = params::string(params, "resource")?;
    match registry.resource_json(world, name) {
        Ok(Some(value)) => Ok(json!({ "resource": name, "value": value })),
        Ok(None) => Err(RpcError::new(codes::UNKNOWN_RESOURCE, format!("the world has no `{name}` resource now"))),
        Err(EditError::UnknownResource { .. }) if resource_read_only(world, name).is_some() => {
            Err(resource_read_only(world, name).expect("checked"))
        }
        Err(error) => Err(edit_error(error)),
    }
}

fn insert_resource(world: &mut World, registry: &SerdeRegistry, params: &Value) -> Result<Value, RpcError> {
    let name = params::string(params, "resource")?;
    let value = params.get("value").ok_or_else(|| RpcError::params("missing `value`"))?;
    match registry.insert_resource_json(world, name, &value.to_string()) {
        Ok(()) => Ok(Value::Null),
        Err(EditError::UnknownResource { .. }) if resource_read_only(world, name).is_some() => {
            Err(resource_read_only(world, name).expect("checked"))
        }
        Err(error) => Err(edit_error(error)),
    }
}

fn list_tables(world: &World, names: &Names, include_empty: bool) -> Value {
    let name_of = |id| names.by_id(id).map_or_else(|| format!("#{}", id.index()), |k| k.name.clone());
    let tables: Vec<Value> = world
        .archetypes()
        .as_slice()
        .iter()
        .filter(|t| include_empty || !t.is_empty())
        .map(|t| {
            let components: Vec<Value> = t.components().iter().map(|&id| name_of(id).into()).collect();
            object([
                ("id", t.id().index().into()),
                ("components", components.into()),
                ("rows", t.len().into()),
                ("bytes", t.allocated_bytes().into()),
            ])
        })
        .collect();
    let sparse: Vec<Value> = world
        .sparse_sets()
        .iter()
        .map(|s| json!({ "component": name_of(s.id()), "entities": s.len(), "bytes": s.allocated_bytes() }))
        .collect();
    object([
        ("entities", world.len().into()),
        ("bytes", world.allocated_bytes().into()),
        ("tables", tables.into()),
        ("sparse", sparse.into()),
    ])
}

fn hierarchy(world: &World, names: &Names, params: &Value) -> Result<Value, RpcError> {
    let roots: Vec<Entity> = match params::opt_entity(params, "root")? {
        Some(root) if world.contains(root) => vec![root],
        Some(root) => return Err(no_such_entity(root)),
        None => {
            let mut roots: Vec<Entity> = world.query_filtered::<Entity, (With<Children>, Without<ChildOf>)>().collect();
            roots.sort_unstable();
            roots
        }
    };
    let mut walk = Walk { budget: MAX_NODES, truncated: false };
    let mut nodes = Vec::new();
    for root in roots {
        if walk.budget == 0 {
            walk.truncated = true;
            break;
        }
        nodes.push(node(world, names, root, 0, &mut walk));
    }
    Ok(object([("roots", nodes.into()), ("truncated", walk.truncated.into())]))
}

/// A hierarchy walk's node budget, and whether it left anything out.
struct Walk {
    budget: usize,
    truncated: bool,
}

/// One node and, depth first within the node budget and [`MAX_DEPTH`],
/// its children.
fn node(world: &World, names: &Names, entity: Entity, depth: usize, walk: &mut Walk) -> Value {
    walk.budget = walk.budget.saturating_sub(1);
    let components: Vec<&str> = names
        .of_entity(world, entity)
        .unwrap_or_default()
        .into_iter()
        .map(|k| k.name.as_str())
        .filter(|n| *n != "ChildOf" && *n != "Children")
        .collect();
    let kids = world.children(entity);
    let mut children: Vec<Value> = Vec::new();
    for &child in kids {
        if walk.budget == 0 || depth >= MAX_DEPTH {
            walk.truncated = true;
            break;
        }
        children.push(node(world, names, child, depth + 1, walk));
    }
    object([
        ("entity", entity_json(entity)),
        ("components", components.into()),
        ("child_count", kids.len().into()),
        ("children", children.into()),
    ])
}

fn schedule_list(stages: &[StageTimings]) -> Value {
    let stages: Vec<Value> = stages
        .iter()
        .map(|(stage, timings)| {
            let systems: Vec<Value> = timings
                .iter()
                .enumerate()
                .map(|(order, t)| {
                    json!({
                        "name": t.name(),
                        "order": order,
                        "runs": t.runs(),
                        "last_us": t.last().as_secs_f64() * 1e6,
                        "mean_us": t.mean().as_secs_f64() * 1e6,
                    })
                })
                .collect();
            object([("stage", stage.as_str().into()), ("systems", systems.into())])
        })
        .collect();
    object([("stages", stages.into())])
}

fn watch_start(ctx: &mut Ctx<'_>, registry: &SerdeRegistry, params: &Value) -> Result<Value, RpcError> {
    let Some(shared) = ctx.shared else {
        return Err(RpcError::new(codes::INTERNAL_ERROR, "no server runs to hold a watch"));
    };
    let (kind, every_default) = match params::string(params, "kind")? {
        "stats" => (WatchKind::Stats, 1),
        "query" => {
            let spec = QuerySpec::from_params(params, 0)?;
            spec.run(ctx.world, registry)?; // Refuse unknown names now.
            (WatchKind::Query(spec), 10)
        }
        other => return Err(RpcError::params(format!("`kind` must be \"stats\" or \"query\", not `{other}`"))),
    };
    let every = params::uint(params, "every", every_default, 3600)?;
    let mut watches = shared.watches.lock().unwrap_or_else(|e| e.into_inner());
    // A stats watch's items start with this frame.
    let id = watches.add(kind, every, shared.limits.max_watches, ctx.frame.saturating_sub(1))?;
    crate::watch::count(&watches, shared);
    Ok(json!({ "watch": id, "every": every.max(1) }))
}

/// Feeds the watches due this frame: a query watch every `every` frames,
/// a stats watch when a poll asked for it (the frames since its last
/// feed) or when its items would otherwise leave the history. Skips the
/// frame if a server thread holds the lock, so the game never waits; and
/// when nothing is due, takes no lock at all.
pub(crate) fn feed_watches(world: &World, history: &History, frame: u64, shared: &Shared) {
    let polled = shared.stats_polled.load(Ordering::Acquire);
    // Expired watches are looked for once a second (at 60 frames a second).
    let due = polled || frame.is_multiple_of(60) || shared.query_watches.load(Ordering::Relaxed) > 0;
    if !due {
        return;
    }
    let Ok(mut watches) = shared.watches.try_lock() else { return };
    shared.stats_polled.store(false, Ordering::Release);
    // The registry is looked up (a copy of it) only for a query watch due
    // this frame.
    let mut registry: Option<SerdeRegistry> = None;
    let mut fed = false;
    for watch in &mut watches.list {
        match &watch.kind {
            WatchKind::Stats => {
                // Fed when polled, and at least every half a history.
                if !polled && frame < watch.fed + crate::history::FRAMES as u64 / 2 {
                    continue;
                }
                let every = watch.every;
                let due = |from: u64, to: u64| to / every - from / every;
                let frames = history.after(watch.fed, every);
                let missed = due(watch.fed, frame).saturating_sub(frames.len() as u64);
                let kept = frames.len().saturating_sub(crate::watch::MAX_ITEMS);
                watch.skip(missed + kept as u64);
                if frames.len() > kept {
                    let frames = std::sync::Arc::new(frames);
                    for i in kept..frames.len() {
                        watch.push(Item::Frame(std::sync::Arc::clone(&frames), i));
                    }
                    fed = true;
                }
                watch.fed = frame;
            }
            WatchKind::Query(spec) => {
                if !frame.is_multiple_of(watch.every) {
                    continue;
                }
                let registry = registry.get_or_insert_with(|| world.serde_registry());
                watch.push(Item::Json(spec.run(world, registry).unwrap_or_else(|e| json!({ "error": e.to_json() }))));
                fed = true;
            }
        }
    }
    crate::watch::expire(&mut watches, shared);
    if fed {
        shared.watch_signal.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use archetable_macros::Component;
    use serde::{Deserialize, Serialize};

    #[derive(Component, Serialize, Deserialize, Default, Debug, Clone, Copy)]
    struct Spot {
        x: f32,
        label: char,
    }

    #[derive(Component, Serialize, Deserialize, Default, Debug, Clone, Copy)]
    #[component(storage = "sparse")]
    struct Mark(u8);

    /// Not registered with serde.
    #[derive(Component, Debug)]
    struct Opaque;

    #[test]
    fn a_query_written_as_text_is_the_value_the_query_builds() {
        let mut world = World::new();
        world.register_serde::<Spot>("Spot").register_serde::<Mark>("Mark");
        for i in 0..40u8 {
            let spot = Spot { x: f32::from(i) * 0.1, label: char::from(b'a' + i % 26) };
            let entity = match i % 4 {
                0 => world.spawn((spot,)),
                1 => world.spawn((spot, Mark(i))),
                2 => world.spawn((spot, Opaque, Name::new(format!("spot \"{i}\"\n")))),
                _ => world.spawn((Opaque,)),
            };
            if i % 5 == 0 {
                world.despawn(entity).expect("just spawned");
            }
        }
        let registry = world.serde_registry();
        let names = Names::of(&world, &registry);
        let queries = [
            json!({ "component_names": true, "limit": 7, "offset": 3 }),
            json!({ "component_names": true, "limit": 5, "offset": 2 }),
            json!({ "with": ["Spot"], "components": ["Spot", "Mark", "Spot"], "component_names": true }),
            json!({ "without": ["Mark"], "components": ["Spot"], "limit": 0 }),
            json!({ "with": ["Mark"], "components": ["Mark"], "offset": 100 }),
            json!({ "name_contains": "SPOT", "components": ["Spot"], "component_names": true, "limit": 2 }),
        ];
        for query in queries {
            let spec = QuerySpec::from_params(&query, 0).unwrap();
            let value = spec.run_with(&world, &registry, &names).unwrap();
            let text = spec.run_text(&world, &registry, &names).unwrap();
            let parsed: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(parsed, value, "{query}");
        }
        // Not vacuous: the first page lists sparse and named entities.
        let spec = QuerySpec::from_params(&json!({ "component_names": true, "limit": 100 }), 0).unwrap();
        let page = spec.run_with(&world, &registry, &names).unwrap();
        assert_eq!(page["total"], json!(32));
        let rows = page["entities"].as_array().unwrap();
        assert!(rows.iter().any(|r| r["component_names"] == json!(["Spot", "Mark"])));
        assert!(rows.iter().any(|r| r["name"] == json!("spot \"2\"\n")));
        // Pages are slices of the matches in entity order.
        let listed = |offset: usize, limit: usize| -> Vec<Value> {
            let query = json!({ "offset": offset, "limit": limit });
            let spec = QuerySpec::from_params(&query, 0).unwrap();
            let page = spec.run_with(&world, &registry, &names).unwrap();
            page["entities"].as_array().unwrap().iter().map(|r| r["entity"].clone()).collect()
        };
        let all = listed(0, 1000);
        let bits = |v: &Value| {
            let (index, generation) = v.as_str().unwrap().split_once('v').unwrap();
            // Entities order by generation, then index.
            (generation.parse::<u32>().unwrap(), index.parse::<u32>().unwrap())
        };
        assert!(all.windows(2).all(|w| bits(&w[0]) < bits(&w[1])));
        assert_eq!(all.len(), 32);
        for (offset, limit) in [(0, 5), (3, 4), (0, 8), (5, 3), (20, 12), (30, 10), (40, 1), (0, 0)] {
            let end = (offset + limit).min(all.len());
            assert_eq!(listed(offset, limit), all[offset.min(end)..end], "offset {offset}, limit {limit}");
        }
        // An unknown name is refused by both.
        let spec = QuerySpec::from_params(&json!({ "with": ["Nope"] }), 0).unwrap();
        let code = |e: RpcError| e.to_json()["code"].clone();
        assert_eq!(
            code(spec.run_text(&world, &registry, &names).unwrap_err()),
            code(spec.run_with(&world, &registry, &names).unwrap_err())
        );
    }

    #[test]
    fn kept_names_follow_the_world_its_types_and_its_registry() {
        let mut world = World::new();
        world.spawn((Spot::default(),));
        let mut cache = None;
        let name_of_spot = |cache: &mut Option<(NamesKey, Names)>, world: &World| {
            let names = cached(cache, world, &world.serde_registry());
            names.by_id(world.components().id::<Spot>().unwrap()).unwrap().name.clone()
        };
        assert!(name_of_spot(&mut cache, &world).ends_with("::Spot"));
        // Registered with serde since: the same types, another name.
        world.register_serde::<Spot>("Spot");
        assert_eq!(name_of_spot(&mut cache, &world), "Spot");
        // Another world, as many types, registered as `Place`.
        let mut other = World::new();
        other.spawn((Spot::default(),));
        other.register_serde::<Spot>("Place");
        assert_eq!(name_of_spot(&mut cache, &other), "Place");
        // A new type.
        assert!(cached(&mut cache, &other, &other.serde_registry()).find("Mark").is_err());
        other.spawn((Mark(1),));
        assert!(cached(&mut cache, &other, &other.serde_registry()).find("Mark").is_ok());
    }

    #[test]
    fn entities_are_written_as_their_display_writes_them() {
        let g = |generation: u64, index: u64| (generation << 32) | index;
        let bits = [g(1, 0), g(1, 9), g(10, 10), g(12_345, 99_999), g(7, 42), g(u32::MAX as u64, 1), u64::MAX];
        for bits in bits {
            let entity = Entity::from_bits(bits).expect("a generation above 0");
            assert_eq!(entity_json(entity), Value::String(entity.to_string()));
        }
        assert_eq!(entity_json(Entity::from_bits(g(3, 1_000_000)).unwrap()), Value::from("1000000v3"));
    }
}
