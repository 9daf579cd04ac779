"""The one HTML page: textual-serve's terminal (xterm.js) on a page that loads nothing from elsewhere.

textual-serve's own page pulls a font from a third-party host; this one uses the font textual-serve ships,
so the page works offline and the browser tells no one else that it is open. The headers forbid every
other origin (scripts, styles, fonts and connections from this server only, no framing) and send no
referrer, so the token in the address never travels on.
"""

from __future__ import annotations

from html import escape

SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                                "font-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                                "form-action 'none'; frame-ancestors 'none'"),
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="static/css/xterm.css">
<style>
@font-face {{ font-family: "Roboto Mono"; src: url("static/fonts/RobotoMono-VariableFont_wght.ttf"); }}
html, body {{ margin: 0; padding: 0; height: 100%; background: #0c181f; overflow: hidden; }}
.textual-terminal {{ width: 100vw; height: 100vh; }}
#ended {{ display: none; position: absolute; inset: 0; z-index: 10; align-items: center; justify-content: center;
  font: 16px "Roboto Mono", monospace; color: #eee; background: rgba(12, 24, 31, 0.92); }}
body.-closed #ended {{ display: flex; }}
</style>
<script src="static/js/textual.js"></script>
</head>
<body>
<div id="ended">Session ended: reload the page to start a new one.</div>
<div id="start" hidden></div>
<div id="terminal" class="textual-terminal" data-session-websocket-url="{websocket}" data-font-size="{font_size}">
</div>
</body>
</html>
"""


def page(title: str, websocket_url: str, font_size: int) -> str:
    return _PAGE.format(title=escape(title), websocket=escape(websocket_url), font_size=int(font_size))
