//! The JSON-RPC 2.0 envelope: requests read from bytes, responses and
//! errors, and the error codes of the protocol.

use serde_json::{json, Map, Value};

use crate::methods::Answer;

/// The error codes the inspector answers with: the five of JSON-RPC 2.0,
/// then its own, in the range JSON-RPC leaves to servers.
pub mod codes {
    /// The body is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON, but not a JSON-RPC 2.0 request (or an empty batch, or one too
    /// large).
    pub const INVALID_REQUEST: i64 = -32600;
    /// No method of that name.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// A parameter is missing, of the wrong type or out of range.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The inspector itself failed.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// No component type of that name (`data.suggestion`: the nearest).
    pub const UNKNOWN_COMPONENT: i64 = -32001;
    /// The entity handle is stale or was never alive.
    pub const NO_SUCH_ENTITY: i64 = -32002;
    /// The value does not deserialize as the component or resource
    /// (`data.field`: where).
    pub const INVALID_VALUE: i64 = -32003;
    /// The component or resource is not registered with serde: it can be
    /// listed, not read or written.
    pub const READ_ONLY: i64 = -32004;
    /// User code (a `Deserialize`, a hook, an observer) panicked during
    /// the call; the world is as that code left it, the game goes on.
    pub const PANICKED: i64 = -32005;
    /// No resource of that name (`data.suggestion`: the nearest).
    pub const UNKNOWN_RESOURCE: i64 = -32006;
    /// The request did not carry the token the server asks for.
    pub const UNAUTHORIZED: i64 = -32010;
    /// The request or the response is larger than the server's cap.
    pub const TOO_LARGE: i64 = -32011;
    /// Too many requests are waiting for the game; try again.
    pub const BUSY: i64 = -32012;
    /// The game did not answer in time (it is not calling `update`, or a
    /// frame took too long).
    pub const NO_ANSWER: i64 = -32013;
    /// No watch of that id (it was stopped, or expired unpolled).
    pub const UNKNOWN_WATCH: i64 = -32014;
    /// The server holds as many watches as it allows.
    pub const TOO_MANY_WATCHES: i64 = -32015;
    /// The world has no `Time` resource, which loop control works through.
    pub const NO_CLOCK: i64 = -32016;
}

/// A JSON-RPC error: code, message and optional data.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    /// One of [`codes`].
    pub code: i64,
    /// What went wrong, for people.
    pub message: String,
    /// Details for programs.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error without data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError { code, message: message.into(), data: None }
    }

    /// The same error with `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    pub(crate) fn params(message: impl Into<String>) -> Self {
        RpcError::new(codes::INVALID_PARAMS, message)
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), json!(self.code));
        error.insert("message".into(), json!(self.message));
        if let Some(data) = &self.data {
            error.insert("data".into(), data.clone());
        }
        Value::Object(error)
    }
}

/// One call of a request: its id (`None` for a notification, which gets
/// no response), method and params.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub id: Option<Value>,
    pub method: String,
    pub params: Value,
}

/// One entry of a request: a call, or an entry that is not one (answered
/// with its error, under the id it had if any).
pub(crate) type Entry = Result<Call, (Value, RpcError)>;

/// What a body holds: one call, or a batch.
pub(crate) enum Parsed {
    Single(Entry),
    Batch(Vec<Entry>),
}

/// The most calls one batch may hold.
pub const MAX_BATCH: usize = 32;

/// Reads a request body. A body that is not JSON, or an empty or too
/// large batch, is an error for the whole body.
pub(crate) fn parse(body: &[u8]) -> Result<Parsed, RpcError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| RpcError::new(codes::PARSE_ERROR, format!("the body is not JSON: {e}")))?;
    match value {
        Value::Array(items) => {
            if items.is_empty() {
                return Err(RpcError::new(codes::INVALID_REQUEST, "an empty batch"));
            }
            if items.len() > MAX_BATCH {
                return Err(RpcError::new(
                    codes::INVALID_REQUEST,
                    format!("a batch of {} calls; at most {MAX_BATCH}", items.len()),
                ));
            }
            Ok(Parsed::Batch(items.into_iter().map(entry).collect()))
        }
        other => Ok(Parsed::Single(entry(other))),
    }
}

fn entry(value: Value) -> Entry {
    let Value::Object(mut object) = value else {
        return Err((Value::Null, RpcError::new(codes::INVALID_REQUEST, "a request must be a JSON object")));
    };
    let id = object.remove("id");
    let id_or_null = id.clone().unwrap_or(Value::Null);
    let invalid = |message: &str| (id_or_null.clone(), RpcError::new(codes::INVALID_REQUEST, message));
    if let Some(id) = &id
        && !(id.is_string() || id.is_number() || id.is_null())
    {
        return Err((Value::Null, RpcError::new(codes::INVALID_REQUEST, "`id` must be a string, a number or null")));
    }
    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err(invalid("`jsonrpc` must be \"2.0\""));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        _ => return Err(invalid("`method` must be a string")),
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(params @ Value::Object(_)) => params,
        Some(_) => return Err(invalid("`params` must be an object (parameters by name)")),
    };
    Ok(Call { id, method, params })
}

