//! One column chunk (the values of one column in one row group): its optional dictionary page
//! and its data pages, each Snappy-compressed (Parquet format, "Column chunks", "Data Pages",
//! "Dictionary Pages").
//!
//! Every column is OPTIONAL (as polars writes them), so each data page is, in the data page
//! v1 layout, the definition levels (length-prefixed hybrid, bit width 1) followed by the
//! non-null values: PLAIN for numbers and booleans, dictionary indices (RLE_DICTIONARY: one
//! byte of bit width, then the hybrid stream) for strings, whose distinct texts go once into a
//! PLAIN dictionary page in order of first appearance — deterministic whatever the hash seed.

use std::collections::HashMap;

use super::{Error, Values, hybrid, thrift};

/// Parquet's `Encoding` and `PageType` values (`parquet.thrift`).
pub const PLAIN: i32 = 0;
pub const RLE: i32 = 3;
pub const RLE_DICTIONARY: i32 = 8;
const DATA_PAGE: i32 = 0;
const DICTIONARY_PAGE: i32 = 2;

/// Where a written column chunk is and what it holds, for its `ColumnMetaData`.
pub struct Chunk {
    pub encodings: Vec<i32>,
    pub num_values: i64,
    pub uncompressed: i64,
    pub compressed: i64,
    pub data_page_offset: i64,
    pub dictionary_page_offset: Option<i64>,
}

/// Compresses page bodies and appends pages to the file.
pub struct Pages<'a> {
    pub out: &'a mut Vec<u8>,
    snappy: snap::raw::Encoder,
    /// Reused page body, and its compressed form.
    body: Vec<u8>,
    compressed: Vec<u8>,
    header: Vec<u8>,
}

impl<'a> Pages<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        Self { out, snappy: snap::raw::Encoder::new(), body: Vec::new(), compressed: Vec::new(), header: Vec::new() }
    }

    /// Compresses `self.body` and appends it after its page header (`PageHeader`: type, sizes,
    /// then the header of its kind, written by `write_kind`); returns the page's size, header
    /// included, uncompressed and compressed.
    fn flush(&mut self, page_type: i32, write_kind: impl FnOnce(&mut thrift::Writer)) -> Result<(i64, i64), Error> {
        self.compressed.resize(snap::raw::max_compress_len(self.body.len()), 0);
        let n = self.snappy.compress(&self.body, &mut self.compressed).map_err(Error::Compress)?;
        let compressed = &self.compressed[..n];
        let size = |n: usize| i32::try_from(n).map_err(|_| Error::PageTooLarge(n));
        self.header.clear();
        let mut w = thrift::Writer::new(&mut self.header);
        w.begin();
        w.i32(1, page_type);
        w.i32(2, size(self.body.len())?);
        w.i32(3, size(compressed.len())?);
        write_kind(&mut w);
        w.end();
        self.out.extend_from_slice(&self.header);
        self.out.extend_from_slice(compressed);
        let h = self.header.len() as i64;
        Ok((h + self.body.len() as i64, h + compressed.len() as i64))
    }
}

/// The dictionary of a string column's rows `lo..hi`: distinct texts in order of first
/// appearance and, for each non-null row, its index.
fn dictionary<'v>(values: &'v Values, lo: usize, hi: usize) -> Result<(Vec<&'v str>, Vec<u32>), Error> {
    let mut texts: Vec<&str> = Vec::new();
    let mut indices = Vec::with_capacity(hi - lo);
    match values {
        Values::Str(v) => {
            let mut seen: HashMap<&str, u32> = HashMap::new();
            for s in v[lo..hi].iter().flatten() {
                let next = texts.len() as u32;
                let i = *seen.entry(s).or_insert_with(|| {
                    texts.push(s);
                    next
                });
                indices.push(i);
            }
        }
        Values::Coded { texts: all, codes } => {
            // Each code's dictionary index, found once per distinct code (texts may repeat:
            // two streams of one owner).
            let mut map = vec![u32::MAX; all.len()];
            let mut seen: HashMap<&str, u32> = HashMap::new();
            for &c in codes[lo..hi].iter().flatten() {
                let slot = map.get_mut(c as usize).ok_or(Error::CodeOutOfRange { code: c, texts: all.len() })?;
                if *slot == u32::MAX {
                    let text = all[c as usize];
                    let next = texts.len() as u32;
                    *slot = *seen.entry(text).or_insert_with(|| {
                        texts.push(text);
                        next
                    });
                }
                indices.push(*slot);
            }
        }
        _ => unreachable!("dictionary of a string column"),
    }
    Ok((texts, indices))
}

