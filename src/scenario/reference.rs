//! Every field of a scenario file, read from the serde types themselves: the reference of
//! `docs/scenario-reference.md` is generated from [`fields`], so it cannot drift from what the
//! parser accepts (a test regenerates it and compares).
//!
//! [`Tracer`] is a serde `Deserializer` that answers every request of the derived
//! `Deserialize` impls with a stand-in value and records what was asked: a struct's fields (the
//! names serde passes to `deserialize_struct`), an enum's variants, a list's element, a
//! number, a string. An enum yields one variant per pass, so the trace is repeated with each
//! variant chosen in turn until every variant of every enum has been explored.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess, VariantAccess, Visitor,
};

use super::Scenario;

/// One field (or list element, map value, enum variant) of the scenario tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Its path as `--set` writes it: `sites[].ces[].slots`, `factory[].Startd.standby`
    /// (`[]` any element, `<key>` any map key, an enum's variant by its name).
    pub path: String,
    /// What it holds: `number`, `integer`, `text`, `true/false`, `list`, `map`,
    /// `one of: A | B`, a struct's name, with `optional` when it may be left out as `None`.
    pub kind: String,
    /// The Rust type and field it comes from (`Ce.slots`), or the enum and variant
    /// (`FactoryConfig.Startd`), to find its documentation.
    pub source: Option<(&'static str, &'static str)>,
}

/// Every field of [`Scenario`], in the order of the types.
pub fn fields() -> Vec<Field> {
    trace(|d| {
        // A pass fails where a stand-in does not fit (one form of an untagged enum): what it
        // recorded until then stands, and the passes that take the other forms go on.
        let _ = <Scenario as serde::Deserialize>::deserialize(d);
    })
}

/// The trace of one type: `run` deserializes it from the tracer it is given.
fn trace(run: impl Fn(Tracer<'_>)) -> Vec<Field> {
    let mut explored: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut all: Vec<Field> = Vec::new();
    let mut todo: Vec<BTreeMap<String, usize>> = vec![BTreeMap::new()];
    let mut passes = 0;
    while let Some(plan) = todo.pop() {
        passes += 1;
        if passes > 10_000 {
            break; // a recursive type; what was traced stands
        }
        let state = RefCell::new(State { choices: plan.clone(), fields: Vec::new(), enums: Vec::new() });
        run(Tracer { state: &state, path: String::new(), source: None, depth: 0, variant: "", silent: false });
        let state = state.into_inner();
        for f in state.fields {
            if !all.iter().any(|g| g.path == f.path) {
                all.push(f);
            }
        }
        // Every variant of every enum met on this pass gets a pass of its own.
        for (path, variants) in state.enums {
            if !explored.insert(path.clone()) {
                continue;
            }
            for k in 1..variants.len() {
                let mut next = plan.clone();
                next.insert(path.clone(), k);
                todo.push(next);
            }
        }
    }
    tree_order(all)
}

/// Each field right after its parent (children in the order they were met), and the row of a
/// list's element or a map's value folded into its container's kind (`list of Ce`).
fn tree_order(all: Vec<Field>) -> Vec<Field> {
    let index: BTreeMap<&str, usize> = all.iter().enumerate().map(|(i, f)| (f.path.as_str(), i)).collect();
    // Ancestors are the prefixes of a path that end a segment.
    let key = |path: &str| -> Vec<usize> {
        let ends = path.char_indices().filter(|&(_, c)| c == '.' || c == '[').map(|(i, _)| i).chain([path.len()]);
        ends.filter_map(|i| index.get(&path[..i]).copied()).collect()
    };
    let mut order: Vec<(Vec<usize>, usize)> = all.iter().enumerate().map(|(i, f)| (key(&f.path), i)).collect();
    order.sort();
    let mut out: Vec<Field> = Vec::new();
    for (_, i) in order {
        let f = &all[i];
        let container =
            f.path.strip_suffix("[]").map(|p| (p, "list")).or(f.path.strip_suffix(".<key>").map(|p| (p, "map")));
        if let Some((parent, what)) = container
            && let Some(p) = out.iter_mut().rev().find(|g| g.path == parent)
        {
            debug_assert!(p.kind.ends_with(what), "{} is a {}", p.path, p.kind);
            p.kind = format!("{} of {}", p.kind, f.kind);
            continue;
        }
        out.push(f.clone());
    }
    out
}

struct State {
    choices: BTreeMap<String, usize>,
    fields: Vec<Field>,
    /// Enums met: path and variant names.
    enums: Vec<(String, Vec<String>)>,
}

/// Below this nesting a list, map or option is read empty: a recursive type (a gshare's
/// children) ends there instead of failing.
const CUT_DEPTH: u32 = 14;
/// Deepest nesting traced.
const MAX_DEPTH: u32 = 32;

struct Tracer<'s> {
    state: &'s RefCell<State>,
    path: String,
    source: Option<(&'static str, &'static str)>,
    depth: u32,
    /// The enum variant this tracer reads (its struct variant's name).
    variant: &'static str,
    /// Inside a map key or a self-describing value: nothing recorded, no choice explored.
    silent: bool,
}

