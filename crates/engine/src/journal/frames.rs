//! zstd frames read back one whole frame at a time (a frame's text is handed out only once
//! its checksum holds, so a torn last frame is dropped whole), and the frames of a file found
//! from their headers alone, without decompressing (RFC 8878 §3.1).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

/// The first four bytes of a zstd frame.
pub const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
/// Compressed bytes read from the file at a time.
const INPUT_BYTES: usize = 128 * 1024;
/// Decompressed bytes produced per decoder step.
const OUTPUT_BYTES: usize = 256 * 1024;

/// How reading the next frame ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameEnd {
    /// A whole frame, starting at this byte offset of the file; its text is in the buffer.
    Whole(u64),
    /// The file ends after the previous frame.
    End,
    /// The file ends inside a frame, or a frame does not decode: reading stops here.
    Torn,
}

/// Reads the frames of a file in order.
pub struct FrameReader<R> {
    src: R,
    decoder: Decoder<'static>,
    input: Vec<u8>,
    in_pos: usize,
    in_len: usize,
    output: Vec<u8>,
    /// File offset of `input[in_pos]`.
    at: u64,
}

impl<R: Read> FrameReader<R> {
    /// A reader of the frames of `src`, which stands at byte offset `at` of its file.
    pub fn new(src: R, at: u64) -> io::Result<FrameReader<R>> {
        Ok(FrameReader {
            src,
            decoder: Decoder::new()?,
            input: vec![0; INPUT_BYTES],
            in_pos: 0,
            in_len: 0,
            output: vec![0; OUTPUT_BYTES],
            at,
        })
    }

    /// The byte offset where the next frame starts.
    pub fn at(&self) -> u64 {
        self.at
    }

    /// Decompresses the next frame into `text` (cleared first).
    pub fn next_frame(&mut self, text: &mut Vec<u8>) -> io::Result<FrameEnd> {
        text.clear();
        let start = self.at;
        let mut started = false;
        let mut output_full = false;
        loop {
            if self.in_pos == self.in_len && !output_full {
                self.in_len = self.src.read(&mut self.input)?;
                self.in_pos = 0;
                if self.in_len == 0 {
                    return Ok(if started {
                        FrameEnd::Torn
                    } else {
                        FrameEnd::End
                    });
                }
            }
            started = true;
            let mut input = InBuffer::around(&self.input[self.in_pos..self.in_len]);
            let mut output = OutBuffer::around(&mut self.output[..]);
            let step = self.decoder.run(&mut input, &mut output);
            let (read, written) = (input.pos(), output.pos());
            text.extend_from_slice(&self.output[..written]);
            self.in_pos += read;
            self.at += read as u64;
            output_full = written == self.output.len();
            match step {
                Ok(0) => return Ok(FrameEnd::Whole(start)),
                Ok(_) => {}
                Err(_) => {
                    self.decoder.reinit()?;
                    return Ok(FrameEnd::Torn);
                }
            }
        }
    }
}

impl<R: Read + Seek> FrameReader<R> {
    /// Moves to the frame starting at byte offset `offset`.
    pub fn seek(&mut self, offset: u64) -> io::Result<()> {
        self.src.seek(SeekFrom::Start(offset))?;
        self.in_pos = 0;
        self.in_len = 0;
        self.at = offset;
        self.decoder.reinit()
    }
}

/// Where the last whole frame of `file` (of `len` bytes) starts, found by walking frame and
/// block headers; None when the file holds no whole frame or is not made of zstd frames.
pub fn last_frame_start(file: &File, len: u64) -> Option<u64> {
    let mut pos = 0;
    let mut last = None;
    while pos < len {
        match frame_end(file, pos) {
            Some(end) if end <= len => {
                last = Some(pos);
                pos = end;
            }
            _ => break,
        }
    }
    last
}

