//! The PNG encoder of the charts: 8-bit RGB, every row "Up"-filtered, one zlib stream at
//! deflate level 1.
//!
//! Why our own: the `png` crate (through `image`) offers only its default level (6), which
//! spent a third of a chart's time in deflate, and its "fast" mode (`fdeflate`), whose files
//! are 4.5 times larger. miniz_oxide's level 1 sits between them. Measured on two sweep
//! charts: 1.8 ms and 87–91 kB per chart at level 1, 11.4 ms and 58 kB at level 6, 0.6 ms
//! and 245–252 kB with `fdeflate` (levels 2 to 4 took 8.0–8.6 ms for 59–63 kB).
//!
//! The format is the PNG specification's (ISO/IEC 15948, W3C PNG 2nd ed.): the signature,
//! then chunks of a big-endian length, a 4-byte type, the data and the CRC-32 of type and
//! data: `IHDR`, one `IDAT`, `IEND`.

use miniz_oxide::deflate::core::{
    CompressorOxide, TDEFLFlush, TDEFLStatus, compress_to_output, create_comp_flags_from_zip_params,
};

use super::style::ChartError;

/// The eight bytes every PNG file starts with.
pub(crate) const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// Deflate level: miniz_oxide's fastest match finder (see the module doc).
const LEVEL: u8 = 1;

/// Filter type 2 of the specification: each byte minus the byte above it.
const FILTER_UP: u8 = 2;

/// Encodes `rgb` (rows of `width` pixels of three bytes, top row first) as a PNG.
///
/// Rows are filtered and compressed one at a time, so nothing image-sized is allocated
/// besides the result (the whole filtered image, and miniz_oxide's `compress_to_vec` output
/// buffer of half the input's size, cost page faults worth 5 ms a chart).
pub(crate) fn encode_rgb(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, ChartError> {
    let row = width as usize * 3;
    if rgb.len() != row * height as usize {
        return Err(ChartError::new(format!("PNG: {} bytes are not an RGB image of {width}×{height}", rgb.len())));
    }
    let mut header = Vec::with_capacity(13);
    header.extend(width.to_be_bytes());
    header.extend(height.to_be_bytes());
    // Bit depth 8, colour type 2 (RGB), deflate, adaptive filtering method 0, no interlace.
    header.extend([8, 2, 0, 0, 0]);
    // A window of 2^15 bytes makes miniz_oxide write the zlib header and Adler-32 trailer.
    let mut deflate = CompressorOxide::new(create_comp_flags_from_zip_params(LEVEL.into(), 15, 0));
    let mut data = Vec::new();
    let mut filtered = Vec::with_capacity(row + 1);
    let zero_row = vec![0; row];
    let mut above: &[u8] = &zero_row;
    let mut rows = rgb.chunks_exact(row).peekable();
    while let Some(line) = rows.next() {
        filtered.clear();
        filtered.push(FILTER_UP);
        filtered.extend(line.iter().zip(above).map(|(x, b)| x.wrapping_sub(*b)));
        above = line;
        let flush = if rows.peek().is_some() { TDEFLFlush::None } else { TDEFLFlush::Finish };
        let (status, used) = compress_to_output(&mut deflate, &filtered, flush, |out| {
            data.extend_from_slice(out);
            true
        });
        let expected = if flush == TDEFLFlush::Finish { TDEFLStatus::Done } else { TDEFLStatus::Okay };
        if status != expected || used != filtered.len() {
            return Err(ChartError::new(format!(
                "PNG: deflate stopped with {status:?} after {used} of {} bytes",
                filtered.len()
            )));
        }
    }
    let mut png = Vec::with_capacity(data.len() + 64);
    png.extend(SIGNATURE);
    chunk(&mut png, b"IHDR", &header);
    chunk(&mut png, b"IDAT", &data);
    chunk(&mut png, b"IEND", &[]);
    Ok(png)
}

/// Appends one chunk: length, type, data, CRC-32 of type and data.
fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    let len = u32::try_from(data.len()).expect("a chart's compressed data is far below 2 GiB");
    out.extend(len.to_be_bytes());
    out.extend(kind);
    out.extend(data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    out.extend(crc.finalize().to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A picture with flat areas, edges and every byte value, as a chart has.
    fn picture(w: u32, h: u32) -> Vec<u8> {
        (0..h)
            .flat_map(|y| {
                (0..w).flat_map(move |x| {
                    if y < h / 3 { [255, 255, 255] } else { [(x * 7 + y) as u8, (x ^ y) as u8, (255 - x % 256) as u8] }
                })
            })
            .collect()
    }

    #[test]
    fn the_image_crate_decodes_it_to_the_same_pixels() {
        for (w, h) in [(1, 1), (3, 2), (257, 31), (64, 200)] {
            let rgb = picture(w, h);
            let png = encode_rgb(&rgb, w, h).unwrap();
            let back = image::load_from_memory_with_format(&png, image::ImageFormat::Png).expect("a valid PNG");
            assert_eq!((back.width(), back.height()), (w, h));
            assert_eq!(back.color(), image::ColorType::Rgb8);
            assert_eq!(back.into_rgb8().into_raw(), rgb, "{w}×{h}");
        }
    }

    #[test]
    fn a_buffer_of_the_wrong_size_is_an_error() {
        let e = encode_rgb(&[0; 5], 2, 1).unwrap_err();
        assert!(e.to_string().contains("5 bytes are not an RGB image of 2×1"), "{e}");
    }

    #[test]
    fn chunks_are_as_the_specification_lays_them_out() {
        let png = encode_rgb(&[10, 20, 30, 40, 50, 60], 2, 1).unwrap();
        assert_eq!(png[..8], *b"\x89PNG\r\n\x1a\n", "the signature, written out independently");
        // IHDR: length 13, type, width 2, height 1, depth 8, colour type 2, 0, 0, 0.
        assert_eq!(png[8..16], [0, 0, 0, 13, b'I', b'H', b'D', b'R']);
        assert_eq!(png[16..29], [0, 0, 0, 2, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
        // The CRC-32 of "IHDR" and those 13 bytes, computed by zlib's crc32 for this test.
        assert_eq!(png[29..33], 0x7b40_e8dd_u32.to_be_bytes());
        // The file ends with the empty IEND chunk, whose CRC-32 is the constant AE 42 60 82.
        assert_eq!(png[png.len() - 12..], [0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82]);
        // One row: the filter byte (Up), then the bytes minus the zero row above them.
        let idat_len = u32::from_be_bytes(png[33..37].try_into().unwrap()) as usize;
        assert_eq!(&png[37..41], b"IDAT");
        let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&png[41..41 + idat_len]).unwrap();
        assert_eq!(raw, [FILTER_UP, 10, 20, 30, 40, 50, 60]);
    }
}
