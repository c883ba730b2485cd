//! A compact, exact encoding of a [`Screen`](crate::Screen): both grids with their cursor,
//! saved cursor, scroll region, origin modes and scrollback, every row's cells, the current
//! and saved attributes and the terminal modes. A cell costs a byte plus its text, its
//! attributes only where they differ from the cell before it, and the blank cells that end
//! a row nothing at all, so a screen of text lines takes about a byte per character instead
//! of 32 bytes per cell.
//!
//! Layout (integers little-endian, counts as LEB128): screen = grid, alternate grid, attrs,
//! saved attrs, modes, mouse mode, mouse encoding; grid = rows, cols, cursor row and col,
//! saved row and col, scroll top and bottom, origin mode, saved origin mode, scrollback
//! length, scrollback offset, the rows, the scrollback rows; row = width, wrapped, the
//! number of cells before its trailing blank ones, those cells; cell = a header byte (the
//! cell's length and width flags, with `ATTRS_FOLLOW` set when its attributes follow), its
//! text, its attributes.

use crate::attrs::{Attrs, Color};
use crate::cell::{Cell, CONTENT_BYTES, LEN_BITS};
use crate::grid::{Grid, Pos, Size};
use crate::row::Row;
use crate::screen::{MouseProtocolEncoding, MouseProtocolMode, Screen};

/// Set in a cell's header byte when the cell's attributes follow its text (the bit is never
/// set in a cell's own length byte).
const ATTRS_FOLLOW: u8 = 0b0010_0000;

impl Screen {
    /// Appends the compact encoding of the whole screen to `out`.
    pub fn write_compact(&self, out: &mut Vec<u8>) {
        write_grid(&self.grid, out);
        write_grid(&self.alternate_grid, out);
        write_attrs(&self.attrs, out);
        write_attrs(&self.saved_attrs, out);
        out.push(self.modes);
        out.push(match self.mouse_protocol_mode {
            MouseProtocolMode::None => 0,
            MouseProtocolMode::Press => 1,
            MouseProtocolMode::PressRelease => 2,
            MouseProtocolMode::ButtonMotion => 3,
            MouseProtocolMode::AnyMotion => 4,
        });
        out.push(match self.mouse_protocol_encoding {
            MouseProtocolEncoding::Default => 0,
            MouseProtocolEncoding::Utf8 => 1,
            MouseProtocolEncoding::Sgr => 2,
        });
    }

    /// The screen encoded by [`Screen::write_compact`]; `None` when `bytes` are not such an
    /// encoding (cut short, or with a value no screen holds).
    #[must_use]
    pub fn from_compact(bytes: &[u8]) -> Option<Self> {
        let mut reader = Reader { bytes, at: 0 };
        let grid = read_grid(&mut reader)?;
        let alternate_grid = read_grid(&mut reader)?;
        let attrs = read_attrs(&mut reader)?;
        let saved_attrs = read_attrs(&mut reader)?;
        let modes = reader.byte()?;
        let mouse_protocol_mode = match reader.byte()? {
            0 => MouseProtocolMode::None,
            1 => MouseProtocolMode::Press,
            2 => MouseProtocolMode::PressRelease,
            3 => MouseProtocolMode::ButtonMotion,
            4 => MouseProtocolMode::AnyMotion,
            _ => return None,
        };
        let mouse_protocol_encoding = match reader.byte()? {
            0 => MouseProtocolEncoding::Default,
            1 => MouseProtocolEncoding::Utf8,
            2 => MouseProtocolEncoding::Sgr,
            _ => return None,
        };
        if reader.at != bytes.len() {
            return None;
        }
        Some(Self {
            grid,
            alternate_grid,
            attrs,
            saved_attrs,
            modes,
            mouse_protocol_mode,
            mouse_protocol_encoding,
        })
    }
}

fn write_grid(grid: &Grid, out: &mut Vec<u8>) {
    for value in [
        grid.size.rows,
        grid.size.cols,
        grid.pos.row,
        grid.pos.col,
        grid.saved_pos.row,
        grid.saved_pos.col,
        grid.scroll_top,
        grid.scroll_bottom,
    ] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.push(u8::from(grid.origin_mode));
    out.push(u8::from(grid.saved_origin_mode));
    write_count(grid.scrollback_len, out);
    write_count(grid.scrollback_offset, out);
    write_count(grid.rows.len(), out);
    for row in &grid.rows {
        write_row(row, out);
    }
    write_count(grid.scrollback.len(), out);
    for row in &grid.scrollback {
        write_row(row, out);
    }
}

