"""Paints a frame of terminal cells (from examples/frame_json.rs) into a PNG."""
import json
import sys

from PIL import Image, ImageDraw, ImageFont

NAMED = {
    "black": "#000000", "red": "#cd3131", "green": "#0dbc79", "yellow": "#e5e510",
    "blue": "#2472c8", "magenta": "#bc3fbc", "cyan": "#11a8cd", "gray": "#a0a0a0",
    "darkgray": "#666666", "lightred": "#f14c4c", "lightgreen": "#23d18b",
    "lightyellow": "#f5f543", "lightblue": "#3b8eea", "lightmagenta": "#d670d6",
    "lightcyan": "#29b8db", "white": "#e5e5e5",
}


def colour(value, default):
    if value.startswith("#"):
        return value
    if value.startswith("indexed("):
        return default
    return NAMED.get(value, default)


def main(frame_path, out_path):
    frame = json.load(open(frame_path))
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", 15)
    bold = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf", 15)
    # The mono face has no braille (the chart's dots); DejaVu Sans has.
    braille = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 15)
    cw, ch = 9, 18
    img = Image.new("RGB", (frame["width"] * cw, frame["height"] * ch), "#1e2127")
    draw = ImageDraw.Draw(img)
    for y, row in enumerate(frame["rows"]):
        for x, (symbol, fg, bg, is_bold) in enumerate(row):
            bg = colour(bg, "#1e2127")
            if bg != "#1e2127":
                draw.rectangle([x * cw, y * ch, (x + 1) * cw - 1, (y + 1) * ch - 1], fill=bg)
            if symbol.strip():
                face = braille if "\u2800" <= symbol[0] <= "\u28ff" else (bold if is_bold else font)
                draw.text((x * cw, y * ch), symbol, font=face, fill=colour(fg, "#c8ccd4"))
    img.save(out_path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