impl<'s> Tracer<'s> {
    /// The tracer of `segment` below this one (`.name`, `[]`), documented by `source`.
    fn child(&self, segment: &str, source: Option<(&'static str, &'static str)>) -> Result<Tracer<'s>, Stop> {
        if self.depth >= MAX_DEPTH {
            return Err(Stop("too deep".into()));
        }
        let path = match (self.path.is_empty(), segment.starts_with('[')) {
            (true, _) | (false, true) => format!("{}{segment}", self.path),
            (false, false) => format!("{}.{segment}", self.path),
        };
        Ok(Tracer {
            state: self.state,
            path,
            source: source.or(self.source),
            depth: self.depth + 1,
            variant: "",
            silent: self.silent,
        })
    }

    /// Which of `options` this pass takes here (the trace takes each in some pass).
    fn choose(&self, options: &[&str]) -> usize {
        if self.silent {
            return 0;
        }
        let mut st = self.state.borrow_mut();
        st.enums.push((self.path.clone(), options.iter().map(|v| v.to_string()).collect()));
        st.choices.get(&self.path).copied().unwrap_or(0)
    }

    /// Whether a container here would repeat its type below itself (a gshare's `children`):
    /// its last segment is already one of its ancestors'. It is read empty there.
    fn recursive(&self) -> bool {
        let mut segments = self.path.split(['.', '[']).filter(|s| !s.is_empty() && *s != "]");
        let Some(last) = segments.next_back() else { return false };
        self.depth >= CUT_DEPTH || segments.any(|s| s == last)
    }

    /// This tracer, recording nothing below it.
    fn quiet(self) -> Self {
        Tracer { silent: true, ..self }
    }

    /// A map key: traced, but recorded nowhere.
    fn key(&self) -> Tracer<'s> {
        Tracer {
            state: self.state,
            path: String::new(),
            source: None,
            depth: self.depth + 1,
            variant: "",
            silent: true,
        }
    }

    /// Record what this path holds (the first kind stands; `optional` is completed by the next).
    fn record(&self, kind: &str) {
        if self.path.is_empty() || self.silent {
            return;
        }
        let mut st = self.state.borrow_mut();
        match st.fields.iter_mut().find(|f| f.path == self.path) {
            Some(f) if f.kind == "optional" => f.kind = format!("optional {kind}"),
            Some(_) => {}
            None => st.fields.push(Field { path: self.path.clone(), kind: kind.to_string(), source: self.source }),
        }
    }
}

macro_rules! primitive {
    ($($method:ident => $kind:literal, $visit:ident($($value:expr)?);)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
                self.record($kind);
                visitor.$visit($($value)?)
            }
        )*
    };
}

