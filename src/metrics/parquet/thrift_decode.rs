//! The Thrift compact protocol, reading: the page headers and file footer of Parquet files
//! (the counterpart of [`super::thrift`], same wire format).
//!
//! A message is decoded into a generic tree of [`Value`]s rather than into typed structs, so
//! every field of every wire type (maps and sets included) is parsed and unknown ones are
//! skipped correctly: a file written by a newer writer with more fields still reads. The
//! caller then picks the fields it needs by id. Corrupt input gives an error, never a panic:
//! lengths are checked against the bytes left and nesting is bounded.

/// A decoded Thrift value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    /// byte, i16, i32 and i64.
    Int(i64),
    Double(f64),
    Binary(Vec<u8>),
    /// Lists and sets.
    List(Vec<Value>),
    Map(Vec<(Value, Value)>),
    Struct(Struct),
}

/// A struct's fields in wire order: `(field id, value)`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Struct(pub Vec<(i16, Value)>);

/// Why a message could not be decoded.
pub type Error = String;

/// Structs, lists and maps nested deeper than this are refused (no Parquet message nests more
/// than a few levels; a corrupt one must not exhaust the stack).
const MAX_DEPTH: usize = 32;

impl Struct {
    pub fn get(&self, id: i16) -> Option<&Value> {
        self.0.iter().find(|(i, _)| *i == id).map(|(_, v)| v)
    }

