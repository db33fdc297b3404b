#!/usr/bin/python3
"""Draws assets/shapes.png, the demo image: flat coloured shapes on a two-tone
background, so same-colour and neighbourhood heads have something to show.

Run with Debian's Pillow:  /usr/bin/python3 tools/make_assets.py
"""

import os

from PIL import Image, ImageDraw

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "shapes.png")


def main():
    img = Image.new("RGB", (224, 224), (120, 180, 235))                 # sky
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, 150, 223, 223], fill=(70, 150, 60))              # grass
    draw.ellipse([150, 18, 206, 74], fill=(250, 210, 40))               # sun
    draw.rectangle([30, 90, 100, 170], fill=(200, 40, 40))              # red house
    draw.polygon([(22, 92), (65, 50), (108, 92)], fill=(110, 60, 30))   # roof
    draw.ellipse([130, 120, 200, 190], fill=(200, 40, 40))              # red ball, same colour as the house
    img.save(OUT, optimize=True)
    print("wrote", os.path.normpath(OUT), os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()
