#!/usr/bin/env python3
"""A misbehaving HTTP/1.1 server for singlecast's download tests (python3 standard library only).

Listens on 127.0.0.1 on a free port and prints that port on stdout. It stops when stdin reaches EOF (the test
that started it went away) or after --lifetime seconds, whichever comes first.

Body byte i of every generated file is (i * 31 + 7 + seed) & 0xff; seed is 0 unless noted. The Swift side
(TestContent) computes the same bytes.

Paths:
  /file/<size>                   Range, If-Range, ETag and Last-Modified honoured; 416 past the end.
  /drop/<size>/<after>           like /file, but a response that starts before byte <after> announces its full
                                 length and closes the connection after byte <after>; a resume completes.
  /stall/<size>/<after>          200 announcing <size> bytes, <after> of them at once, then nothing until the client
                                 leaves (or a minute passes).
  /status/<code>[?retry_after=s] that status with a 1000-byte error page (and Retry-After when asked).
  /ignore-range/<size>           always 200 with the whole body.
  /etag-changes/<size>           a new ETag and new content (seed = request number) on every request; If-Range
                                 never matches, so a resume always gets a fresh 200.
  /lie/<size>/<claimed>          Content-Length <claimed>, sends <size> bytes, closes.
  /redirect-loop                 302 to itself.
  /redirect/<n>/<target path>    n hops of 302 (each with a body) before /<target path>.
  /redirect-to?url=<url>         302 to <url>.
  /moved-to?url=<url>            301 to <url>.
  /slow/<size>/<bytes per second> trickles the body (the whole body, whatever Range asks).
  /slow-ranges/<size>/<bytes per second>  like /slow, but Range, If-Range and ETag are honoured as by /file.
  /wrong-range/<size>            206 whose Content-Range starts elsewhere than the Range asked for.
  /wrong-total/<size>            206 at the right offset but a total one byte larger than the file.
  /no-length/<size>[?close=1]    200 without Content-Length: chunked, or ended by closing the connection.
  /echo-headers                  200 with the request headers as a JSON object (names lower-cased).
  /basic-auth/<user>/<password>/<size>  like /file behind HTTP basic authentication.
  /moved-permanently/<target path>  301 to /<target path>.
  /hops/<code>,<code>,.../<target path>  one redirect hop per code (301, 302, 303, 307, 308), then /<target path>.
  /relative-redirect             302 with the relative Location "sub/../file/1000?from=relative".
  /conditional/<size>            like /file, but 304 when If-None-Match matches its ETag (or is *), or, without
                                 If-None-Match, when If-Modified-Since is not before its Last-Modified.
  /gone                          410 Gone.
  /gone-after/<n>/<tag>?url=<url>  302 to <url> for the first <n> requests of this path, 410 Gone after them.
  /trickle-after/<n>/<tag>?url=<url>  302 to <url> for the first <n> requests of this path, then 200 with a body
                                 trickled at 4 KiB/s (fast enough for any low-speed limit) for up to 10 minutes.
  /endless-headers               200 followed by header lines without end (1 KiB each) until the client leaves.
  /endless-body                  200 without Content-Length, ended by closing, whose body never ends until the
                                 client leaves.
  /gzip-feed                     200 with a small RSS document, gzip-encoded whatever the request accepts.
  /gzip-bomb/<decoded size>      200 with <decoded size> zero bytes, gzip-encoded (about a thousandth of that on
                                 the wire).
  /concurrent/<tag>/<ms>         a small RSS document after <ms> milliseconds; counts how many requests of <tag> run at
                                 once.
  /concurrent-peak/<tag>         200 with the most requests of <tag> that ever ran at once, how many ended and on
                                 how many connections, as JSON {"peak": n, "done": n, "connections": n}.
  /typed/<kind>/<name>[?type=<t>]  200 with a canned body of <kind> under any <name> (its extension is the test's),
                                 as Content-Type <t> (audio/mpeg when not given): html (a 404 page), mp3 (an ID3 tag
                                 and MPEG audio frames), mp4 (an ISO base media ftyp box and filler).
  /overflow/<size>/<extra>       200 with Content-Length <size> and <size> body bytes, then, 200 ms later, <extra>
                                 more bytes on the same keep-alive connection: the next response a client reads
                                 there starts with garbage.

Servers that lie about ranges, sizes and validators:
  /huge-range/<size>             206 to any request: Content-Range "bytes <start>-9223372036854775807/*" (start as
                                 asked, else 0), Content-Length of what follows, the file's bytes from <start>.
  /unsatisfiable/<size>/<after>/<total>  without Range like /drop (ETag "unsat-<size>", the connection closes after
                                 byte <after>); with Range a 416 "Content-Range: bytes */<total>", <total> as written
                                 (-9223372036854775808, -1, 99999999999999999999...).
  /swap/<mode>/<size a>/<size b>/<after>/<tag>  version A (seed 0, <size a> bytes) for the first request of the path,
                                 its connection closed after byte <after>; version B (seed 1, <size b> bytes) from
                                 then on, which honours Range whatever If-Range says: 206 with version B's
                                 validators, 416 "bytes */<size b>" past its end. <mode> is "etag" (ETag and
                                 Last-Modified), "lastmod" (Last-Modified only) or "none" (no validators).
  /cr-validator/<field>/<size>/<after>/<tag>  the first request of the path: 200 whose <field> ("etag" or
                                 "last-modified") holds a bare CR, closed after byte <after>; then like /file.
  /cr-feed/<tag>                 a small RSS document whose ETag and Last-Modified hold a bare CR on the first request
                                 of the path; then the same document with ordinary validators.
  /two-lengths/<size>/<first>    200 with "Content-Length: <first>" and then "Content-Length: <size>", <size> bytes.
  /chunked-length/<size>/<claimed>  200 with "Content-Length: <claimed>" and chunked encoding of <size> bytes.
  /garbage-status/<n>            a status line that is no HTTP status line (n picks which one), then a small body.
  /huge-header/<bytes>           200 with one header line of <bytes> bytes.
  /huge-location/<bytes>         302 whose Location is <bytes> bytes long.
"""

