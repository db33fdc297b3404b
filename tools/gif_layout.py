"""Where things sit in a GIF file, for the scripts that write test files by editing one
(tools/make_image_golden.py, tools/make_error_fixtures.py). Plain Python."""


def first_image_descriptor(gif):
    """The offset of the first image descriptor (0x2C): past the header, the global colour
    table and any extension blocks (a label, then sub-blocks ending in a zero length)."""
    offset = 13 + (3 * (2 << (gif[10] & 7)) if gif[10] & 0x80 else 0)
    while gif[offset] == 0x21:
        offset += 2
        while gif[offset]:
            offset += 1 + gif[offset]
        offset += 1
    assert gif[offset] == 0x2C
    return offset
