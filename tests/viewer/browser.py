"""A headless Chromium driven over its DevTools protocol with the standard library only: a
small WebSocket client, enough to load a page, evaluate script in it, collect console errors
and take screenshots. `Browser.find()` is None when no Chromium is installed.

    with Browser.launch(Browser.find(), tmp_path) as page:
        page.open(Path("site/index.html"))
        page.eval("document.title"); page.screenshot(tmp_path / "page.png")
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import urlopen

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserError(Exception):
    pass


class _Socket:
    """A WebSocket client (RFC 6455): text frames out, masked; frames in, reassembled."""

    def __init__(self, url: str, timeout: float = 30.0):
        parts = urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                           "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
                          .encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise BrowserError("the browser closed the DevTools connection")
            reply += chunk
        head, _, self.buffer = reply.partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise BrowserError(f"DevTools refused the WebSocket: {head[:80]!r}")

    def send(self, text: str) -> None:
        data = text.encode()
        header = bytearray([0x81])
        n = len(data)
        if n < 126:
            header.append(0x80 | n)
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + n.to_bytes(2, "big")
        else:
            header += bytes([0x80 | 127]) + n.to_bytes(8, "big")
        mask = os.urandom(4)
        self.sock.sendall(bytes(header) + mask + bytes(b ^ mask[i % 4] for i, b in
                                                       enumerate(data)))

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buffer)))
            if not chunk:
                raise BrowserError("the browser closed the DevTools connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def ready(self, timeout: float) -> bool:
        return bool(self.buffer) or bool(select.select([self.sock], [], [], timeout)[0])

    def recv(self) -> str:
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = int.from_bytes(self._read(2), "big")
            elif n == 127:
                n = int.from_bytes(self._read(8), "big")
            payload = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise BrowserError("the browser closed the DevTools connection")
            if opcode in (0x9, 0xA):  # ping, pong: not part of a message
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """One headless Chromium with one page; `errors` collects console errors and exceptions."""

    def __init__(self, process: subprocess.Popen, page: _Socket):
        self.process, self.page = process, page
        self.errors: list[str] = []
        self._id = 0
        self._events: list[dict] = []

    @staticmethod
    def find() -> str | None:
        for name in CANDIDATES:
            if path := shutil.which(name):
                return path
        return None

    @classmethod
    def launch(cls, binary: str, profile: Path, width: int = 1280, height: int = 900
               ) -> Browser:
        process = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-dev-shm-usage",
             f"--user-data-dir={profile}", "--remote-debugging-port=0",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.is_file() or not port_file.read_text().strip():
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise BrowserError(f"{binary} did not start: {process.stderr.read()[-400:]}")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        targets = json.loads(urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10).read())
        page = next(t for t in targets if t.get("type") == "page")
        browser = cls(process, _Socket(page["webSocketDebuggerUrl"]))
        for domain in ("Page", "Runtime", "Log"):
            browser.call(f"{domain}.enable")
        browser.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                     deviceScaleFactor=1, mobile=False)
        return browser

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.page.close()
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def _note(self, message: dict) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            self.errors.append(f"exception: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console: " + " ".join(str(a.get("value", a.get("description")))
                                                      for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(f"log: {params['entry'].get('text')} "
                               f"{params['entry'].get('url', '')}")
        self._events.append(message)

    def call(self, method: str, timeout: float = 30.0, **params) -> dict:
        self._id += 1
        self.page.send(json.dumps({"id": self._id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.page.ready(0.2):
                continue
            message = json.loads(self.page.recv())
            if message.get("id") == self._id:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._note(message)
        raise BrowserError(f"{method}: no answer in {timeout} s")

    def wait_event(self, method: str, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        for i, message in enumerate(self._events):
            if message.get("method") == method:
                return self._events.pop(i)
        while time.monotonic() < deadline:
            if self.page.ready(0.2):
                message = json.loads(self.page.recv())
                self._note(message)
                if message.get("method") == method:
                    return message
        raise BrowserError(f"no {method} in {timeout} s")

    def open(self, path: Path) -> None:
        """Load a file and wait for its load event."""
        self._events.clear()
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_event("Page.loadEventFired")

    def eval(self, expression: str):
        """The value of a script expression in the page (a promise is awaited)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:60]}: {result['exceptionDetails'].get('text')} "
                               f"{result['result'].get('description', '')}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 10.0):
        """Poll a script expression until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.eval(expression)
            if value not in (None, False, 0, ""):  # a DOM node comes back as {}
                return value
            time.sleep(0.05)
        raise BrowserError(f"never true in {timeout} s: {expression}")

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        params = {"format": "png", "captureBeyondViewport": full_page}
        data = self.call("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path
