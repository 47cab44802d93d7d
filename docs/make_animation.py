"""Make docs/widget.apng, the README's picture: the seed lesson's widget stepped through in Chromium.

    .venv/bin/python docs/make_animation.py

The frames are screenshots of the saved page (``w.save_html``) in headless Chromium, as the browser
tests take them (``/usr/bin/chromium`` and the ``playwright`` package), one per step of the
animation; they are joined into an animated PNG (APNG: every browser and GitHub play it) without
any imaging library.
"""

import struct
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gradviz as torch  # noqa: E402
import gradviz  # noqa: E402

SIZE = {"width": 1000, "height": 640}
HOLD_MS = {"first": 2200, "step": 900, "last": 3500}


def _chunks(png):
    at = 8
    while at < len(png):
        n, kind = struct.unpack(">I4s", png[at:at + 8])
        yield kind, png[at + 8:at + 8 + n]
        at += 12 + n


def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def apng(frames, delays_ms):
    """One animated PNG from PNG files of one size and colour type (each shown for its delay)."""
    ihdr = dict(_chunks(frames[0]))[b"IHDR"]
    width, height = struct.unpack(">II", ihdr[:8])
    out = [b"\x89PNG\r\n\x1a\n", _chunk(b"IHDR", ihdr), _chunk(b"acTL", struct.pack(">II", len(frames), 0))]
    seq = 0
    for i, (png, delay) in enumerate(zip(frames, delays_ms)):
        assert dict(_chunks(png))[b"IHDR"] == ihdr, "frames differ in size or colour type"
        out.append(_chunk(b"fcTL", struct.pack(">IIIIIHHBB", seq, width, height, 0, 0, delay, 1000, 0, 0)))
        seq += 1
        for kind, data in _chunks(png):
            if kind != b"IDAT":
                continue
            if i == 0:
                out.append(_chunk(b"IDAT", data))
            else:
                out.append(_chunk(b"fdAT", struct.pack(">I", seq) + data))
                seq += 1
    out.append(_chunk(b"IEND", b""))
    return b"".join(out)


def main(out=ROOT / "docs" / "widget.apng"):
    from playwright.sync_api import sync_playwright
    x = torch.ones(2, requires_grad=True)
    y = 5 * (x + 1) ** 2
    o = (1 / 2) * torch.sum(y)
    w = gradviz.animate(o)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        page_path = Path(tmp) / "seed.html"
        w.save_html(page_path)
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport=SIZE, device_scale_factor=1)
        page.goto(page_path.as_uri())
        page.wait_for_selector('.gv-widget[data-gv-ready="1"]')
        page.wait_for_timeout(400)
        box = page.locator(".gv-widget").first.bounding_box()       # the widget alone, one size for all
        clip = {"x": max(0, box["x"] - 4), "y": max(0, box["y"] - 4), "width": box["width"] + 8,
                "height": box["height"] + 8}
        frames = [page.screenshot(clip=clip)]
        for _ in range(len(w.frames) - 1):
            page.locator('[data-gv="step"]').click()
            page.wait_for_timeout(350)
            frames.append(page.screenshot(clip=clip))
        browser.close()
    delays = [HOLD_MS["first"]] + [HOLD_MS["step"]] * (len(frames) - 2) + [HOLD_MS["last"]]
    Path(out).write_bytes(apng(frames, delays))
    print(f"wrote {out}: {len(frames)} frames, {Path(out).stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
