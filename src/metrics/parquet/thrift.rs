//! The Thrift compact protocol, writing only: what Parquet's page headers and file footer
//! are serialised with (Parquet format, "Metadata" and `parquet.thrift`; Thrift's
//! `thrift-compact-protocol.md`).
//!
//! A struct is a sequence of fields, each a header byte (the field-id delta from the previous
//! field in its high nibble, the wire type in the low one) and its value, ended by a stop byte
//! (0). Integers are zigzag varints, binaries a varint length and the bytes, lists a header
//! (size in the high nibble when below 15) then the elements. Booleans that are fields carry
//! their value in the wire type. Fields must be written in increasing id order, which every
//! caller here does, so only the last id of each open struct is kept.

/// Wire types of the compact protocol.
const TRUE: u8 = 1;
const FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const BINARY: u8 = 8;
const LIST: u8 = 9;
pub const STRUCT: u8 = 12;
/// The element type of a list of i32 (Parquet enums).
pub const LIST_I32: u8 = I32;
/// The element type of a list of binaries (strings).
pub const LIST_BINARY: u8 = BINARY;

/// Serialises one Thrift message (a page header or the file footer) into `out`.
pub struct Writer<'a> {
    out: &'a mut Vec<u8>,
    /// Last field id of each open struct, innermost last.
    last: Vec<i16>,
}

impl<'a> Writer<'a> {
    /// A writer whose first `begin` opens the top-level struct.
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        Self { out, last: Vec::new() }
    }

    fn varint(&mut self, v: u64) {
        super::hybrid::varint(self.out, v);
    }

    fn zigzag(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }

    fn field(&mut self, id: i16, wire: u8) {
        let last = self.last.last_mut().expect("a field inside a struct");
        let delta = id - *last;
        *last = id;
        if (1..=15).contains(&delta) {
            self.out.push(((delta as u8) << 4) | wire);
        } else {
            self.out.push(wire);
            self.zigzag(i64::from(id));
        }
    }

    /// Opens a struct: the top-level one, or (after [`Writer::field_struct`] or as a list
    /// element) a nested one.
    pub fn begin(&mut self) {
        self.last.push(0);
    }

    /// Closes the innermost struct.
    pub fn end(&mut self) {
        self.out.push(0);
        self.last.pop();
    }

    /// Field `id` is a struct: call [`Writer::begin`]'s fields, then [`Writer::end`].
    pub fn field_struct(&mut self, id: i16) {
        self.field(id, STRUCT);
        self.begin();
    }

    pub fn i16(&mut self, id: i16, v: i16) {
        self.field(id, I16);
        self.zigzag(i64::from(v));
    }

    pub fn i32(&mut self, id: i16, v: i32) {
        self.field(id, I32);
        self.zigzag(i64::from(v));
    }

    pub fn i64(&mut self, id: i16, v: i64) {
        self.field(id, I64);
        self.zigzag(v);
    }

    /// An i8 field (Thrift `byte`).
    pub fn i8(&mut self, id: i16, v: i8) {
        self.field(id, BYTE);
        self.out.push(v as u8);
    }

    pub fn bool(&mut self, id: i16, v: bool) {
        self.field(id, if v { TRUE } else { FALSE });
    }

    pub fn binary(&mut self, id: i16, v: &[u8]) {
        self.field(id, BINARY);
        self.raw_binary(v);
    }

    fn raw_binary(&mut self, v: &[u8]) {
        self.varint(v.len() as u64);
        self.out.extend_from_slice(v);
    }

    /// Field `id` is a list of `len` elements of wire type `elem`; the elements follow (for
    /// structs: `begin`, fields, `end` each).
    pub fn list(&mut self, id: i16, elem: u8, len: usize) {
        self.field(id, LIST);
        if len < 15 {
            self.out.push(((len as u8) << 4) | elem);
        } else {
            self.out.push(0xF0 | elem);
            self.varint(len as u64);
        }
    }

    /// An element of a list of i32.
    pub fn elem_i32(&mut self, v: i32) {
        self.zigzag(i64::from(v));
    }

    /// An element of a list of binaries.
    pub fn elem_binary(&mut self, v: &[u8]) {
        self.raw_binary(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_as_the_compact_protocol_specifies() {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out);
        w.begin();
        w.i32(1, 3); // delta 1, i32: 0x15, zigzag(3) = 6
        w.i64(3, -1); // delta 2, i64: 0x26, zigzag(-1) = 1
        w.bool(4, true); // delta 1, true: 0x11
        w.binary(20, b"ab"); // delta 16: long form 0x08, zigzag(20) = 40, len 2
        w.list(21, LIST_I32, 2);
        w.elem_i32(0);
        w.elem_i32(300); // zigzag 600 = 0xD8 0x04
        w.field_struct(22);
        w.i8(1, 7);
        w.end();
        w.end();
        assert_eq!(
            out,
            [0x15, 6, 0x26, 1, 0x11, 0x08, 40, 2, b'a', b'b', 0x19, 0x25, 0, 0xD8, 0x04, 0x1C, 0x13, 7, 0, 0]
        );
    }

    #[test]
    fn long_lists_put_their_size_after_the_header() {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out);
        w.begin();
        w.list(1, LIST_BINARY, 20);
        assert_eq!(out, [0x19, 0xF8, 20]);
    }
}
