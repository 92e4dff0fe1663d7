//! Reading one column chunk (the [`super::read`] side of [`super::chunk`]): its optional
//! dictionary page and its data pages (v1), each header a Thrift `PageHeader`, each body
//! decompressed, then definition levels and values decoded and appended to the column.

use super::read::{Data, Kind, Leaf, decompress};
use super::thrift_decode::decode_struct;
use super::{chunk::PLAIN, hybrid, thrift_decode::Struct};

/// `PLAIN_DICTIONARY`, the older name of dictionary indices in data pages.
const PLAIN_DICTIONARY: i64 = 2;
const RLE_DICTIONARY: i64 = super::chunk::RLE_DICTIONARY as i64;

fn int(s: &Struct, id: i16, what: &str) -> Result<i64, String> {
    s.need_int(id, what)
}

fn offset(v: i64, len: usize, what: &str) -> Result<usize, String> {
    usize::try_from(v).ok().filter(|&o| o <= len).ok_or_else(|| format!("{what} {v} is outside the file"))
}

/// Appends the values of the column chunk described by `meta` (`ColumnMetaData`) to `data`.
pub fn chunk(bytes: &[u8], leaf: &Leaf, meta: &Struct, data: &mut Data) -> Result<(), String> {
    let codec = int(meta, 4, "codec")?;
    let values = usize::try_from(int(meta, 5, "num_values")?).map_err(|_| "negative num_values".to_string())?;
    let start = match meta.int(11) {
        Some(d) => d,
        None => int(meta, 9, "data_page_offset")?,
    };
    let mut at = offset(start, bytes.len(), "page offset")?;
    let end = bytes.len().saturating_sub(8);
    let mut dict: Option<Vec<String>> = None;
    let mut read = 0usize;
    while read < values {
        if at >= end {
            return Err(format!("pages end after {read} of {values} values (truncated?)"));
        }
        let (header, used) = decode_struct(&bytes[at..end]).map_err(|m| format!("page header at byte {at}: {m}"))?;
        at += used;
        let size = |id, what| {
            usize::try_from(int(&header, id, what)?).map_err(|_| format!("negative {what} in the page at byte {at}"))
        };
        let (raw, packed) = (size(2, "uncompressed_page_size")?, size(3, "compressed_page_size")?);
        let body = bytes.get(at..at + packed).filter(|_| at + packed <= end);
        let body = body.ok_or_else(|| format!("page at byte {at} of {packed} bytes runs past the data"))?;
        at += packed;
        match int(&header, 1, "page type")? {
            0 => {
                let h = header.strukt(5).ok_or("data page without its DataPageHeader")?;
                let n = usize::try_from(int(h, 1, "num_values")?).map_err(|_| "negative page num_values")?;
                if n > values - read {
                    return Err(format!("a page of {n} values after {read} of the chunk's {values}"));
                }
                let body = decompress(codec, body, raw)?;
                page(&body, leaf, h, n, dict.as_deref(), data)?;
                read += n;
            }
            2 => {
                if leaf.kind != Kind::Str {
                    return Err(format!("a dictionary page in a {:?} column (only strings are read so)", leaf.kind));
                }
                let h = header.strukt(7).ok_or("dictionary page without its DictionaryPageHeader")?;
                let n = usize::try_from(int(h, 1, "num_values")?).map_err(|_| "negative dictionary size")?;
                let body = decompress(codec, body, raw)?;
                dict = Some(byte_arrays(&body, n)?);
            }
            1 => {} // an index page: nothing to read
            t => return Err(format!("page type {t} at byte {at} (only data pages v1 and dictionaries are read)")),
        }
    }
    if read != values {
        return Err(format!("pages hold {read} values, the chunk says {values}"));
    }
    Ok(())
}

/// `n` PLAIN byte arrays (4-byte little-endian length, then the bytes), as UTF-8 texts.
fn byte_arrays(body: &[u8], n: usize) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(n.min(body.len() / 4));
    let mut at = 0usize;
    for _ in 0..n {
        let len = body.get(at..at + 4).ok_or("byte array length past the page")?;
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        at += 4;
        let b = body.get(at..).and_then(|b| b.get(..len)).ok_or("byte array past the page")?;
        at += len;
        out.push(String::from_utf8(b.to_vec()).map_err(|_| "a string is not UTF-8")?);
    }
    Ok(out)
}

/// Decodes a data page of `n` rows and appends its values.
fn page(
    body: &[u8],
    leaf: &Leaf,
    h: &Struct,
    n: usize,
    dict: Option<&[String]>,
    data: &mut Data,
) -> Result<(), String> {
    let (valid, at) = if leaf.optional {
        let len = body.get(..4).ok_or("page too short for its definition levels")?;
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        let levels = body.get(4..).and_then(|b| b.get(..len)).ok_or("definition levels past the page")?;
        let levels = hybrid::decode(levels, 1, n).map_err(|m| format!("definition levels: {m}"))?;
        (levels.into_iter().map(|l| l == 1).collect::<Vec<_>>(), 4 + len)
    } else {
        (vec![true; n], 0)
    };
    let present = valid.iter().filter(|&&v| v).count();
    let encoding = int(h, 2, "encoding")?;
    let rest = &body[at..];
    macro_rules! plain_numbers {
        ($v:expr, $t:ty) => {{
            if encoding != i64::from(PLAIN) {
                return Err(format!("{:?} values in encoding {encoding} (only PLAIN is read)", leaf.kind));
            }
            let size = std::mem::size_of::<$t>();
            let need = present * size;
            let b = rest
                .get(..need)
                .ok_or_else(|| format!("{present} values need {need} bytes, the page has {}", rest.len()))?;
            let mut it = b.chunks_exact(size).map(|c| <$t>::from_le_bytes(c.try_into().expect("size")));
            $v.extend(valid.iter().map(|&ok| if ok { it.next() } else { None }));
        }};
    }
    match data {
        Data::U32(v) => plain_numbers!(v, u32),
        Data::U64(v) => plain_numbers!(v, u64),
        Data::F64(v) => plain_numbers!(v, f64),
        Data::Bool(v) => {
            if encoding != i64::from(PLAIN) {
                return Err(format!("booleans in encoding {encoding} (only PLAIN is read)"));
            }
            let b = rest.get(..present.div_ceil(8)).ok_or("booleans past the page")?;
            let mut k = 0;
            v.extend(valid.iter().map(|&ok| {
                ok.then(|| {
                    let x = (b[k / 8] >> (k % 8)) & 1 == 1;
                    k += 1;
                    x
                })
            }));
        }
        Data::Str(v) => {
            let texts: Vec<String> = match encoding {
                RLE_DICTIONARY | PLAIN_DICTIONARY => {
                    let dict = dict.ok_or("dictionary indices without a dictionary page")?;
                    let width = *rest.first().ok_or("data page without its indices' bit width")?;
                    let idx = hybrid::decode(&rest[1..], width, present).map_err(|m| format!("indices: {m}"))?;
                    let mut out = Vec::with_capacity(present);
                    for i in idx {
                        out.push(
                            dict.get(i as usize)
                                .ok_or_else(|| format!("index {i} past the {} texts", dict.len()))?
                                .clone(),
                        );
                    }
                    out
                }
                e if e == i64::from(PLAIN) => byte_arrays(rest, present)?,
                e => return Err(format!("strings in encoding {e} (only dictionary and PLAIN are read)")),
            };
            let mut it = texts.into_iter();
            v.extend(valid.iter().map(|&ok| if ok { it.next() } else { None }));
        }
    }
    Ok(())
}