import argparse
import base64
import email.utils
import gzip
import http.server
import json
import os
import socket
import sys
import threading
import time
import urllib.parse

CHUNK = 64 * 1024
LAST_MODIFIED = "Tue, 01 Oct 2024 12:00:00 GMT"
GZIP_FEED = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>Compressed</title>'
    + b"<item><title>Episode</title></item>" * 50
    + b"</channel></rss>\n"
)

# MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz: 417 bytes each) after an ID3v2.3 tag with nothing in it.
MP3_FRAME = b"\xff\xfb\x90\x64" + b"\x55" * 413
TYPED_BODIES = {
    "html": b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n<body><h1>Not Found</h1>"
    + b"<p>The episode you asked for is not here.</p></body></html>\n" * 20,
    "mp3": b"ID3\x03\x00\x00\x00\x00\x00\x0a" + b"\x00" * 10 + MP3_FRAME * 40,
    "mp4": b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41" + b"\x00" * 8192,
}


def pattern(seed):
    """Returns CHUNK + 256 bytes of content starting at offset 0 (the content repeats every 256 bytes)."""
    block = bytes(((i * 31 + 7 + seed) & 0xFF) for i in range(256))
    return block * ((CHUNK // 256) + 1)


PATTERNS = {}
PATTERNS_LOCK = threading.Lock()


def content_pattern(seed):
    seed &= 0xFF
    with PATTERNS_LOCK:
        if seed not in PATTERNS:
            PATTERNS[seed] = pattern(seed)
        return PATTERNS[seed]


def parse_range(header, size):
    """Parses 'bytes=a-' / 'bytes=a-b' / 'bytes=-n'; returns (start, end inclusive), None when absent or
    unsupported, or 'unsatisfiable'."""
    if not header or not header.strip().lower().startswith("bytes="):
        return None
    spec = header.strip()[6:]
    if "," in spec:
        return None
    first, _, last = spec.partition("-")
    try:
        if first == "":
            length = int(last)
            if length == 0:
                return "unsatisfiable"
            return (max(0, size - length), size - 1)
        start = int(first)
        end = int(last) if last else size - 1
    except ValueError:
        return None
    if start >= size:
        return "unsatisfiable"
    return (start, min(end, size - 1))


class FaultHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "singlecast-fault-server"
    counter = 0
    counter_lock = threading.Lock()
    requests_by_path = {}
    concurrency = {}  # tag -> (running, peak, done)
    connections = {}  # tag -> {client address}

    def log_message(self, format, *args):  # quiet: tests read outcomes, not logs
        pass

    # Helpers

    def send_body(self, start, end_exclusive, seed=0, stop_at=None, rate=None):
        """Writes content bytes [start, end_exclusive); stops early (returns False) at absolute offset stop_at."""
        data = content_pattern(seed)
        position = start
        limit = end_exclusive if stop_at is None else min(end_exclusive, stop_at)
        step = CHUNK if rate is None else max(1, rate // 10)
        while position < limit:
            count = min(step, limit - position, CHUNK)
            offset = position % 256
            try:
                self.wfile.write(data[offset:offset + count])
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
                return False
            position += count
            if rate is not None:
                time.sleep(0.1)
        return position == end_exclusive

    def hard_close(self):
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def simple(self, code, body=b"", headers=(), content_type="text/plain"):
        self.send_response(code)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Type", content_type)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def simple_gzip(self, body, content_type):
        encoded = gzip.compress(body, compresslevel=9)
        self.send_response(200)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(encoded)))
        self.send_header("Content-Type", content_type)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(encoded)

    def serve_file(self, size, etag, seed=0, honour_range=True, drop_after=None, rate=None):
        requested = parse_range(self.headers.get("Range"), size) if honour_range else None
        if_range = self.headers.get("If-Range")
        if requested is not None and if_range is not None and if_range not in (etag, LAST_MODIFIED):
            requested = None  # RFC 9110 13.1.5: a failed If-Range means "send the whole representation"
        if requested == "unsatisfiable":
            self.simple(416, b"range not satisfiable\n", [("Content-Range", "bytes */%d" % size)])
            return
        if requested is None:
            start, end = 0, size - 1
            self.send_response(200)
        else:
            start, end = requested
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Content-Type", "audio/mpeg")
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", LAST_MODIFIED)
        if honour_range:
            self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if self.command == "HEAD":
            return
        stop_at = drop_after if drop_after is not None and start < drop_after else None
        complete = self.send_body(start, end + 1, seed=seed, stop_at=stop_at, rate=rate)
        if not complete:
            self.hard_close()

    # Routing

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        parts = [p for p in url.path.split("/") if p]
        query = urllib.parse.parse_qs(url.query)
        try:
            self.route(parts, query)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except (ValueError, IndexError) as error:
            self.simple(400, ("bad test path %s: %s\n" % (self.path, error)).encode())

    def route(self, parts, query):
        kind = parts[0] if parts else ""
        if kind == "file":
            size = int(parts[1])
            self.serve_file(size, '"file-%d"' % size)
        elif kind == "drop":
            size, after = int(parts[1]), int(parts[2])
            self.serve_file(size, '"drop-%d"' % size, drop_after=after)
        elif kind == "stall":
            size, after = int(parts[1]), int(parts[2])
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.send_header("ETag", '"stall-%d"' % size)
            self.end_headers()
            self.send_body(0, size, stop_at=after)
            try:
                self.wfile.flush()
                self.connection.settimeout(60)
                self.connection.recv(1)  # returns when the client leaves
            except OSError:
                pass
            self.close_connection = True
        elif kind == "status":
            code = int(parts[1])
            headers = [("Retry-After", query["retry_after"][0])] if "retry_after" in query else []
            self.simple(code, b"E" * 1000, headers)
        elif kind == "ignore-range":
            size = int(parts[1])
            self.serve_file(size, '"ignore-%d"' % size, honour_range=False)
        elif kind == "etag-changes":
            size = int(parts[1])
            with FaultHandler.counter_lock:
                FaultHandler.counter += 1
                seed = FaultHandler.counter
            self.serve_file(size, '"v%d"' % seed, seed=seed)
        elif kind == "lie":
            size, claimed = int(parts[1]), int(parts[2])
            self.send_response(200)
            self.send_header("Content-Length", str(claimed))
            self.end_headers()
            self.send_body(0, size)
            self.hard_close()
        elif kind == "redirect-loop":
            self.simple(302, b"around we go\n", [("Location", "/redirect-loop")])
        elif kind == "redirect":
            hops = int(parts[1])
            target = "/".join(parts[2:])
            location = "/redirect/%d/%s" % (hops - 1, target) if hops > 1 else "/" + target
            self.simple(302, b"R" * 500, [("Location", location), ("ETag", '"redirect-hop"')])
        elif kind == "redirect-to":
            self.simple(302, b"elsewhere\n", [("Location", query["url"][0])])
        elif kind == "moved-to":
            self.simple(301, b"moved for good\n", [("Location", query["url"][0])])
        elif kind == "slow":
            size, rate = int(parts[1]), int(parts[2])
            self.serve_file(size, '"slow-%d"' % size, honour_range=False, rate=rate)
        elif kind == "slow-ranges":
            size, rate = int(parts[1]), int(parts[2])
            self.serve_file(size, '"slow-ranges-%d"' % size, rate=rate)
        elif kind == "wrong-range":
            size = int(parts[1])
            requested = parse_range(self.headers.get("Range"), size)
            start = requested[0] // 2 if isinstance(requested, tuple) and requested[0] > 0 else 1
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, size - 1, size))
            self.send_header("Content-Length", str(size - start))
            self.send_header("ETag", '"wrong-%d"' % size)
            self.end_headers()
            self.send_body(start, size)
        elif kind == "wrong-total":
            size = int(parts[1])
            requested = parse_range(self.headers.get("Range"), size)
            start = requested[0] if isinstance(requested, tuple) else 0
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, size - 1, size + 1))
            self.send_header("Content-Length", str(size - start))
            self.end_headers()
            self.send_body(start, size)
        elif kind == "no-length":
            size = int(parts[1])
            close = query.get("close", ["0"])[0] == "1"
            self.send_response(200)
            self.send_header("Content-Type", "audio/mpeg")
            if close:
                self.send_header("Connection", "close")
                self.end_headers()
                self.send_body(0, size)
                self.hard_close()
            else:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                data = content_pattern(0)
                position = 0
                while position < size:
                    count = min(CHUNK, size - position)
                    offset = position % 256
                    self.wfile.write(b"%x\r\n" % count + data[offset:offset + count] + b"\r\n")
                    position += count
                self.wfile.write(b"0\r\n\r\n")
        elif kind == "echo-headers":
            body = json.dumps({k.lower(): v for k, v in self.headers.items()}, sort_keys=True).encode()
            self.simple(200, body, [("Content-Type", "application/json")])
        elif kind == "basic-auth":
            user, password, size = parts[1], parts[2], int(parts[3])
            expected = "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
            if self.headers.get("Authorization") != expected:
                self.simple(401, b"who are you?\n", [("WWW-Authenticate", 'Basic realm="test"')])
            else:
                self.serve_file(size, '"auth-%d"' % size)
        elif kind == "moved-permanently":
            self.simple(301, b"moved\n", [("Location", "/" + "/".join(parts[1:]))])
        elif kind == "hops":
            codes = parts[1].split(",")
            rest = ",".join(codes[1:])
            target = "/".join(parts[2:])
            location = "/hops/%s/%s" % (rest, target) if rest else "/" + target
            self.simple(int(codes[0]), b"hop\n", [("Location", location)])
        elif kind == "relative-redirect":
            self.simple(302, b"relative\n", [("Location", "sub/../file/1000?from=relative")])
        elif kind == "conditional":
            size = int(parts[1])
            etag = '"cond-%d"' % size
            if self.not_modified(etag):
                self.send_response(304)
                self.send_header("ETag", etag)
                self.send_header("Last-Modified", LAST_MODIFIED)
                self.end_headers()
            else:
                self.serve_file(size, etag)
        elif kind == "gone":
            self.simple(410, b"this feed is gone for good\n")
        elif kind == "gone-after":
            with FaultHandler.counter_lock:
                seen = FaultHandler.requests_by_path.get(self.path, 0)
                FaultHandler.requests_by_path[self.path] = seen + 1
            if seen < int(parts[1]):
                self.simple(302, b"still here\n", [("Location", query["url"][0])])
            else:
                self.simple(410, b"this feed is gone for good\n")
        elif kind == "trickle-after":
            with FaultHandler.counter_lock:
                seen = FaultHandler.requests_by_path.get(self.path, 0)
                FaultHandler.requests_by_path[self.path] = seen + 1
            if seen < int(parts[1]):
                self.simple(302, b"still here\n", [("Location", query["url"][0])])
            else:
                self.serve_file(4096 * 600, '"trickle"', honour_range=False, rate=4096)
        elif kind == "endless-headers":
            self.close_connection = True
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: audio/mpeg\r\n")
            filler = b"x" * 1000
            number = 0
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                number += 1
                self.wfile.write(b"X-Filler-%d: %s\r\n" % (number, filler))
        elif kind == "endless-body":
            self.send_response(200)
            self.send_header("Content-Type", "audio/mpeg")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            data = content_pattern(0)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                self.wfile.write(data[:CHUNK])
        elif kind == "gzip-feed":
            self.simple_gzip(GZIP_FEED, "application/rss+xml")
        elif kind == "gzip-bomb":
            self.simple_gzip(b"\0" * int(parts[1]), "application/rss+xml")
        elif kind == "concurrent":
            tag = parts[1]
            with FaultHandler.counter_lock:
                running, peak, done = FaultHandler.concurrency.get(tag, (0, 0, 0))
                FaultHandler.concurrency[tag] = (running + 1, max(peak, running + 1), done)
                FaultHandler.connections.setdefault(tag, set()).add(self.client_address)
            try:
                time.sleep(int(parts[2]) / 1000)
                self.simple(200, GZIP_FEED)
            finally:
                with FaultHandler.counter_lock:
                    running, peak, done = FaultHandler.concurrency[tag]
                    FaultHandler.concurrency[tag] = (running - 1, peak, done + 1)
        elif kind == "concurrent-peak":
            with FaultHandler.counter_lock:
                _, peak, done = FaultHandler.concurrency.get(parts[1], (0, 0, 0))
                connections = len(FaultHandler.connections.get(parts[1], ()))
            self.simple(200, json.dumps({"peak": peak, "done": done, "connections": connections}).encode())
        elif kind == "typed":
            body = TYPED_BODIES[parts[1]]
            self.simple(200, body, content_type=query.get("type", ["audio/mpeg"])[0])
        elif kind == "overflow":
            size, extra = int(parts[1]), int(parts[2])
            self.serve_file(size, '"overflow-%d"' % size)
            self.wfile.flush()
            time.sleep(0.2)  # after the client has taken the response and put the connection back in its cache
            self.wfile.write(b"x" * extra)
        elif self.route_lying(kind, parts):
            pass
        else:
            self.simple(404, b"no such test path\n")

    # Servers that lie about ranges, sizes and validators.

    def request_number(self):
        """How many requests of this exact path came before this one."""
        with FaultHandler.counter_lock:
            seen = FaultHandler.requests_by_path.get(self.path, 0)
            FaultHandler.requests_by_path[self.path] = seen + 1
        return seen

    def send_chunked(self, size, seed=0):
        data = content_pattern(seed)
        position = 0
        while position < size:
            count = min(CHUNK, size - position)
            offset = position % 256
            self.wfile.write(b"%x\r\n" % count + data[offset:offset + count] + b"\r\n")
            position += count
        self.wfile.write(b"0\r\n\r\n")

    def serve_version(self, size, seed, etag, last_modified, drop_after=None):
        """Serves one version of a file, honouring Range but not If-Range (the lie)."""
        requested = parse_range(self.headers.get("Range"), size)
        validators = ([("Last-Modified", last_modified)] if last_modified else []) + ([("ETag", etag)] if etag else [])
        if requested == "unsatisfiable":
            self.simple(416, b"range not satisfiable\n", [("Content-Range", "bytes */%d" % size)] + validators)
            return
        if requested is None:
            start, end = 0, size - 1
            self.send_response(200)
        else:
            start, end = requested
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Content-Type", "audio/mpeg")
        for name, value in validators:
            self.send_header(name, value)
        self.end_headers()
        stop_at = drop_after if drop_after is not None and start < drop_after else None
        if not self.send_body(start, end + 1, seed=seed, stop_at=stop_at):
            self.hard_close()

    def route_lying(self, kind, parts):
        """The lying servers' paths; False for any other path."""
        if kind == "huge-range":
            size = int(parts[1])
            requested = parse_range(self.headers.get("Range"), size)
            start = requested[0] if isinstance(requested, tuple) else 0
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-9223372036854775807/*" % start)
            self.send_header("Content-Length", str(size - start))
            self.send_header("Content-Type", "audio/mpeg")
            self.end_headers()
            self.send_body(start, size)
        elif kind == "unsatisfiable":
            size, after, total = int(parts[1]), int(parts[2]), parts[3]
            if self.headers.get("Range") is not None:
                self.simple(416, b"no\n", [("Content-Range", "bytes */%s" % total), ("ETag", '"unsat-%d"' % size)])
            else:
                self.serve_file(size, '"unsat-%d"' % size, drop_after=after)
        elif kind == "swap":
            mode, size_a, size_b, after = parts[1], int(parts[2]), int(parts[3]), int(parts[4])
            with_etag, with_date = mode == "etag", mode in ("etag", "lastmod")
            if self.request_number() == 0:
                date = LAST_MODIFIED if with_date else None
                self.serve_version(size_a, 0, '"A"' if with_etag else None, date, drop_after=after)
            else:
                date = "Wed, 02 Oct 2024 12:00:00 GMT" if with_date else None
                self.serve_version(size_b, 1, '"B"' if with_etag else None, date)
        elif kind == "cr-validator":
            field, size, after = parts[1], int(parts[2]), int(parts[3])
            if self.request_number() == 0:
                self.send_response(200)
                self.send_header("Content-Length", str(size))
                self.send_header("Content-Type", "audio/mpeg")
                # http.server writes the value as given: the CR reaches the client bare, inside the line.
                if field == "etag":
                    self.send_header("ETag", '"cr\rtag"')
                else:
                    self.send_header("Last-Modified", "Tue, 01 Oct 2024\r12:00:00 GMT")
                self.end_headers()
                self.send_body(0, size, stop_at=after)
                self.hard_close()
            else:
                self.serve_file(size, '"file-%d"' % size)
        elif kind == "cr-feed":
            if self.request_number() == 0:
                validators = [("ETag", '"feed\rtag"'), ("Last-Modified", "Tue, 01 Oct 2024\r12:00:00 GMT")]
            else:
                validators = [("ETag", '"feed-tag"'), ("Last-Modified", LAST_MODIFIED)]
            self.simple(200, GZIP_FEED, validators, content_type="application/rss+xml")
        elif kind == "garbage-status":
            lines = [b"HTTP/9.9 200 OK", b"HTTP/1.1 2000 OK", b"HTTP/1.1 OK", b"SPDY/1 200 OK", b"\x00\x01binary"]
            self.close_connection = True
            self.wfile.write(lines[int(parts[1]) % len(lines)] + b"\r\nContent-Length: 5\r\n\r\nhello")
            self.hard_close()
        elif kind == "huge-header":
            self.simple(200, b"hello", [("X-Huge", "h" * int(parts[1]))])
        elif kind == "huge-location":
            self.simple(302, b"elsewhere", [("Location", "/file/10?" + "l" * int(parts[1]))])
        elif kind == "two-lengths":
            size, first = int(parts[1]), int(parts[2])
            self.send_response(200)
            self.send_header("Content-Length", str(first))
            self.send_header("Content-Length", str(size))
            self.send_header("Content-Type", "audio/mpeg")
            self.end_headers()
            self.send_body(0, size)
        elif kind == "chunked-length":
            size, claimed = int(parts[1]), int(parts[2])
            self.send_response(200)
            self.send_header("Content-Length", str(claimed))
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Content-Type", "audio/mpeg")
            self.end_headers()
            self.send_chunked(size)
        else:
            return False
        return True

    def not_modified(self, etag):
        """RFC 9110 13.1.2 and 13.1.3: If-None-Match wins over If-Modified-Since."""
        if_none_match = self.headers.get("If-None-Match")
        if if_none_match is not None:
            tags = [tag.strip() for tag in if_none_match.split(",")]
            return "*" in tags or etag in tags or ("W/" + etag) in tags
        since = self.headers.get("If-Modified-Since")
        if since is None:
            return False
        try:
            return email.utils.parsedate_to_datetime(since) >= email.utils.parsedate_to_datetime(LAST_MODIFIED)
        except (TypeError, ValueError):
            return False


class FaultServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # Clients that leave mid-request (a daemon killed on purpose, a transfer cancelled) are part of the tests;
        # anything else is still reported.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lifetime", type=float, default=600, help="seconds before exiting on its own")
    arguments = parser.parse_args()

    server = FaultServer(("127.0.0.1", 0), FaultHandler)
    print(server.server_address[1], flush=True)

    def exit_when_parent_leaves():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except OSError:
            pass
        os._exit(0)

    threading.Thread(target=exit_when_parent_leaves, daemon=True).start()
    threading.Timer(arguments.lifetime, lambda: os._exit(0)).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