/// The response to one call.
pub(crate) fn response(id: Value, result: Result<Value, RpcError>) -> Value {
    match result {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error.to_json() }),
    }
}

/// A response's text: [`response`] written out, or, for an answer
/// written as text, that text put in the response's place.
pub(crate) fn response_text(id: Value, result: Result<Answer, RpcError>) -> String {
    match result {
        Ok(Answer::Text(text)) => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{text}}}"#),
        Ok(Answer::Value(value)) => response(id, Ok(value)).to_string(),
        Err(error) => response(id, Err(error)).to_string(),
    }
}

/// A parameter of a method, for discovery.
pub(crate) struct Param {
    pub name: &'static str,
    pub kind: &'static str,
    pub required: bool,
    pub about: &'static str,
}

/// A method, for discovery.
pub(crate) struct Method {
    pub name: &'static str,
    pub about: &'static str,
    pub params: &'static [Param],
}

const fn p(name: &'static str, kind: &'static str, required: bool, about: &'static str) -> Param {
    Param { name, kind, required, about }
}

const ENTITY: Param = p("entity", "string", true, "an entity handle, \"INDEXvGENERATION\" (\"3v1\")");
const WITH: Param = p("with", "string[]", false, "components the entities must have");
const WITHOUT: Param = p("without", "string[]", false, "components the entities must not have");
const COMPONENTS: Param = p("components", "string[]", false, "components whose values to return");
const OFFSET: Param = p("offset", "integer", false, "entities to skip (default 0)");
const LIMIT: Param = p("limit", "integer", false, "most entities to return (default 100, at most 1000)");

/// Every method, in the order `rpc.discover` lists them.
pub(crate) const METHODS: &[Method] = &[
    Method { name: "rpc.discover", about: "Lists the methods and their parameters.", params: &[] },
    Method {
        name: "world.list_components",
        about: "Lists the component types: name, Rust type, size, storage, how many entities have one, and whether \
                the serde registry can read and write them.",
        params: &[],
    },
    Method {
        name: "world.query",
        about: "The entities that have every `with` component and no `without` one, by handle order, a page at a \
                time, with the values of the `components` named and each entity's `Name`. Disabled entities (and \
                others hidden by default) are left out unless `with`, `without` or `components` names the marker.",
        params: &[
            WITH,
            WITHOUT,
            COMPONENTS,
            OFFSET,
            LIMIT,
            p("component_names", "boolean", false, "also list each entity's component names"),
            p("name", "string", false, "only entities with this `Name`, exactly"),
            p("name_contains", "string", false, "only entities whose `Name` contains this text, in any case"),
            p(
                "page_of",
                "string",
                false,
                "start at the page (of `limit` entities) that holds this entity, if it matches",
            ),
        ],
    },
    Method {
        name: "world.get_components",
        about: "An entity's components: values of those registered with serde, name and size of the others.",
        params: &[ENTITY, p("components", "string[]", false, "only these (default: all the entity has)")],
    },
    Method {
        name: "world.insert_components",
        about: "Inserts or replaces components of an entity from JSON values; all are read before any is inserted.",
        params: &[ENTITY, p("components", "object", true, "component name -> JSON value")],
    },
    Method {
        name: "world.remove_components",
        about: "Removes components from an entity; returns those it had.",
        params: &[ENTITY, p("components", "string[]", true, "component names")],
    },
    Method {
        name: "world.spawn_entity",
        about: "Spawns an entity with components from JSON values; returns its handle.",
        params: &[p("components", "object", false, "component name -> JSON value")],
    },
    Method {
        name: "world.despawn_entity",
        about: "Despawns an entity (with its descendants if `recursive`); returns how many went.",
        params: &[ENTITY, p("recursive", "boolean", false, "also despawn its children, recursively")],
    },
    Method { name: "world.list_resources", about: "Lists the resources and whether serde can read them.", params: &[] },
    Method {
        name: "world.get_resource",
        about: "A resource's value as JSON.",
        params: &[p("resource", "string", true, "the registered name")],
    },
    Method {
        name: "world.insert_resource",
        about: "Replaces a resource with a JSON value.",
        params: &[p("resource", "string", true, "the registered name"), p("value", "any", true, "its new value")],
    },
    Method {
        name: "world.list_tables",
        about: "The archetype tables: component sets, rows and bytes.",
        params: &[p("include_empty", "boolean", false, "also tables without rows (default false)")],
    },
    Method {
        name: "world.hierarchy",
        about: "The ChildOf/Children trees, roots first, each node with its children: 5,000 nodes \
                (roots included) and 60 levels at most; `truncated` says whether any were left out.",
        params: &[p("root", "string", false, "only the tree under this entity")],
    },
    Method {
        name: "schedule.list",
        about: "The stages and their systems in run order: runs, last and mean time.",
        params: &[],
    },
    Method {
        name: "schedule.history",
        about: "Per-frame figures of the last frames since a client connected: real frame time, entities, and \
                each system's time in that frame.",
        params: &[p("frames", "integer", false, "how many of the last frames (default and most 600)")],
    },
    Method { name: "loop.status", about: "Frame, pause, time scale, game and real time.", params: &[] },
    Method { name: "loop.pause", about: "Pauses game time (debug systems keep running).", params: &[] },
    Method { name: "loop.resume", about: "Resumes game time.", params: &[] },
    Method {
        name: "loop.step",
        about: "While paused: runs game time for the next frames, then pauses again.",
        params: &[p("frames", "integer", false, "how many frames (default 1, at most 600)")],
    },
    Method {
        name: "loop.set_time_scale",
        about: "Sets the time scale (1 is real time).",
        params: &[p("scale", "number", true, "from 0 to 100")],
    },
    Method {
        name: "watch.start",
        about: "Starts watching the frame figures (`stats`) or a query (`query`, with the parameters of \
                world.query); poll it with watch.poll.",
        params: &[
            p("kind", "string", true, "\"stats\" or \"query\""),
            p("every", "integer", false, "frames between two items (default 1 for stats, 10 for a query)"),
            WITH,
            WITHOUT,
            COMPONENTS,
            LIMIT,
        ],
    },
    Method {
        name: "watch.poll",
        about: "Waits until a watch has items after `after` (or the timeout), then returns them; each watch keeps \
                at most 64 items, older ones are dropped and counted.",
        params: &[
            p("watch", "integer", true, "the id watch.start returned"),
            p("after", "integer", false, "the last sequence number seen (default: none)"),
            p("timeout_ms", "integer", false, "longest wait (default 1000, at most 10000)"),
        ],
    },
    Method { name: "watch.stop", about: "Stops a watch.", params: &[p("watch", "integer", true, "its id")] },
];