fn read_grid(reader: &mut Reader<'_>) -> Option<Grid> {
    let size = Size {
        rows: reader.u16()?,
        cols: reader.u16()?,
    };
    let pos = Pos {
        row: reader.u16()?,
        col: reader.u16()?,
    };
    let saved_pos = Pos {
        row: reader.u16()?,
        col: reader.u16()?,
    };
    let scroll_top = reader.u16()?;
    let scroll_bottom = reader.u16()?;
    let origin_mode = reader.flag()?;
    let saved_origin_mode = reader.flag()?;
    let scrollback_len = reader.count()?;
    let scrollback_offset = reader.count()?;
    let row_count = reader.count()?;
    // Each encoded row takes at least four bytes, which bounds what a bad count allocates.
    let mut rows = Vec::with_capacity(row_count.min(reader.left() / 4));
    for _ in 0..row_count {
        rows.push(read_row(reader)?);
    }
    let scrollback_count = reader.count()?;
    let mut scrollback = std::collections::VecDeque::with_capacity(
        scrollback_count.min(reader.left() / 4),
    );
    for _ in 0..scrollback_count {
        scrollback.push_back(read_row(reader)?);
    }
    Some(Grid {
        size,
        pos,
        saved_pos,
        rows,
        scroll_top,
        scroll_bottom,
        origin_mode,
        saved_origin_mode,
        scrollback,
        scrollback_len,
        scrollback_offset,
    })
}

fn write_row(row: &Row, out: &mut Vec<u8>) {
    // A blank cell is `Cell::new()`: no text, no width flags, default attributes.
    let default = Attrs::default();
    let kept = row
        .cells
        .iter()
        .rposition(|cell| cell.len != 0 || cell.attrs != default)
        .map_or(0, |last| last + 1);
    out.reserve(5 + 2 * kept);
    write_u16_of(row.cells.len(), out);
    out.push(u8::from(row.wrapped));
    write_u16_of(kept, out);
    let mut previous = Attrs::default();
    for cell in &row.cells[..kept] {
        let len = usize::from(cell.len & LEN_BITS);
        let header = cell.len & !ATTRS_FOLLOW;
        if cell.attrs == previous {
            out.push(header);
            out.extend_from_slice(&cell.contents[..len]);
        } else {
            out.push(header | ATTRS_FOLLOW);
            out.extend_from_slice(&cell.contents[..len]);
            write_attrs(&cell.attrs, out);
            previous = cell.attrs;
        }
    }
}

fn read_row(reader: &mut Reader<'_>) -> Option<Row> {
    let width = usize::from(reader.u16()?);
    let wrapped = reader.flag()?;
    let kept = usize::from(reader.u16()?);
    if kept > width {
        return None;
    }
    let mut cells = Vec::with_capacity(width);
    let mut attrs = Attrs::default();
    for _ in 0..kept {
        let header = reader.byte()?;
        let len = usize::from(header & LEN_BITS);
        if len > CONTENT_BYTES {
            return None;
        }
        let text = reader.take(len)?;
        std::str::from_utf8(text).ok()?;
        if header & ATTRS_FOLLOW != 0 {
            attrs = read_attrs(reader)?;
        }
        let mut cell = Cell::new();
        cell.contents[..len].copy_from_slice(text);
        cell.len = header & !ATTRS_FOLLOW;
        cell.attrs = attrs;
        cells.push(cell);
    }
    cells.resize(width, Cell::new());
    Some(Row {
        cells,
        wrapped,
        used: u16::try_from(kept).ok()?,
    })
}

fn write_attrs(attrs: &Attrs, out: &mut Vec<u8>) {
    write_color(attrs.fgcolor, out);
    write_color(attrs.bgcolor, out);
    out.push(attrs.mode);
}

fn read_attrs(reader: &mut Reader<'_>) -> Option<Attrs> {
    Some(Attrs {
        fgcolor: read_color(reader)?,
        bgcolor: read_color(reader)?,
        mode: reader.byte()?,
    })
}

fn write_color(color: Color, out: &mut Vec<u8>) {
    match color {
        Color::Default => out.push(0),
        Color::Idx(i) => out.extend_from_slice(&[1, i]),
        Color::Rgb(r, g, b) => out.extend_from_slice(&[2, r, g, b]),
    }
}

fn read_color(reader: &mut Reader<'_>) -> Option<Color> {
    match reader.byte()? {
        0 => Some(Color::Default),
        1 => Some(Color::Idx(reader.byte()?)),
        2 => Some(Color::Rgb(reader.byte()?, reader.byte()?, reader.byte()?)),
        _ => None,
    }
}

/// A row's width or cell count, which [`Size`] keeps within a `u16`.
fn write_u16_of(value: usize, out: &mut Vec<u8>) {
    let value = u16::try_from(value).unwrap_or(u16::MAX);
    out.extend_from_slice(&value.to_le_bytes());
}

fn write_count(mut value: usize, out: &mut Vec<u8>) {
    loop {
        let low = u8::try_from(value & 0x7F).unwrap_or(0);
        value >>= 7;
        if value == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

/// Reads an encoding from the front.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let taken = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(taken)
    }

    fn byte(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    fn flag(&mut self) -> Option<bool> {
        match self.byte()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    fn u16(&mut self) -> Option<u16> {
        let bytes = self.take(2)?;
        Some(u16::from_le_bytes([bytes[0], bytes[1]]))
    }

    fn count(&mut self) -> Option<usize> {
        let mut value = 0usize;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            value |= usize::from(byte & 0x7F).checked_shl(shift)?;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
}
