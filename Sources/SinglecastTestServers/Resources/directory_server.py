#!/usr/bin/env python3
"""A stand-in for Apple's podcast directory that serves the fixtures in apple/ (python3 standard library only).

Listens on 127.0.0.1 on a free port and prints that port on stdout. It stops when stdin reaches EOF (the test
that started it went away) or after --lifetime seconds, whichever comes first. Every request's path and query
is appended to --log, one line each, before it is answered.

Paths:
  /search?media=podcast&entity=podcast&term=T&limit=N&country=CC
      The query is checked: media and entity must be podcast, limit a number, country two letters, Accept
      application/json, and the raw term exactly percent-encoded as RFC 3986 asks (only A-Z a-z 0-9 - . _ ~
      left as they are, so a space is %20, never +). A wrong query gets 400 with the reason. By term
      (case-insensitive):
        slow <anything>  waits --delay seconds, then answers like <anything>
        malformed        a truncated JSON document
        html             an HTML page
        error            HTTP 500
        wrong shape      JSON without a results array
        empty            search-empty.json
        anything else    search-podcast.json, as text/javascript like Apple
  /lookup?id=N&entity=podcast    lookup-podcast.json for 1470039059, a result without a feed for 1641171534,
                                 an empty result for any other id
  With --feed-url, every podcast with a feed in the search and lookup answers has that feed instead.
  /api/v2/<cc>/podcasts/top/<n>/podcasts.json   top-podcasts-v2.json
  /<cc>/rss/toppodcasts/limit=<n>/json          top-podcasts-legacy.json
"""

import argparse
import http.server
import json
import os
import re
import sys
import threading
import time
import urllib.parse

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "apple")
UNRESERVED = re.compile(r"^(?:[A-Za-z0-9\-._~]|%[0-9A-F]{2})*$")


def fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as file:
        data = file.read()
    if DirectoryHandler.feed_url and name in ("search-podcast.json", "lookup-podcast.json"):
        # Every podcast that has a feed gets --feed-url, so a client subscribes to a feed the test serves.
        document = json.loads(data)
        for result in document["results"]:
            if "feedUrl" in result:
                result["feedUrl"] = DirectoryHandler.feed_url
        data = json.dumps(document).encode()
    return data


class DirectoryHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "singlecast-directory-server"
    log_path = None
    log_lock = threading.Lock()
    delay = 3.0
    feed_url = None

    def log_message(self, format, *args):  # quiet: tests read the request log, not stderr
        pass

    def answer(self, code, body, content_type="text/javascript; charset=utf-8"):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def refuse(self, reason):
        self.answer(400, json.dumps({"errorMessage": reason}).encode(), "application/json")

    def do_GET(self):
        if DirectoryHandler.log_path:
            with DirectoryHandler.log_lock, open(DirectoryHandler.log_path, "a") as log:
                log.write(self.path + "\n")
        url = urllib.parse.urlsplit(self.path)
        try:
            self.route(url)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def route(self, url):
        parts = [p for p in url.path.split("/") if p]
        raw = dict(pair.partition("=")[::2] for pair in url.query.split("&") if pair)
        if parts == ["search"]:
            self.search(raw)
        elif parts == ["lookup"]:
            if raw.get("entity") != "podcast":
                return self.refuse("entity must be podcast")
            podcast = raw.get("id")
            if podcast == "1470039059":
                self.answer(200, fixture("lookup-podcast.json"))
            elif podcast == "1641171534":
                results = json.loads(fixture("search-podcast.json"))["results"]
                without_feed = [r for r in results if str(r["collectionId"]) == podcast]
                self.answer(200, json.dumps({"resultCount": 1, "results": without_feed}).encode())
            else:
                self.answer(200, fixture("search-empty.json"))
        elif len(parts) == 7 and parts[:2] == ["api", "v2"] and parts[3:5] == ["podcasts", "top"]:
            self.answer(200, fixture("top-podcasts-v2.json"), "application/json")
        elif len(parts) == 5 and parts[1:3] == ["rss", "toppodcasts"] and parts[3].startswith("limit="):
            self.answer(200, fixture("top-podcasts-legacy.json"))
        else:
            self.answer(404, b"no such directory path\n", "text/plain")

    def search(self, raw):
        for name in ("media", "entity"):
            if raw.get(name) != "podcast":
                return self.refuse("%s must be podcast, got %r" % (name, raw.get(name)))
        if not raw.get("limit", "").isdigit():
            return self.refuse("limit must be a number")
        if not re.fullmatch(r"[A-Za-z]{2}", raw.get("country", "")):
            return self.refuse("country must be two letters")
        if self.headers.get("Accept") != "application/json":
            return self.refuse("Accept must be application/json, got %r" % self.headers.get("Accept"))
        encoded = raw.get("term", "")
        try:
            term = urllib.parse.unquote(encoded, errors="strict")
        except UnicodeDecodeError:
            return self.refuse("term is not UTF-8: %r" % encoded)
        if not UNRESERVED.match(encoded) or urllib.parse.quote(term, safe="-._~") != encoded:
            return self.refuse("term is not percent-encoded as RFC 3986 asks: %r" % encoded)
        term = term.lower()
        if term.startswith("slow "):
            time.sleep(DirectoryHandler.delay)
            term = term[5:]
        if term == "malformed":
            self.answer(200, fixture("search-podcast.json")[:200])
        elif term == "html":
            self.answer(200, b"<!DOCTYPE html><html><body>Service Unavailable</body></html>", "text/html")
        elif term == "error":
            self.answer(500, b"internal error\n", "text/plain")
        elif term == "wrong shape":
            self.answer(200, b'{"resultCount": 0, "errorMessage": "no results array"}')
        elif term == "empty":
            self.answer(200, fixture("search-empty.json"))
        else:
            self.answer(200, fixture("search-podcast.json"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lifetime", type=float, default=600, help="seconds before exiting on its own")
    parser.add_argument("--log", help="file that receives every request's path and query")
    parser.add_argument("--delay", type=float, default=3.0, help="seconds a 'slow ...' search waits")
    parser.add_argument("--feed-url", help="the feed URL every podcast with a feed gets in search and lookup answers")
    arguments = parser.parse_args()
    DirectoryHandler.feed_url = arguments.feed_url
    DirectoryHandler.log_path = arguments.log
    DirectoryHandler.delay = arguments.delay

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), DirectoryHandler)
    server.daemon_threads = True
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
