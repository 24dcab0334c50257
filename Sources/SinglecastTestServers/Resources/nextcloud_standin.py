#!/usr/bin/env python3
"""A STAND-IN for the Nextcloud gpoddersync app, not the app itself (python3 standard library only).

No Nextcloud can be installed here, so this follows the app's documented endpoints (github.com/thrillfall/
nextcloud-gpodder, README "API"), keeping state in memory, to test singlecast's nextcloud flavour:

  GET  /index.php/apps/gpoddersync/subscriptions?since=T          {"add": [...], "remove": [...], "timestamp": T'}
  POST /index.php/apps/gpoddersync/subscription_change/create     {"add": [...], "remove": [...]} -> {"timestamp"}
  GET  /index.php/apps/gpoddersync/episode_action?since=T         {"actions": [...], "timestamp": T'}
  POST /index.php/apps/gpoddersync/episode_action/create          [actions] -> {"timestamp"}

Every request needs HTTP Basic authentication as --user/--password (else 401). Listens on 127.0.0.1 on a free port
and prints that port; stops when stdin reaches EOF or after --lifetime seconds. Requests go to --log, one
"METHOD path status" line each.
"""

import argparse
import base64
import http.server
import json
import sys
import threading
import time
import urllib.parse

PREFIX = "/index.php/apps/gpoddersync/"


class State:
    lock = threading.Lock()
    subscriptions = {}  # url -> (subscribed, changed at)
    actions = []  # (stored at, action)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    user = "phone-owner"
    password = "secret"
    log_path = None

    def log_message(self, format, *args):
        pass

    def answer(self, code, value):
        body = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if self.log_path:
            with State.lock, open(self.log_path, "a") as log:
                log.write(f"{self.command} {urllib.parse.urlsplit(self.path).path} {code}\n")

    def authorized(self):
        expected = "Basic " + base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        return self.headers.get("Authorization") == expected

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"null")

    def do_GET(self):
        if not self.authorized():
            return self.answer(401, {"message": "Unauthorized"})
        url = urllib.parse.urlsplit(self.path)
        since = int(urllib.parse.parse_qs(url.query).get("since", ["0"])[0])
        now = int(time.time())
        with State.lock:
            if url.path == PREFIX + "subscriptions":
                add = [u for u, (on, at) in State.subscriptions.items() if on and at > since]
                remove = [u for u, (on, at) in State.subscriptions.items() if not on and at > since]
                value = {"add": add, "remove": remove, "timestamp": now}
            elif url.path == PREFIX + "episode_action":
                value = {"actions": [a for at, a in State.actions if at > since], "timestamp": now}
            else:
                value = None
        if value is None:
            return self.answer(404, {"message": "not found"})
        self.answer(200, value)

    def do_POST(self):
        if not self.authorized():
            return self.answer(401, {"message": "Unauthorized"})
        path = urllib.parse.urlsplit(self.path).path
        body = self.body()
        now = int(time.time())
        with State.lock:
            if path == PREFIX + "subscription_change/create":
                for url in body.get("add", []):
                    State.subscriptions[url] = (True, now)
                for url in body.get("remove", []):
                    State.subscriptions[url] = (False, now)
            elif path == PREFIX + "episode_action/create":
                for action in body:
                    State.actions.append((now, action))
            else:
                return self.answer(404, {"message": "not found"})
        self.answer(200, {"timestamp": now})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lifetime", type=int, default=600)
    parser.add_argument("--user", default="phone-owner")
    parser.add_argument("--password", default="secret")
    parser.add_argument("--log", default=None)
    arguments = parser.parse_args()
    Handler.user, Handler.password, Handler.log_path = arguments.user, arguments.password, arguments.log
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    sys.stdout.write(f"{server.server_address[1]}\n")
    sys.stdout.flush()

    def stop_at_eof():
        while sys.stdin.buffer.read(1):
            pass
        server.shutdown()

    def expire():
        time.sleep(arguments.lifetime)
        server.shutdown()

    threading.Thread(target=stop_at_eof, daemon=True).start()
    threading.Thread(target=expire, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
