//! The PNG files of the charts, encoded by the `png` crate: 8-bit RGB, every row "Up"-filtered,
//! one zlib stream at deflate level 1.
//!
//! Why these settings: a chart is large flat areas and thin lines, so the Up filter (each byte
//! minus the one above it) turns most rows into zeros, and the fastest deflate level finds
//! those runs. Measured on two sweep charts with miniz_oxide (which `png` uses through
//! `flate2`): 1.8 ms and 87–91 kB per chart at level 1, 11.4 ms and 58 kB at level 6 (the
//! crate's default), 0.6 ms and 245–252 kB with its `fdeflate` mode; levels 2 to 4 took
//! 8.0–8.6 ms for 59–63 kB. A sweep draws hundreds of charts, so level 1.

use png::{BitDepth, ColorType, DeflateCompression, Encoder, Filter};

use super::style::ChartError;

/// The eight bytes every PNG file starts with (PNG specification, §5.2).
#[cfg(test)]
pub(crate) const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// Deflate level: the fastest (see the module doc).
const LEVEL: u8 = 1;

/// Encodes `rgb` (rows of `width` pixels of three bytes, top row first) as a PNG.
pub(crate) fn encode_rgb(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, ChartError> {
    let expected = width as usize * 3 * height as usize;
    if rgb.len() != expected {
        return Err(ChartError::new(format!("PNG: {} bytes are not an RGB image of {width}×{height}", rgb.len())));
    }
    let fail = |e: png::EncodingError| ChartError::new(format!("PNG: {e}"));
    let mut out = Vec::with_capacity(expected / 16);
    let mut encoder = Encoder::new(&mut out, width, height);
    encoder.set_color(ColorType::Rgb);
    encoder.set_depth(BitDepth::Eight);
    encoder.set_filter(Filter::Up);
    encoder.set_deflate_compression(DeflateCompression::Level(LEVEL));
    let mut writer = encoder.write_header().map_err(fail)?;
    writer.write_image_data(rgb).map_err(fail)?;
    writer.finish().map_err(fail)?;
    Ok(out)
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
    fn it_decodes_to_the_same_pixels() {
        for (w, h) in [(1, 1), (3, 2), (257, 31), (64, 200)] {
            let rgb = picture(w, h);
            let bytes = encode_rgb(&rgb, w, h).unwrap();
            assert_eq!(bytes[..8], SIGNATURE);
            let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("a valid PNG");
            let mut back = vec![0; reader.output_buffer_size().unwrap()];
            let info = reader.next_frame(&mut back).unwrap();
            assert_eq!((info.width, info.height), (w, h));
            assert_eq!((info.color_type, info.bit_depth), (ColorType::Rgb, BitDepth::Eight));
            assert_eq!(back, rgb, "{w}×{h}");
        }
    }

    #[test]
    fn a_buffer_of_the_wrong_size_is_an_error() {
        let e = encode_rgb(&[0; 5], 2, 1).unwrap_err();
        assert!(e.to_string().contains("5 bytes are not an RGB image of 2×1"), "{e}");
    }

    #[test]
    fn rows_are_up_filtered_in_one_zlib_stream() {
        // Two rows of two pixels. After the signature and IHDR (8 + 25 bytes) comes the IDAT
        // chunk; its zlib stream holds each row's filter byte (2 = Up), then the first row as
        // is and the second minus the first.
        let bytes = encode_rgb(&[10, 20, 30, 40, 50, 60, 11, 22, 33, 44, 55, 66], 2, 2).unwrap();
        assert_eq!(bytes[8..16], [0, 0, 0, 13, b'I', b'H', b'D', b'R']);
        assert_eq!(bytes[16..29], [0, 0, 0, 2, 0, 0, 0, 2, 8, 2, 0, 0, 0], "2×2, depth 8, RGB");
        let len = u32::from_be_bytes(bytes[33..37].try_into().unwrap()) as usize;
        assert_eq!(&bytes[37..41], b"IDAT");
        let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&bytes[41..41 + len]).unwrap();
        assert_eq!(raw, [2, 10, 20, 30, 40, 50, 60, 2, 1, 2, 3, 4, 5, 6]);
        assert_eq!(bytes[bytes.len() - 12..], [0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82]);
    }
}