/// The byte offset just past the frame (or skippable frame) starting at `pos`.
fn frame_end(file: &File, pos: u64) -> Option<u64> {
    let mut magic = [0u8; 4];
    file.read_exact_at(&mut magic, pos).ok()?;
    if u32::from_le_bytes(magic) & 0xFFFF_FFF0 == 0x184D_2A50 {
        let mut size = [0u8; 4];
        file.read_exact_at(&mut size, pos + 4).ok()?;
        return Some(pos + 8 + u64::from(u32::from_le_bytes(size)));
    }
    if magic != MAGIC {
        return None;
    }
    let mut descriptor = [0u8; 1];
    file.read_exact_at(&mut descriptor, pos + 4).ok()?;
    let fhd = descriptor[0];
    let single_segment = fhd & 0x20 != 0;
    let checksum = fhd & 0x04 != 0;
    let dictionary_bytes = [0, 1, 2, 4][usize::from(fhd & 0x03)];
    let content_size_bytes = match fhd >> 6 {
        0 => u64::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let window_bytes = u64::from(!single_segment);
    let mut at = pos + 5 + window_bytes + dictionary_bytes + content_size_bytes;
    loop {
        let mut header = [0u8; 3];
        file.read_exact_at(&mut header, at).ok()?;
        let value = u32::from(header[0]) | u32::from(header[1]) << 8 | u32::from(header[2]) << 16;
        let last_block = value & 1 != 0;
        let size = u64::from(value >> 3);
        at += 3 + match (value >> 1) & 0x03 {
            0 | 2 => size,
            1 => 1,
            _ => return None,
        };
        if last_block {
            break;
        }
    }
    Some(at + if checksum { 4 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(texts: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        for text in texts {
            let mut compressor = zstd::bulk::Compressor::new(3).unwrap();
            compressor
                .set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))
                .unwrap();
            out.extend(compressor.compress(text.as_bytes()).unwrap());
        }
        out
    }

    #[test]
    fn frames_are_read_whole_and_a_torn_one_is_dropped() {
        let big = "line of text\n".repeat(100_000);
        let bytes = frames(&["a\nb\n", &big, "c\n"]);
        let mut text = Vec::new();
        let mut reader = FrameReader::new(&bytes[..], 0).unwrap();
        assert_eq!(reader.next_frame(&mut text).unwrap(), FrameEnd::Whole(0));
        assert_eq!(text, b"a\nb\n");
        assert!(matches!(
            reader.next_frame(&mut text).unwrap(),
            FrameEnd::Whole(_)
        ));
        assert_eq!(text, big.as_bytes());
        let third = reader.at();
        assert_eq!(
            reader.next_frame(&mut text).unwrap(),
            FrameEnd::Whole(third)
        );
        assert_eq!(reader.next_frame(&mut text).unwrap(), FrameEnd::End);
        for cut in [third as usize + 1, bytes.len() - 1] {
            let mut reader = FrameReader::new(&bytes[..cut], 0).unwrap();
            reader.next_frame(&mut text).unwrap();
            reader.next_frame(&mut text).unwrap();
            assert_eq!(reader.next_frame(&mut text).unwrap(), FrameEnd::Torn);
        }
    }

    #[test]
    fn the_last_whole_frame_is_found_from_the_headers() {
        let big = "x".repeat(300_000) + "\n";
        let bytes = frames(&["a\n", &big, "end\n"]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.zst");
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        let last = last_frame_start(&file, bytes.len() as u64).unwrap();
        let mut reader = FrameReader::new(&bytes[last as usize..], last).unwrap();
        let mut text = Vec::new();
        assert_eq!(reader.next_frame(&mut text).unwrap(), FrameEnd::Whole(last));
        assert_eq!(text, b"end\n");
        // Cut inside the last frame: the one before is the last whole frame.
        let before = last_frame_start(&file, bytes.len() as u64 - 2).unwrap();
        assert!(before < last);
        assert_eq!(last_frame_start(&file, 3), None);
    }
}
