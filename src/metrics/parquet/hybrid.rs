//! The RLE / bit-packing hybrid encoding (Parquet format, "Encodings": "Run Length Encoding /
//! Bit-Packing Hybrid (RLE = 3)"), used here for definition levels and dictionary indices.
//!
//! The stream is a sequence of runs. An RLE run is `varint(count << 1)` then the value in
//! `ceil(bit_width / 8)` little-endian bytes; a bit-packed run is `varint(groups << 1 | 1)`
//! then `groups` groups of 8 values, each `bit_width` bits, packed least significant bit
//! first. Only the last bit-packed group may hold fewer than 8 real values (padded with
//! zeros): readers stop at the page's value count.

/// Values repeated at least this many times (from a group boundary) become an RLE run; below
/// it, bit-packing them is as small.
const MIN_RUN: usize = 8;

/// ULEB128 (the varint of run headers and of Thrift's compact protocol).
pub fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The bits needed for values up to `max` (at least 1, so that a one-entry dictionary still
/// writes one bit per index as every reader expects).
pub fn bit_width(max: u32) -> u8 {
    (32 - max.leading_zeros()).max(1) as u8
}

/// Appends `values` (each below `1 << bit_width`, `bit_width` ≤ 32) to `out`, hybrid-encoded.
pub fn encode(out: &mut Vec<u8>, values: &[u32], bit_width: u8) {
    let mut packed_from = 0; // first value of the pending bit-packed run
    let mut i = 0;
    while i < values.len() {
        let v = values[i];
        let run = values[i..].iter().take_while(|&&x| x == v).count();
        if run >= MIN_RUN {
            pack(out, &values[packed_from..i], bit_width);
            rle(out, v, run, bit_width);
            i += run;
            packed_from = i;
        } else {
            // A whole group of 8 joins the pending bit-packed run.
            i = (i + 8).min(values.len());
        }
    }
    pack(out, &values[packed_from..], bit_width);
}

fn rle(out: &mut Vec<u8>, value: u32, count: usize, bit_width: u8) {
    varint(out, (count as u64) << 1);
    let bytes = usize::from(bit_width).div_ceil(8);
    out.extend_from_slice(&value.to_le_bytes()[..bytes]);
}

/// One bit-packed run of `values` (the last group padded with zeros).
fn pack(out: &mut Vec<u8>, values: &[u32], bit_width: u8) {
    if values.is_empty() {
        return;
    }
    let groups = values.len().div_ceil(8);
    varint(out, ((groups as u64) << 1) | 1);
    let width = u32::from(bit_width);
    let start = out.len();
    out.resize(start + groups * width as usize, 0);
    let bytes = &mut out[start..];
    // Accumulate bits little-endian and flush whole bytes.
    let (mut acc, mut bits, mut at) = (0u64, 0u32, 0usize);
    for &v in values {
        acc |= u64::from(v) << bits;
        bits += width;
        while bits >= 8 {
            bytes[at] = acc as u8;
            at += 1;
            acc >>= 8;
            bits -= 8;
        }
    }
    if bits > 0 {
        bytes[at] = acc as u8;
    }
}

/// Definition levels of an optional column (0 null, 1 present) from its validity, as a
/// page's level section: the hybrid stream of bit width 1 after its 4-byte little-endian
/// length (Parquet format, "Data Pages": levels of a data page v1 are length-prefixed).
pub fn def_levels(out: &mut Vec<u8>, valid: &[bool]) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    if valid.iter().all(|&v| v) {
        if !valid.is_empty() {
            rle(out, 1, valid.len(), 1);
        }
    } else {
        let levels: Vec<u32> = valid.iter().map(|&v| u32::from(v)).collect();
        encode(out, &levels, 1);
    }
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// Decodes `n` values of width `bit_width` (≤ 32) from a hybrid stream (the reader's side;
/// bytes after the `n`th value are ignored). Corrupt or short input is an error, not a panic.
pub fn decode(bytes: &[u8], bit_width: u8, n: usize) -> Result<Vec<u32>, String> {
    if bit_width > 32 {
        return Err(format!("bit width {bit_width} is over 32"));
    }
    let width = usize::from(bit_width);
    let mut out = Vec::with_capacity(n.min(1 << 20));
    let mut at = 0usize;
    let short = |what: &str| format!("hybrid stream truncated in {what} (wanted {n} values)");
    while out.len() < n {
        let mut h = 0u64;
        let mut shift = 0;
        loop {
            let b = *bytes.get(at).ok_or_else(|| short("a run header"))?;
            at += 1;
            if shift >= 64 {
                return Err("hybrid run header longer than 10 bytes".into());
            }
            h |= u64::from(b & 0x7F) << shift;
            shift += 7;
            if b < 0x80 {
                break;
            }
        }
        let left = n - out.len();
        if h & 1 == 0 {
            let w = width.div_ceil(8);
            let b = bytes.get(at..at + w).ok_or_else(|| short("an RLE value"))?;
            at += w;
            let mut le = [0u8; 4];
            le[..w].copy_from_slice(b);
            let count = usize::try_from(h >> 1).unwrap_or(usize::MAX).min(left);
            if count == 0 {
                return Err("hybrid stream has an empty RLE run".into());
            }
            out.extend(std::iter::repeat_n(u32::from_le_bytes(le), count));
        } else {
            let groups = usize::try_from(h >> 1).map_err(|_| short("a bit-packed run"))?;
            let len = groups.checked_mul(width).ok_or_else(|| short("a bit-packed run"))?;
            let b = bytes.get(at..).filter(|b| b.len() >= len).ok_or_else(|| short("a bit-packed run"))?;
            at += len;
            let count = groups.saturating_mul(8).min(left);
            let (mut acc, mut bits, mut k) = (0u64, 0usize, 0usize);
            let mask = if width == 32 { u64::from(u32::MAX) } else { (1u64 << width) - 1 };
            for _ in 0..count {
                while bits < width {
                    acc |= u64::from(b[k]) << bits;
                    k += 1;
                    bits += 8;
                }
                out.push((acc & mask) as u32);
                acc >>= width;
                bits -= width;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A straightforward decoder, to check the encoder against.
    fn decode(mut bytes: &[u8], bit_width: u8, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let read_varint = |b: &mut &[u8]| {
            let (mut v, mut shift) = (0u64, 0);
            loop {
                let byte = b[0];
                *b = &b[1..];
                v |= u64::from(byte & 0x7F) << shift;
                shift += 7;
                if byte < 0x80 {
                    return v;
                }
            }
        };
        while out.len() < n {
            let h = read_varint(&mut bytes);
            if h & 1 == 0 {
                let w = usize::from(bit_width).div_ceil(8);
                let mut le = [0u8; 4];
                le[..w].copy_from_slice(&bytes[..w]);
                bytes = &bytes[w..];
                out.extend(std::iter::repeat_n(u32::from_le_bytes(le), (h >> 1) as usize));
            } else {
                let count = (h >> 1) as usize * 8;
                let mut bit = 0usize;
                for _ in 0..count {
                    let mut v = 0u32;
                    for k in 0..usize::from(bit_width) {
                        v |= u32::from((bytes[(bit + k) / 8] >> ((bit + k) % 8)) & 1) << k;
                    }
                    bit += usize::from(bit_width);
                    out.push(v);
                }
                bytes = &bytes[(count * usize::from(bit_width)) / 8..];
            }
        }
        assert!(bytes.is_empty(), "{} bytes left", bytes.len());
        out.truncate(n);
        out
    }

    #[test]
    fn round_trips_runs_and_mixtures() {
        let mut cases: Vec<(Vec<u32>, u8)> = vec![
            (vec![], 1),
            (vec![5; 1000], 3),
            ((0..37).collect(), 6),
            ((0..100).map(|i| if i % 3 == 0 { 1 } else { 0 }).collect(), 1),
            ([vec![1, 2, 3], vec![7; 20], vec![0, 1], vec![4; 9]].concat(), 3),
            ((0..5000u32).map(|i| i.wrapping_mul(2_654_435_761u32) >> 12).collect(), 20),
            (vec![u32::MAX; 3], 32),
        ];
        cases.push(((0..64).map(|i| i / 16).collect(), bit_width(3)));
        for (values, w) in cases {
            let mut out = Vec::new();
            encode(&mut out, &values, w);
            assert_eq!(decode(&out, w, values.len()), values, "width {w}");
            assert_eq!(super::decode(&out, w, values.len()).unwrap(), values, "width {w}");
            if !values.is_empty() {
                for cut in 0..out.len() {
                    assert!(super::decode(&out[..cut], w, values.len()).is_err(), "cut {cut}");
                }
            }
        }
    }

    #[test]
    fn widths_and_levels() {
        assert_eq!((bit_width(0), bit_width(1), bit_width(2), bit_width(255), bit_width(256)), (1, 1, 2, 8, 9));
        let mut out = Vec::new();
        def_levels(&mut out, &[true; 10]);
        assert_eq!(out, [2, 0, 0, 0, 20, 1]);
        let valid: Vec<bool> = (0..19).map(|i| i % 4 != 1).collect();
        let mut out = Vec::new();
        def_levels(&mut out, &valid);
        let len = u32::from_le_bytes(out[..4].try_into().unwrap()) as usize;
        assert_eq!(len, out.len() - 4);
        let levels: Vec<bool> = decode(&out[4..], 1, 19).into_iter().map(|l| l == 1).collect();
        assert_eq!(levels, valid);
    }
}