impl<'de> Deserializer<'de> for Tracer<'_> {
    type Error = Stop;

    primitive! {
        deserialize_bool => "true/false", visit_bool(true);
        deserialize_i8 => "integer", visit_i64(1);
        deserialize_i16 => "integer", visit_i64(1);
        deserialize_i32 => "integer", visit_i64(1);
        deserialize_i64 => "integer", visit_i64(1);
        deserialize_u8 => "integer", visit_u64(1);
        deserialize_u16 => "integer", visit_u64(1);
        deserialize_u32 => "integer", visit_u64(1);
        deserialize_u64 => "integer", visit_u64(1);
        deserialize_f32 => "number", visit_f64(1.0);
        deserialize_f64 => "number", visit_f64(1.0);
        deserialize_char => "text", visit_char('x');
        deserialize_str => "text", visit_str("x");
        deserialize_string => "text", visit_str("x");
        deserialize_bytes => "bytes", visit_bytes(b"x");
        deserialize_byte_buf => "bytes", visit_bytes(b"x");
        deserialize_unit => "()", visit_unit();
        deserialize_identifier => "text", visit_str("x");
        deserialize_ignored_any => "any", visit_unit();
    }

    /// A self-describing value (an untagged enum, a JSON value): each of a number, a text, a
    /// list and a map, one per pass.
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        self.record("number, text, list or map");
        if self.depth >= CUT_DEPTH {
            return visitor.visit_f64(1.0);
        }
        match self.choose(&["number", "text", "list", "map"]) {
            0 => visitor.visit_f64(1.0),
            1 => visitor.visit_str("x"),
            2 => visitor.visit_seq(Items(vec![self.child("[]", None)?.quiet()].into_iter())),
            _ => {
                let entries = vec![(self.key(), self.child("<key>", None)?.quiet())];
                visitor.visit_map(Entries { entries: entries.into_iter(), value: None })
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        self.record("optional");
        if self.recursive() {
            return visitor.visit_none();
        }
        visitor.visit_some(self)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, Stop> {
        self.record("()");
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        self.record("list");
        let items = if self.recursive() { Vec::new() } else { vec![self.child("[]", None)?] };
        visitor.visit_seq(Items(items.into_iter()))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Stop> {
        self.record("tuple");
        let items = (0..len).map(|i| self.child(&i.to_string(), None)).collect::<Result<Vec<_>, _>>()?;
        visitor.visit_seq(Items(items.into_iter()))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        self.record("map");
        let entries = if self.recursive() { Vec::new() } else { vec![(self.key(), self.child("<key>", None)?)] };
        visitor.visit_map(Entries { entries: entries.into_iter(), value: None })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        self.record(name);
        let entries = fields
            .iter()
            .map(|f| Ok((Tracer { path: (*f).to_string(), ..self.key() }, self.child(f, Some((name, *f)))?)))
            .collect::<Result<Vec<_>, Stop>>()?;
        visitor.visit_map(Entries { entries: entries.into_iter(), value: None })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        self.record(&format!("one of: {}", variants.join(" | ")));
        let k = self.choose(variants);
        let variant = variants.get(k).copied().ok_or_else(|| Stop("no variant".into()))?;
        visitor.visit_enum(Variant { tracer: self, enum_name: name, variant })
    }
}

/// The elements of a list or tuple.
struct Items<'s>(std::vec::IntoIter<Tracer<'s>>);

impl<'de> SeqAccess<'de> for Items<'_> {
    type Error = Stop;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Stop> {
        self.0.next().map(|t| seed.deserialize(t)).transpose()
    }
}

/// The entries of a map or struct: (key tracer, value tracer). A struct's key tracer carries
/// the field's name as its path, which its key deserializer answers.
struct Entries<'s> {
    entries: std::vec::IntoIter<(Tracer<'s>, Tracer<'s>)>,
    value: Option<Tracer<'s>>,
}

impl<'de> MapAccess<'de> for Entries<'_> {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Stop> {
        let Some((key, value)) = self.entries.next() else { return Ok(None) };
        self.value = Some(value);
        if key.path.is_empty() {
            seed.deserialize(key).map(Some)
        } else {
            let name: de::value::StrDeserializer<'_, Stop> = key.path.as_str().into_deserializer();
            seed.deserialize(name).map(Some)
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Stop> {
        let value = self.value.take().ok_or_else(|| Stop("value before key".into()))?;
        seed.deserialize(value)
    }
}

/// The chosen variant of an enum.
struct Variant<'s> {
    tracer: Tracer<'s>,
    /// The enum's type name and the variant's: where the variant's documentation is.
    enum_name: &'static str,
    variant: &'static str,
}

impl<'de, 's> EnumAccess<'de> for Variant<'s> {
    type Error = Stop;
    type Variant = Tracer<'s>;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Tracer<'s>), Stop> {
        let name: de::value::StrDeserializer<'_, Stop> = self.variant.into_deserializer();
        let value = seed.deserialize(name)?;
        let child = self.tracer.child(self.variant, Some((self.enum_name, self.variant)))?;
        Ok((value, Tracer { variant: self.variant, ..child }))
    }
}

impl<'de> VariantAccess<'de> for Tracer<'_> {
    type Error = Stop;

    fn unit_variant(self) -> Result<(), Stop> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Stop> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Stop> {
        self.deserialize_tuple(len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], visitor: V) -> Result<V::Value, Stop> {
        let name = self.variant;
        self.deserialize_struct(name, fields, visitor)
    }
}

#[derive(Debug)]
struct Stop(String);

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Stop(msg.to_string())
    }
}