    /// Integer field `id`, if present and an integer.
    pub fn int(&self, id: i16) -> Option<i64> {
        match self.get(id)? {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// Integer field `id`, required: `what` names it in the error.
    pub fn need_int(&self, id: i16, what: &str) -> Result<i64, Error> {
        self.int(id).ok_or_else(|| format!("{what} (field {id}) is missing or not an integer"))
    }

    pub fn binary(&self, id: i16) -> Option<&[u8]> {
        match self.get(id)? {
            Value::Binary(v) => Some(v),
            _ => None,
        }
    }

    pub fn strukt(&self, id: i16) -> Option<&Struct> {
        match self.get(id)? {
            Value::Struct(s) => Some(s),
            _ => None,
        }
    }

    pub fn list(&self, id: i16) -> Option<&[Value]> {
        match self.get(id)? {
            Value::List(v) => Some(v),
            _ => None,
        }
    }
}

/// Decodes one struct from the start of `bytes`; returns it and the bytes it took.
pub fn decode_struct(bytes: &[u8]) -> Result<(Struct, usize), Error> {
    let mut r = Reader { bytes, at: 0 };
    let s = r.strukt(0)?;
    Ok((s, r.at))
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, Error> {
        let b = *self.bytes.get(self.at).ok_or_else(|| format!("Thrift message truncated at byte {}", self.at))?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, Error> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(format!("Thrift varint longer than 10 bytes at byte {}", self.at))
    }

    fn zigzag(&mut self) -> Result<i64, Error> {
        let v = self.varint()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// A length that must fit in the bytes left (each element takes at least one byte, or is
    /// a bool element of one byte).
    fn length(&mut self) -> Result<usize, Error> {
        let n = self.varint()?;
        let left = (self.bytes.len() - self.at) as u64;
        if n > left {
            return Err(format!("Thrift length {n} at byte {} is past the {left} bytes left", self.at));
        }
        Ok(n as usize)
    }

    fn take(&mut self, n: usize) -> Result<&[u8], Error> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("Thrift binary of {n} bytes truncated at byte {}", self.at))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn strukt(&mut self, depth: usize) -> Result<Struct, Error> {
        if depth > MAX_DEPTH {
            return Err(format!("Thrift message nested deeper than {MAX_DEPTH} at byte {}", self.at));
        }
        let mut fields = Vec::new();
        let mut last = 0i16;
        loop {
            let h = self.byte()?;
            if h == 0 {
                return Ok(Struct(fields));
            }
            let wire = h & 0x0F;
            let delta = h >> 4;
            let id = if delta == 0 {
                i16::try_from(self.zigzag()?)
                    .map_err(|_| format!("Thrift field id out of range at byte {}", self.at))?
            } else {
                last.wrapping_add(i16::from(delta))
            };
            last = id;
            let v = match wire {
                1 => Value::Bool(true),
                2 => Value::Bool(false),
                _ => self.value(wire, depth + 1)?,
            };
            fields.push((id, v));
        }
    }

    /// A value of wire type `wire` (a bool here is a list or map element: one byte).
    fn value(&mut self, wire: u8, depth: usize) -> Result<Value, Error> {
        Ok(match wire {
            1 | 2 => Value::Bool(self.byte()? == 1),
            3 => Value::Int(i64::from(self.byte()? as i8)),
            4..=6 => Value::Int(self.zigzag()?),
            7 => {
                let b = self.take(8)?;
                Value::Double(f64::from_le_bytes(b.try_into().expect("8 bytes")))
            }
            8 => {
                let n = self.length()?;
                Value::Binary(self.take(n)?.to_vec())
            }
            9 | 10 => {
                let h = self.byte()?;
                let elem = h & 0x0F;
                let n = if h >> 4 == 15 { self.length()? } else { usize::from(h >> 4) };
                if depth > MAX_DEPTH {
                    return Err(format!("Thrift message nested deeper than {MAX_DEPTH} at byte {}", self.at));
                }
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(self.value(elem, depth + 1)?);
                }
                Value::List(v)
            }
            11 => {
                let n = self.length()?;
                let mut v = Vec::with_capacity(n);
                if n > 0 {
                    let kinds = self.byte()?;
                    for _ in 0..n {
                        let k = self.value(kinds >> 4, depth + 1)?;
                        let x = self.value(kinds & 0x0F, depth + 1)?;
                        v.push((k, x));
                    }
                }
                Value::Map(v)
            }
            12 => Value::Struct(self.strukt(depth)?),
            w => return Err(format!("unknown Thrift wire type {w} at byte {}", self.at)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::thrift::{LIST_BINARY, LIST_I32, Writer};
    use super::*;

    #[test]
    fn reads_what_the_writer_writes() {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out);
        w.begin();
        w.i32(1, -3);
        w.i64(3, 1 << 40);
        w.bool(4, true);
        w.binary(20, b"ab");
        w.list(21, LIST_I32, 20);
        (0..20).for_each(|i| w.elem_i32(i * 100));
        w.field_struct(22);
        w.i8(1, -7);
        w.bool(2, false);
        w.end();
        w.list(23, LIST_BINARY, 1);
        w.elem_binary(b"x");
        w.i16(24, 9);
        w.end();
        out.extend_from_slice(b"trailing");
        let (s, used) = decode_struct(&out).unwrap();
        assert_eq!(used, out.len() - 8);
        assert_eq!(s.int(1), Some(-3));
        assert_eq!(s.int(3), Some(1 << 40));
        assert_eq!(s.get(4), Some(&Value::Bool(true)));
        assert_eq!(s.binary(20), Some(&b"ab"[..]));
        assert_eq!(s.list(21).unwrap().len(), 20);
        assert_eq!(s.list(21).unwrap()[19], Value::Int(1900));
        let inner = s.strukt(22).unwrap();
        assert_eq!((inner.int(1), inner.get(2)), (Some(-7), Some(&Value::Bool(false))));
        assert_eq!(s.list(23).unwrap(), [Value::Binary(b"x".to_vec())]);
        assert_eq!(s.int(24), Some(9));
    }

    #[test]
    fn skips_unknown_wire_types_it_knows_how_to_parse() {
        // Field 1: double 1.5; field 2: map<i32, binary> {1: "a"}; field 3: set<bool> {true}; field 4: i32 5.
        let mut b = vec![0x17];
        b.extend_from_slice(&1.5f64.to_le_bytes());
        b.extend_from_slice(&[0x1B, 1, 0x58, 2, 1, b'a', 0x1A, 0x11, 1, 0x15, 10, 0]);
        let (s, _) = decode_struct(&b).unwrap();
        assert_eq!(s.get(1), Some(&Value::Double(1.5)));
        assert_eq!(s.int(4), Some(5));
    }

    #[test]
    fn corrupt_input_is_an_error() {
        for bad in [&[0x15][..], &[0x18, 50, b'a'], &[0x19, 0xF5, 0xFF, 0xFF, 0x7F], &[0x1D], &[0x15, 0x80, 0x80]] {
            assert!(decode_struct(bad).is_err(), "{bad:?}");
        }
        let deep: Vec<u8> = std::iter::repeat_n(0x1C, 100).collect();
        assert!(decode_struct(&deep).unwrap_err().contains("nested"));
        // Every truncation of a good message fails cleanly.
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out);
        w.begin();
        w.binary(1, b"hello");
        w.list(2, LIST_I32, 3);
        (0..3).for_each(|i| w.elem_i32(i));
        w.end();
        for n in 0..out.len() {
            assert!(decode_struct(&out[..n]).is_err());
        }
    }
}