/// The answer to `rpc.discover`.
pub(crate) fn discover() -> Value {
    let methods: Vec<Value> = METHODS
        .iter()
        .map(|m| {
            let params: Vec<Value> = m
                .params
                .iter()
                .map(|p| json!({ "name": p.name, "type": p.kind, "required": p.required, "description": p.about }))
                .collect();
            json!({ "name": m.name, "description": m.about, "params": params })
        })
        .collect();
    json!({ "jsonrpc": "2.0", "methods": methods })
}

/// Reading parameters.
pub(crate) mod params {
    use super::RpcError;
    use archetable_core::Entity;
    use serde_json::Value;

    pub fn entity(params: &Value, name: &str) -> Result<Entity, RpcError> {
        match params.get(name) {
            Some(Value::String(s)) => {
                Entity::parse(s).ok_or_else(|| RpcError::params(format!("`{name}`: `{s}` is not an entity handle")))
            }
            Some(Value::Number(n)) => n
                .as_u64()
                .and_then(Entity::from_bits)
                .ok_or_else(|| RpcError::params(format!("`{name}`: {n} is not an entity handle"))),
            Some(_) => Err(RpcError::params(format!("`{name}` must be an entity handle such as \"3v1\""))),
            None => Err(RpcError::params(format!("missing `{name}`"))),
        }
    }

    pub fn opt_entity(params: &Value, name: &str) -> Result<Option<Entity>, RpcError> {
        match params.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => entity(params, name).map(Some),
        }
    }

    pub fn string<'a>(params: &'a Value, name: &str) -> Result<&'a str, RpcError> {
        match params.get(name) {
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(RpcError::params(format!("`{name}` must be a string"))),
            None => Err(RpcError::params(format!("missing `{name}`"))),
        }
    }

    pub fn strings(params: &Value, name: &str) -> Result<Option<Vec<String>>, RpcError> {
        match params.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| RpcError::params(format!("`{name}` must be a list of names"))),
            Some(_) => Err(RpcError::params(format!("`{name}` must be a list of names"))),
        }
    }

    pub fn opt_string(params: &Value, name: &str) -> Result<Option<String>, RpcError> {
        match params.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => string(params, name).map(|s| Some(s.to_owned())),
        }
    }

    pub fn uint(params: &Value, name: &str, default: u64, max: u64) -> Result<u64, RpcError> {
        match params.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => match v.as_u64() {
                Some(n) if n <= max => Ok(n),
                _ => Err(RpcError::params(format!("`{name}` must be an integer from 0 to {max}"))),
            },
        }
    }

    /// An integer from `min` to `max` (`default` when absent).
    pub fn uint_in(params: &Value, name: &str, default: u64, min: u64, max: u64) -> Result<u64, RpcError> {
        match params.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => match v.as_u64() {
                Some(n) if (min..=max).contains(&n) => Ok(n),
                _ => Err(RpcError::params(format!("`{name}` must be an integer from {min} to {max}"))),
            },
        }
    }

    pub fn boolean(params: &Value, name: &str) -> Result<bool, RpcError> {
        match params.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(RpcError::params(format!("`{name}` must be true or false"))),
        }
    }
}
