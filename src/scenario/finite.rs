//! Every number of a scenario is finite: a walk over its serialised form that names each
//! `inf` or `NaN` by its field path (`panda.tasks[0].arrival.end_s`).
//!
//! RON reads `inf` and `NaN` as floats, but they mean nothing as a time, a rate or a share, and
//! `--set` carries the scenario through JSON, where they have no spelling (they would come back
//! as `null`, "invalid type: null" for every later `--set`). The field checks of
//! [`validate`](super::validate) refuse most of them with a range; this walk catches the fields
//! that have no range (a bound only compared with another, an optional limit) so that no
//! non-finite value is ever accepted. Paths use validation's style: `[i]` for list elements,
//! `.name` for struct fields and map keys, a struct variant's fields directly under its
//! field (`arrival.end_s`), a newtype variant by its name (`pilot_wait.Fixed`).

use serde::Serialize;
use serde::ser;

/// The paths of the non-finite numbers of `value`, in field order.
pub fn non_finite_paths<T: Serialize>(value: &T) -> Vec<String> {
    let mut w = Walker { path: String::new(), found: Vec::new() };
    // The walker never fails (its error type exists only to satisfy serde).
    let _ = value.serialize(&mut w);
    w.found
}

struct Walker {
    path: String,
    found: Vec<String>,
}

#[derive(Debug)]
struct Never;

impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("unreachable")
    }
}

impl std::error::Error for Never {}

impl ser::Error for Never {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Never
    }
}

impl Walker {
    /// Serialise `v` with `seg` appended to the path.
    fn nested<T: Serialize + ?Sized>(&mut self, seg: &str, v: &T) -> Result<(), Never> {
        let len = self.path.len();
        if !seg.starts_with('[') && !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(seg);
        let r = v.serialize(&mut *self);
        self.path.truncate(len);
        r
    }

    fn float(&mut self, v: f64) -> Result<(), Never> {
        if !v.is_finite() {
            self.found.push(self.path.clone());
        }
        Ok(())
    }
}

/// A list's or a map's state: the next index, or the last key written.
struct Compound<'a> {
    w: &'a mut Walker,
    index: usize,
    key: String,
}

macro_rules! ignore {
    ($($f:ident: $t:ty),*) => {
        $(fn $f(self, _: $t) -> Result<(), Never> { Ok(()) })*
    };
}

impl<'a> ser::Serializer for &'a mut Walker {
    type Ok = ();
    type Error = Never;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    ignore!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_char: char,
        serialize_str: &str, serialize_bytes: &[u8]);

    fn serialize_f32(self, v: f32) -> Result<(), Never> {
        self.float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Never> {
        self.float(v)
    }
    fn serialize_none(self) -> Result<(), Never> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Never> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Never> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Never> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Never> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<(), Never> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Never> {
        self.nested(variant, v)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a>, Never> {
        Ok(Compound { w: self, index: 0, key: String::new() })
    }
    fn serialize_tuple(self, _: usize) -> Result<Compound<'a>, Never> {
        self.serialize_seq(None)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Never> {
        self.serialize_seq(None)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Never> {
        Ok(Compound { w: self, index: 0, key: variant.to_string() })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a>, Never> {
        self.serialize_seq(None)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Never> {
        self.serialize_seq(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Never> {
        self.serialize_seq(None)
    }
}

impl Compound<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Never> {
        let seg = format!("{}[{}]", self.key, self.index);
        self.index += 1;
        self.w.nested(&seg, v)
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Never;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Never> {
        self.element(v)
    }
    fn end(self) -> Result<(), Never> {
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Never;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Never> {
        self.element(v)
    }
    fn end(self) -> Result<(), Never> {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Never;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Never> {
        self.element(v)
    }
    fn end(self) -> Result<(), Never> {
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Never;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Never> {
        self.element(v)
    }
    fn end(self) -> Result<(), Never> {
        Ok(())
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Never;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), Never> {
        self.key = match serde_json::to_value(k) {
            Ok(serde_json::Value::String(s)) => s,
            Ok(other) => other.to_string(),
            Err(_) => String::from("?"),
        };
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Never> {
        let key = std::mem::take(&mut self.key);
        self.w.nested(&key, v)
    }
    fn end(self) -> Result<(), Never> {
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Never;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, name: &'static str, v: &T) -> Result<(), Never> {
        self.w.nested(name, v)
    }
    fn end(self) -> Result<(), Never> {
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Never;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, name: &'static str, v: &T) -> Result<(), Never> {
        self.w.nested(name, v)
    }
    fn end(self) -> Result<(), Never> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_each_non_finite_number_by_its_path() {
        let mut s = crate::scenario::quickstart().scenario;
        s.sites[1].ces[0].cpu_power = f64::NAN;
        s.workload[0].arrival = crate::workload::config::Arrival::Spread { start_s: 0.0, end_s: f64::INFINITY };
        s.sites[0].ces[0].pilot_wait = crate::engine::distribution::Distribution::Fixed(f64::NEG_INFINITY);
        assert_eq!(
            non_finite_paths(&s),
            ["sites[0].ces[0].pilot_wait.Fixed", "sites[1].ces[0].cpu_power", "workload[0].arrival.end_s"]
        );
        assert!(non_finite_paths(&crate::scenario::quickstart().scenario).is_empty());
        let map: std::collections::BTreeMap<String, Vec<f64>> = [("a b".to_string(), vec![1.0, f64::NAN])].into();
        assert_eq!(non_finite_paths(&map), ["a b[1]"]);
    }
}