/// Appends the PLAIN encoding of rows `lo..hi`'s non-null values (numbers and booleans).
fn plain(body: &mut Vec<u8>, values: &Values, lo: usize, hi: usize) {
    match values {
        Values::U32(v) => v[lo..hi].iter().flatten().for_each(|x| body.extend_from_slice(&x.to_le_bytes())),
        Values::U64(v) => v[lo..hi].iter().flatten().for_each(|x| body.extend_from_slice(&x.to_le_bytes())),
        Values::F64(v) => v[lo..hi].iter().flatten().for_each(|x| body.extend_from_slice(&x.to_le_bytes())),
        Values::Bool(v) => {
            // Bit-packed, least significant bit first (Parquet format, "Plain": BOOLEAN).
            let bits: Vec<bool> = v[lo..hi].iter().flatten().copied().collect();
            body.extend(bits.chunks(8).map(|c| c.iter().enumerate().fold(0u8, |b, (k, &x)| b | (u8::from(x) << k))));
        }
        Values::Str(_) | Values::Coded { .. } => unreachable!("strings are dictionary-encoded"),
    }
}

/// Writes rows `lo..hi` of a column as one column chunk, in pages of `page_rows` rows.
pub fn write(pages: &mut Pages, values: &Values, lo: usize, hi: usize, page_rows: usize) -> Result<Chunk, Error> {
    let start = pages.out.len() as i64;
    let (mut uncompressed, mut compressed) = (0, 0);
    let strings = matches!(values, Values::Str(_) | Values::Coded { .. });
    let dict = if strings { Some(dictionary(values, lo, hi)?) } else { None };
    let mut dictionary_page_offset = None;
    let mut encodings = vec![PLAIN, RLE];
    let mut width = 0;
    if let Some((texts, _)) = &dict {
        dictionary_page_offset = Some(start);
        encodings.push(RLE_DICTIONARY);
        width = hybrid::bit_width(texts.len().saturating_sub(1) as u32);
        pages.body.clear();
        for t in texts {
            pages.body.extend_from_slice(&(t.len() as u32).to_le_bytes());
            pages.body.extend_from_slice(t.as_bytes());
        }
        let n = texts.len() as i32;
        let (u, c) = pages.flush(DICTIONARY_PAGE, |w| {
            w.field_struct(7);
            w.i32(1, n);
            w.i32(2, PLAIN);
            w.end();
        })?;
        uncompressed += u;
        compressed += c;
    }
    let data_page_offset = pages.out.len() as i64;
    let mut next_index = 0; // into the dictionary's indices, which skip nulls
    let mut p = lo;
    while p < hi || (p == lo && lo == hi) {
        let q = (p + page_rows.max(1)).min(hi);
        let valid = validity(values, p, q);
        pages.body.clear();
        hybrid::def_levels(&mut pages.body, &valid);
        if let Some((_, indices)) = &dict {
            let present = valid.iter().filter(|&&v| v).count();
            pages.body.push(width);
            hybrid::encode(&mut pages.body, &indices[next_index..next_index + present], width);
            next_index += present;
        } else {
            plain(&mut pages.body, values, p, q);
        }
        let encoding = if dict.is_some() { RLE_DICTIONARY } else { PLAIN };
        let rows = (q - p) as i32;
        let (u, c) = pages.flush(DATA_PAGE, |w| {
            w.field_struct(5);
            w.i32(1, rows);
            w.i32(2, encoding);
            w.i32(3, RLE);
            w.i32(4, RLE);
            w.end();
        })?;
        uncompressed += u;
        compressed += c;
        if q == hi {
            break;
        }
        p = q;
    }
    Ok(Chunk {
        encodings,
        num_values: (hi - lo) as i64,
        uncompressed,
        compressed,
        data_page_offset,
        dictionary_page_offset,
    })
}

/// Which of rows `lo..hi` hold a value.
fn validity(values: &Values, lo: usize, hi: usize) -> Vec<bool> {
    match values {
        Values::U32(v) => v[lo..hi].iter().map(Option::is_some).collect(),
        Values::U64(v) => v[lo..hi].iter().map(Option::is_some).collect(),
        Values::F64(v) => v[lo..hi].iter().map(Option::is_some).collect(),
        Values::Bool(v) => v[lo..hi].iter().map(Option::is_some).collect(),
        Values::Str(v) => v[lo..hi].iter().map(Option::is_some).collect(),
        Values::Coded { codes, .. } => codes[lo..hi].iter().map(Option::is_some).collect(),
    }
}
